"""Running one research call for a front end: the pipeline, then the critique scheduled as the CLI does.

A caller's cancellation (an MCP client's, a web page's Cancel button) reaches the run the way
Ctrl-C reaches ``research-agent run``, but only while a cancel can still undo the run. The report
and its run record are written in one step that no cancel can split (the pipeline's
``on_written`` hears it in that step), so a :class:`ResearchCall` is either

* cancelled before that step: the pipeline unwinds as it always does, and nothing of the run is
  written (temp files removed, what the run owns closed); its status is ``cancelled``;
* or past it: a cancel comes too late to unwrite anything, so it is not sent at all. The run goes
  on to its end (closing what it owns, scheduling its critique) and its status is ``done``, with
  :attr:`ResearchCall.cancel_late` set so the front end can say the report stays, and where.

No path says "wrote nothing" of a run that wrote its report, nor leaves a written report without
its critique scheduled. The statuses are the run journal's words (running, done, failed, cancelled),
and the run's journal entry says the same (:mod:`research_agent.journal`: ``journalling`` names the
front end, and the run to resume when the call continues one).

:func:`unwound_on_cancel` waits for that unwinding, shielded from a server's repeated
cancellation (anyio cancel scopes cancel again and again), before the call ends.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

import anyio

from ..config import Settings
from ..journal.run_journal import Journalling
from ..memory.critique.schedule import Scheduled, after_report
from ..pipeline import research as pipeline_research
from ..progress import Progress
from ..results import ResearchResult

__all__ = ["ResearchCall", "unwound_on_cancel"]

T = TypeVar("T")
Research = Callable[..., Awaitable[ResearchResult]]  # pipeline.research's signature
Schedule = Callable[[Path, Settings], Scheduled]


async def unwound_on_cancel(work: Awaitable[T], *, stop: Callable[[], bool] | None = None) -> T:
    """Await ``work`` in a task of its own. When this is cancelled, stop the task (``stop``; by
    default, cancel it once) and wait, shielded, until it has unwound or finished. A task that
    ended cancelled, or failed as it unwound, lets the cancellation go on; one that finished
    anyway (it had finished already, or ``stop`` found it past the point where a cancel undoes
    anything) gives its result, since its work is done and calling it cancelled would be wrong.
    Under an anyio cancel scope the caller's next checkpoint is cancelled all the same."""
    task = asyncio.ensure_future(work)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        sent = stop() if stop is not None else task.cancel()
        with anyio.CancelScope(shield=True):
            await asyncio.wait({task})
        if task.cancelled() or (sent and task.exception() is not None):
            if not task.cancelled():
                task.exception()  # a run that failed as it unwound: retrieved, since nobody is left to tell
            raise
        return task.result()


class ResearchCall:
    """One research run for a front end, started at once: ``question`` researched as
    ``research-agent run`` does (``research``, the pipeline's by default), then its critique
    asked of memory in a worker thread (``schedule``: waiting for a critique runs an event loop
    of its own). :meth:`cancel` stops it only while that undoes it (see the module's docstring)."""

    def __init__(
        self,
        question: str,
        settings: Settings,
        progress: Progress,
        *,
        research: Research = pipeline_research,
        schedule: Schedule = after_report,
        journalling: Journalling | None = None,
    ) -> None:
        self.written: ResearchResult | None = None  # set in the step that wrote the report
        self.cancel_late = False  # a cancel came once the report was written
        self.run_id = ""  # the run's id, once its journal entry is written
        self.named = asyncio.Event()  # set then
        self._schedule = schedule
        self._journalling = journalling or Journalling()
        self._heard = self._journalling.on_started
        self._journalling = replace(self._journalling, on_started=self._on_started)
        self.task: asyncio.Task[tuple[ResearchResult, Scheduled]] = asyncio.ensure_future(
            self._run(question, settings, progress, research)
        )

    def _on_started(self, run_id: str) -> None:
        self.run_id = run_id
        self.named.set()
        if self._heard is not None:
            self._heard(run_id)

    async def _run(
        self, question: str, settings: Settings, progress: Progress, research: Research
    ) -> tuple[ResearchResult, Scheduled]:
        result = await research(question, settings=settings, progress=progress, on_written=self._on_written,
                                journalling=self._journalling)  # fmt: skip
        scheduled = await asyncio.to_thread(self._schedule, result.run_record_path, settings)
        return result, scheduled

    def _on_written(self, result: ResearchResult) -> None:
        self.written = result

    @property
    def status(self) -> str:
        """``running``, ``done``, ``failed`` or ``cancelled`` (a cancel after the write: ``done``)."""
        if not self.task.done():
            return "running"
        if self.task.cancelled():
            return "cancelled"
        return "failed" if self.task.exception() is not None else "done"

    def cancel(self) -> bool:
        """Cancel the run if its report is not written yet: it unwinds writing nothing (True). Once
        the report is written the cancel comes too late and is not sent: the run goes on to its end
        and :attr:`cancel_late` says a cancel came (False, as for a run that has ended)."""
        if self.task.done():
            return False
        if self.written is not None:
            self.cancel_late = True
            return False
        return self.task.cancel()

    async def outcome(self) -> tuple[ResearchResult, Scheduled]:
        """The result and the critique's scheduling once the run ends. This wait being cancelled
        (a client gone, a server stopping) cancels the run as :meth:`cancel` does."""
        return await unwound_on_cancel(self.task, stop=self.cancel)
