"""A batch's progress on stderr: one bar over the questions and the running questions' stages.

On a terminal it is one live block, redrawn a few times a second: the bar (done, failed,
running, an estimate of the time left) and, below it, each running question with the stage
its run is in (from the run's :class:`~research_agent.service.events.EventLog`). Without a
terminal it prints one line per question that ends, and nothing else.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from ...batch.state import Entry
from ...service.events import EventLog
from ..terminal import visible_line

__all__ = ["BatchView", "short_question"]

QUESTION_CHARS = 60


@dataclass
class _Running:
    entry: Entry
    events: EventLog
    note: str = ""


@dataclass
class BatchView:
    """A BatchWatcher that draws on ``console`` (see the module docstring)."""

    console: Console
    total: int
    done: int = 0
    failed: int = 0
    parallel: int = 1
    running: dict[str, _Running] = field(default_factory=dict)
    _started: float = field(default_factory=time.monotonic)
    _ended_here: int = 0
    _live: Live | None = None

    def __post_init__(self) -> None:
        if self.console.is_terminal:
            self._live = Live(console=self.console, get_renderable=self._render, refresh_per_second=4,
                              transient=True, redirect_stdout=False, redirect_stderr=False)  # fmt: skip
            self._live.start()

    def stop(self) -> None:
        """Stop drawing (the block is cleared); safe to call more than once."""
        if self._live is not None:
            self._live.stop()
            self._live = None

    # --- BatchWatcher --------------------------------------------------------------------

    def started(self, entry: Entry, events: EventLog) -> None:
        self.running[entry.key] = _Running(entry, events)

    def retrying(self, entry: Entry, delay: float) -> None:
        running = self.running.get(entry.key)
        if running is not None:
            running.note = f"retry in {delay:.0f} s after: {entry.error}"

    def ended(self, entry: Entry) -> None:
        self.running.pop(entry.key, None)
        if entry.state not in ("done", "failed"):
            return  # back to pending: the batch is stopping
        self._ended_here += 1
        self.done += entry.state == "done"
        self.failed += entry.state == "failed"
        if self._live is None:
            self.console.print(Text(f"[{self.done + self.failed}/{self.total}] {self.ended_line(entry)}"), soft_wrap=True)

    def ended_line(self, entry: Entry) -> str:
        """What is printed, without a terminal, of a question that ended (after its number)."""
        what = f"done ({entry.run_id})" if entry.state == "done" else f"failed: {entry.error}"
        return f"{short_question(entry.question)}: {what}"

    # --- drawing ---------------------------------------------------------------------------

    def eta(self) -> str:
        """The time left, from the pace of the questions that ended in this session."""
        left = self.total - self.done - self.failed
        if not self._ended_here or not left:
            return ""
        seconds = int((time.monotonic() - self._started) / self._ended_here * left)
        return f"~{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d} left"

    def _render(self) -> RenderableType:
        head = Table.grid(padding=(0, 1))
        head.add_row(
            ProgressBar(total=max(1, self.total), completed=self.done + self.failed, width=30),
            Text(f"{self.done + self.failed}/{self.total} · {self.done} done · {self.failed} failed · "
                 f"{len(self.running)} running {self.eta()}".rstrip()),
        )  # fmt: skip
        lines: list[RenderableType] = [head]
        for running in self.running.values():
            doing = running.note or running.events.current or "starting"
            lines.append(Text(f"  {running.entry.line}: {short_question(running.entry.question)} - {visible_line(doing)}",
                              no_wrap=True, overflow="ellipsis"))  # fmt: skip
        return Group(*lines)


def short_question(question: str) -> str:
    text = visible_line(question)
    return text if len(text) <= QUESTION_CHARS else text[: QUESTION_CHARS - 1] + "\u2026"
