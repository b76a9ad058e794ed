"""The runs this workbench started: research runs, and critiques retried from the memory page.

Each :class:`Job` holds a run slot of the shared :class:`~research_agent.service.Service` from
the moment it is asked for (one more than ``--max-runs`` is refused at once with
:class:`~research_agent.service.Busy`) until it ends, and reports through an
:class:`~research_agent.service.events.EventLog`, which a run page follows over server-sent
events, replayed from the start for a page opened late or reloaded.

A job is named by a random key (``/runs/<key>``), never by anything the person typed; a research
job is also found by its run's id once the run has one (``/runs/<run id>``, a page that outlives
the server: :mod:`.journal_pages` shows the run from its journal entry once the job is gone). Cancelling
a research job stops its :class:`~research_agent.service.runs.ResearchCall`: before the report is
written the pipeline unwinds as it does on Ctrl-C and nothing of the run is written (``cancelled``);
once it is written the cancel comes too late, the run goes on to its end and the job ends
``done`` with the report's link and a note that the cancel came after the write. The board keeps the newest :data:`KEEP` jobs; a job of an earlier server
process is gone (its report, if any, is in the reports folder). A job asked to "review the plan
first" holds the run's :class:`~research_agent.web.plans.WaitingReview` (:attr:`Job.review`).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import secrets
from collections.abc import Awaitable, Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal

from ..config import Settings
from ..errors import ResearchError, error_message
from ..journal.run_journal import Journalling
from ..memory.critique.schedule import after_report
from ..pipeline import research as pipeline_research
from ..service import Service
from ..service.events import EventLog
from ..service.runs import ResearchCall, Schedule
from ..text.controls import one_line
from .plans import WaitingReview

__all__ = ["Job", "JobBoard", "KEEP", "CANCELLED", "CANCEL_LATE"]

log = logging.getLogger(__name__)

KEEP = 200
Work = Callable[[EventLog], Awaitable[str]]  # runs the job; gives the run id it made or worked on
CANCELLED = "cancelled before its report was written: the run stopped and nothing of it was written"
CANCEL_LATE = "The cancel came after the report was written, so the run finished: the report stays."
CANCEL_LATE_SHORT = "the cancel came after the report was written"


JobKind = Literal["research", "critique"]


@dataclass
class Job:
    """One run started here: what was asked (``title``, and ``shown``: its options as a person
    reads them), its events, and once it ended, the run id it wrote (``run_id``) or why not."""

    key: str
    kind: JobKind
    title: str
    shown: tuple[tuple[str, str], ...]
    log: EventLog
    started: datetime
    task: asyncio.Future[None] | None = None
    call: ResearchCall | None = None  # a research job's run
    review: WaitingReview | None = None  # the plan review it pauses for ("review the plan first")
    run_id: str = ""
    error: str = ""
    notes: list[str] = field(default_factory=list)
    named: asyncio.Event = field(default_factory=asyncio.Event)  # set once the run has its id, or the job ended

    @property
    def outcome(self) -> str:
        """``running``, or how it ended: ``done``, ``failed`` or ``cancelled``."""
        return self.log.ended.outcome if self.log.ended is not None else "running"

    @property
    def cancellable(self) -> bool:
        return self.kind == "research" and self.outcome == "running"


class JobBoard:
    """The jobs of one workbench, newest last, sharing ``service`` 's run slots."""

    def __init__(self, service: Service, *, keep: int = KEEP, schedule: Schedule = after_report) -> None:
        self.service = service
        self.keep = keep
        self.schedule = schedule  # asks memory for a finished run's critique
        self._jobs: dict[str, Job] = {}

    def get(self, key: str) -> Job | None:
        """The job of ``key``, or the research job of run ``key``."""
        return self._jobs.get(key) or next(
            (j for j in self._jobs.values() if j.kind == "research" and j.run_id and j.run_id == key), None
        )

    async def named(self, job: Job) -> str:
        """The run id of a research job once its run has one (its journal entry is written), or the
        job's key when it ended without one."""
        await job.named.wait()
        return job.run_id or job.key

    def newest(self) -> list[Job]:
        return list(reversed(self._jobs.values()))

    def research(
        self, question: str, settings: Settings, shown: tuple[tuple[str, str], ...], *, review_plan: bool = False,
        resume: str | None = None,
    ) -> Job:
        """Start researching ``question`` with ``settings``; Busy when every slot is taken. ``review_plan``:
        the run waits after its plan for the person's answer (:attr:`Job.review`); ``resume``: continue
        that run from its checkpoints."""
        review = WaitingReview() if review_plan else None
        research = functools.partial(pipeline_research, review_plan=review)

        def started(run_id: str) -> None:
            job.run_id = run_id
            job.named.set()

        async def work(events: EventLog) -> str:
            journalling = Journalling("web", resume=resume, on_started=started)
            job.call = ResearchCall(question, settings, events, schedule=self.schedule, research=research,
                                    journalling=journalling)  # fmt: skip
            result, scheduled = await job.call.outcome()
            if job.call.cancel_late:
                job.notes.append(CANCEL_LATE)
            job.notes.append(_critique_note(scheduled.state, scheduled.error))
            return result.id

        job = self._start("research", question, shown, work)
        job.review = review
        return job

    def critique(self, run_id: str, short: str, critique: Callable[[], object]) -> Job:
        """Critique run ``run_id`` again in a worker thread (``critique`` does it, as ``memory
        retry`` does); Busy when every slot is taken. A critique cannot be cancelled halfway."""

        async def work(events: EventLog) -> str:
            events.stage("critique", f"run {short}")
            await asyncio.to_thread(critique)
            return run_id

        return self._start("critique", f"Critique of run {short}", (("run", short),), work)

    def cancel(self, key: str) -> bool:
        """Cancel the research job ``key`` while it runs; whether a cancellation was sent (none once
        its report is written: the job then ends done, saying the cancel came late)."""
        job = self._jobs.get(key)
        if job is None or not job.cancellable or job.task is None:
            return False
        if job.call is None:  # not started yet: nothing of it exists
            return job.task.cancel()
        return job.call.cancel()

    async def close(self) -> None:
        """Cancel every job still running (a run past its write finishes) and wait until each has ended."""
        running = [job.task for job in self._jobs.values() if job.task is not None and not job.task.done()]
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)

    def _start(self, kind: JobKind, title: str, shown: tuple[tuple[str, str], ...], work: Work) -> Job:
        slot = ExitStack()
        slot.enter_context(self.service.slots.take())  # Busy, before anything else
        job = Job(secrets.token_hex(8), kind, title, shown, EventLog(asyncio.get_running_loop()), datetime.now(UTC))
        job.task = asyncio.ensure_future(self._run(job, work, slot))
        job.task.add_done_callback(lambda _: _settled(job, slot))
        self._jobs[job.key] = job
        for old in list(self._jobs)[: max(0, len(self._jobs) - self.keep)]:
            if self._jobs[old].outcome != "running":
                del self._jobs[old]
        return job

    async def _run(self, job: Job, work: Work, slot: ExitStack) -> None:
        with slot:
            try:
                job.run_id = await work(job.log)
            except asyncio.CancelledError:
                job.log.end("cancelled", CANCELLED)
                raise
            except ResearchError as exc:
                job.error = one_line(error_message(exc))
                job.log.end("failed", job.error)
            except Exception as exc:  # a bug: said on the page and logged with its traceback, never lost
                log.exception("%s job %s failed", job.kind, job.key)
                job.error = f"unexpected error: {type(exc).__name__}: {exc}"
                job.log.end("failed", job.error)
            else:
                late = job.call is not None and job.call.cancel_late
                job.log.end("done", f"done ({CANCEL_LATE_SHORT})" if late else "done")


def _settled(job: Job, slot: ExitStack) -> None:
    """A job cancelled before its first step never ran its body: its slot is given back and its end
    said here (both are no-ops for a job that ran)."""
    slot.close()
    job.named.set()
    if job.log.ended is None:
        job.log.end("cancelled", CANCELLED)


def _critique_note(state: str, error: str) -> str:
    """What became of a finished run's critique, in words."""
    return {
        "skipped": "No critique: the mode or the settings skip it.",
        "started": "Its critique runs in the background; the memory page lists it once written.",
        "done": "Its critique is written.",
    }.get(state, f"Its critique could not be made: {error or state}.")
