"""``run --review-plan``: the model's plan shown on the terminal, accepted, edited in ``$EDITOR``, or stopped.

:class:`TerminalReview` is the run's :data:`~research_agent.plans.steering.PlanReview`. It is
given how to show a line, ask a question and edit a text (:func:`terminal_review` gives it the
terminal's: stderr, stdin, the person's editor), so a test passes its own. The person answers

* ``a`` (or Enter): the plan as it is;
* ``e``: the sub-queries open in the editor, one a line; what is saved is checked as any plan is
  (:func:`research_agent.plans.plan_from_text`). A refused edit is said, and the next edit starts
  from the person's text. The edited plan is shown and asked about again;
* ``s`` (or the end of input, or an empty list saved): the run stops, nothing searched or written
  (:class:`~research_agent.errors.Cancelled`).

The questions are asked in a thread of their own (a daemon: Ctrl-C ends the run at once, with
no thread left waiting for a line that never comes).
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
from collections.abc import Callable

import click

from ...errors import Cancelled, InputError
from ...plans import ResearchPlan, editable_text, plan_from_text
from ..terminal import one_line, visible

__all__ = ["TerminalReview", "terminal_review", "on_a_terminal", "STOPPED"]

STOPPED = "stopped at the plan review: nothing was searched or written"
_ACCEPT, _EDIT, _STOP = ("", "a", "accept", "y", "yes"), ("e", "edit"), ("s", "stop", "q", "quit", "n", "no")


class TerminalReview:
    """A person's review of the plan: ``show`` prints a line, ``ask`` prints a question and gives the
    answer (None at the end of input), ``edit`` gives the edited text (None when nothing was saved)."""

    def __init__(
        self,
        *,
        show: Callable[[str], None],
        ask: Callable[[str], str | None],
        edit: Callable[[str], str | None],
        before: Callable[[], None] = lambda: None,
    ) -> None:
        self.show, self.ask, self.edit, self.before = show, ask, edit, before

    async def __call__(self, plan: ResearchPlan) -> ResearchPlan:
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[ResearchPlan] = loop.create_future()

        def settle(outcome: ResearchPlan | BaseException) -> None:
            if answer.done():
                return
            if isinstance(outcome, BaseException):
                answer.set_exception(outcome)
            else:
                answer.set_result(outcome)

        def work() -> None:
            try:
                outcome: ResearchPlan | BaseException = self.review(plan)
            except Exception as exc:  # said to the run, which unwinds as for any error
                outcome = exc
            with contextlib.suppress(RuntimeError):  # the run ended (Ctrl-C), its loop with it: nobody waits
                loop.call_soon_threadsafe(settle, outcome)

        self.before()
        threading.Thread(target=work, name="plan-review", daemon=True).start()
        try:
            return await answer
        except asyncio.CancelledError:  # Ctrl-C at the question: what it says goes on a line of its own
            self.show("")
            raise

    def review(self, plan: ResearchPlan) -> ResearchPlan:
        """The plan the person leaves (see the module docstring); Cancelled when they stop."""
        current, draft = plan, None
        self._shown(current)
        while True:
            said = self.ask("Search this plan? [a]ccept, [e]dit, [s]top: ")
            choice = None if said is None else said.strip().lower()
            if choice is None or choice in _STOP:
                raise Cancelled(STOPPED)
            if choice in _ACCEPT:
                return current
            if choice not in _EDIT:
                self.show("Answer a (accept), e (edit) or s (stop).")
                continue
            text = self.edit(draft if draft is not None else editable_text(current))
            if text is None:
                self.show("Nothing was saved: the plan is as it was.")
                continue
            try:
                edited = plan_from_text(current, text)
            except InputError as exc:
                self.show(f"! {one_line(exc)}")
                draft = f"# Refused: {one_line(exc)}\n" + "".join(
                    f"{line}\n" for line in text.splitlines() if not line.startswith("# Refused: ")
                )
                continue
            if edited is None:
                raise Cancelled(f"{STOPPED} (the edited plan has no sub-query)")
            current, draft = edited, None
            self._shown(current)

    def _shown(self, plan: ResearchPlan) -> None:
        self.show(f"The plan ({plan.domain}):")
        for n, query in enumerate(plan.sub_queries, start=1):
            self.show(f"  {n}. {visible(query)}")


def on_a_terminal() -> bool:
    """Whether a person can be asked: stdin and stderr are both a terminal."""
    return sys.stdin.isatty() and sys.stderr.isatty()


def _ask(question: str) -> str | None:
    sys.stderr.write(question)
    sys.stderr.flush()
    line = sys.stdin.readline()
    return line if line else None


def _show(line: str) -> None:
    sys.stderr.write(f"{line}\n")
    sys.stderr.flush()


def _edit(text: str) -> str | None:
    """``text`` edited in the person's editor (click's choice: ``$VISUAL``, ``$EDITOR``, else a common
    one): the saved text, or None when nothing was saved or the editor failed (said on stderr)."""
    try:
        return click.edit(text, extension=".txt", require_save=True)
    except click.ClickException as exc:  # the editor could not be started, or failed
        _show(f"! {one_line(exc.format_message())}: set $EDITOR to an editor that works")
        return None


def terminal_review(before: Callable[[], None]) -> TerminalReview:
    """The review on this terminal; ``before``: what to do first (stop the spinner)."""
    return TerminalReview(show=_show, ask=_ask, edit=_edit, before=before)
