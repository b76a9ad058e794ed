"""The progress of a run on stderr: a spinner on a terminal, plain lines otherwise."""

from __future__ import annotations

from rich.console import Console

from ..progress import stream_text
from .terminal import markup

__all__ = ["RichProgress", "waiting_text", "cost_text"]


def waiting_text(seconds: int, *, reading: bool = False) -> str:
    """The progress line's part for a model call in flight, e.g. ``waiting for the model, 45 s``
    (``reading the prompt, 45 s`` while a writer's request has no token yet)."""
    if reading:
        return f"reading the prompt, {seconds} s" if seconds > 0 else "reading the prompt"
    return f"waiting for the model, {seconds} s" if seconds > 0 else ""


def cost_text(cost_usd: float | None) -> str:
    """``~$0.0123``, or ``cost unknown`` when a price was unknown (never shown as $0)."""
    return "cost unknown" if cost_usd is None else f"~${cost_usd:.4f}"


class RichProgress:
    """Live progress on stderr: a spinner on a terminal, plain lines otherwise.

    While the writer streams, the line shows its tokens and rate instead of the wait.
    Without a terminal a long wait for the model is printed once every
    ``WAIT_LINE_EVERY`` seconds (with the tokens so far when it streams), and a finished
    stream's tokens and rate once, so logs show a slow model is not a hang.
    """

    WAIT_LINE_EVERY = 30

    def __init__(self, console: Console) -> None:
        self.console = console
        self.values: dict[str, int] = {}
        self.current = ""
        self.status = console.status("starting") if console.is_terminal else None
        if self.status is not None:
            self.status.start()

    def _line(self) -> str:
        v = self.values
        bits = [self.current]
        if "sub_queries" in v:
            bits.append(f"sub-queries {v['sub_queries']}")
        if "found" in v:
            bits.append(f"sources found {v['found']}")
        if "scored" in v:
            bits.append(f"kept {v.get('kept', 0)}/{v['scored']}")
        if "tokens" in v:
            bits.append(f"tokens {v['tokens']:,}")
        bits.append(self._model_text())
        return markup(" · ".join(b for b in bits if b))

    def _model_text(self) -> str:
        """What the model is doing: streaming (tokens and rate), or keeping us waiting."""
        streamed = self.values.get("streamed", 0)
        if streamed > 0:
            return stream_text(streamed, self.values.get("streamed_ms", 0))
        return waiting_text(self.values.get("waiting", 0), reading=bool(self.values.get("reading")))

    def stage(self, name: str, detail: str = "") -> None:
        self.current = f"{name}: {detail}" if detail else name
        if self.status is not None:
            self.status.update(self._line())
        else:
            self.console.print(f"… {markup(self.current)}", soft_wrap=True, highlight=False)

    def counts(self, **values: int) -> None:
        before = self.values.get("waiting", 0)
        streamed_before = self.values.get("streamed", 0)
        self.values.update(values)
        if self.status is not None:
            self.status.update(self._line())
            return
        waited = self.values.get("waiting", 0)
        if waited // self.WAIT_LINE_EVERY > before // self.WAIT_LINE_EVERY:
            self.console.print(f"… {markup(self.current)}: {self._model_text()}", soft_wrap=True, highlight=False)
        if streamed_before > 0 and values.get("streamed") == 0:  # a stream ended: its tokens and rate, once
            shown = stream_text(streamed_before, self.values.get("streamed_ms", 0))
            self.console.print(f"… {markup(self.current)}: {shown}", soft_wrap=True, highlight=False)

    def note(self, message: str) -> None:
        self.console.print(f"[yellow]![/yellow] {markup(message)}", soft_wrap=True, markup=True, highlight=False)

    def interrupted(self) -> str:
        """What Ctrl-C leaves behind, by the stage it came in. The spinner is stopped first, so
        that the message gets a line of its own."""
        self.stop()
        if self.current.startswith("write"):
            return "interrupted while writing: any report in the reports folder is complete"
        return "interrupted: stopped before writing anything"

    def stop(self) -> None:
        """Stop the spinner (its line is cleared); safe to call more than once."""
        if self.status is not None:
            self.status.stop()
            self.status = None
