"""The progress of a run on stderr: a spinner on a terminal, plain lines otherwise."""

from __future__ import annotations

from rich.console import Console

from .terminal import markup

__all__ = ["RichProgress", "waiting_text", "cost_text"]


def waiting_text(seconds: int) -> str:
    """The progress line's part for a model call in flight, e.g. ``waiting for the model, 45 s``."""
    return f"waiting for the model, {seconds} s" if seconds > 0 else ""


def cost_text(cost_usd: float | None) -> str:
    """``~$0.0123``, or ``cost unknown`` when a price was unknown (never shown as $0)."""
    return "cost unknown" if cost_usd is None else f"~${cost_usd:.4f}"


class RichProgress:
    """Live progress on stderr: a spinner on a terminal, plain lines otherwise.

    Without a terminal a long wait for the model is printed once every
    ``WAIT_LINE_EVERY`` seconds, so logs show a slow model is not a hang.
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
        bits.append(waiting_text(v.get("waiting", 0)))
        return markup(" · ".join(b for b in bits if b))

    def stage(self, name: str, detail: str = "") -> None:
        self.current = f"{name}: {detail}" if detail else name
        if self.status is not None:
            self.status.update(self._line())
        else:
            self.console.print(f"… {markup(self.current)}", soft_wrap=True, highlight=False)

    def counts(self, **values: int) -> None:
        before = self.values.get("waiting", 0)
        self.values.update(values)
        if self.status is not None:
            self.status.update(self._line())
            return
        waited = self.values.get("waiting", 0)
        if waited // self.WAIT_LINE_EVERY > before // self.WAIT_LINE_EVERY:
            self.console.print(f"… {self.current}: {waiting_text(waited)}", soft_wrap=True, highlight=False)

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
