"""The batches this workbench runs: each a session of the batch machinery every front end drives
(:func:`~research_agent.batch.session.run_session`), holding run slots and the batch's lock, its
progress told as events a page follows.

A :class:`BatchJob` takes as many of the service's run slots as it may use (at least one, else
:class:`~research_agent.service.Busy` at once) and the batch's lock (another process running the
same batch: refused at once), both until its session ends. The session's questions run as
``research-agent batch`` runs them: one model client behind the endpoint's limits, each report
critiqued in the batch, the state file written after every change. Cancelling stops the running
questions the way Ctrl-C does (they unwind and are pending again; those done stay done), and the
state says ``stopped``; resuming starts a new session of the same batch.

:class:`BatchFeed` is what a page follows: on each (re)connection a ``state`` event with every row
and the counts as they stand, then ``question`` (a row changed), ``stage`` (a running question's
stage) and, last, ``end``. Nothing is kept but the state itself, so a page reloaded mid-batch, or
opened late, starts from the truth.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from ...batch.plan import Batch
from ...batch.runner import ResearchFn
from ...batch.session import ModelFactory, SessionOptions, default_model, run_session
from ...batch.start import holding
from ...batch.state import BatchStatus, Entry
from ...config import Settings
from ...errors import InputError, ResearchError, error_message
from ...pipeline import research as pipeline_research
from ...service import Service
from ...service.events import EventLog, Followers
from ...text.controls import one_line

__all__ = ["BatchBoard", "BatchJob", "BatchFeed", "MAX_ROWS", "row_of"]

log = logging.getLogger(__name__)

MAX_ROWS = 1000  # questions a batch's page shows (and sends) as rows; the counts cover them all
Event = tuple[str, dict[str, Any]]


def row_of(entry: Entry, stage: str = "") -> dict[str, Any]:
    """One question as a page shows it (every value plain data; the page escapes the strings)."""
    done = entry.state == "done" and bool(entry.run_id)
    return {"line": entry.line, "question": entry.question, "state": entry.state, "stage": stage,
            "attempts": entry.attempts, "error": entry.error, "run_id": entry.run_id if done else "",
            "report": f"/reports/{entry.run_id}" if done else ""}  # fmt: skip


def counts_of(entries: list[Entry]) -> dict[str, int]:
    counts = {state: 0 for state in ("pending", "running", "done", "failed")}
    for entry in entries:
        counts[entry.state] = counts.get(entry.state, 0) + 1
    return {**counts, "questions": len(entries)}


class BatchFeed:
    """The events of one batch for its pages: the state as it stands on each follow, then changes."""

    def __init__(self, snapshot: Callable[[], dict[str, Any]]) -> None:
        self._snapshot = snapshot
        self._followers: Followers[Event] = Followers()
        self.ended: Event | None = None

    def publish(self, kind: str, data: dict[str, Any]) -> None:
        self._followers.send((kind, data))

    def end(self, outcome: str, message: str) -> None:
        if self.ended is not None:
            return
        self.ended = ("end", {"outcome": outcome, "message": message})
        self.publish(*self.ended)
        self._followers.close()

    def follow(self) -> AsyncIterator[Event]:
        """The state now, then each change until the end (included); registered at once."""
        so_far = [("state", self._snapshot()), *([self.ended] if self.ended is not None else [])]
        return self._followers.follow(so_far, ended=self.ended is not None)


@dataclass(eq=False)
class BatchJob:
    """One session of a batch on this server; also the session's watcher (it tells the feed)."""

    batch: Batch
    parallel: int
    since: datetime  # when this session started
    feed: BatchFeed = field(init=False)
    task: asyncio.Future[None] | None = None
    outcome: BatchStatus | Literal["cancelled", "failed"] = "running"  # running, then how the session ended
    error: str = ""
    stages: dict[str, str] = field(default_factory=dict)  # a running question's stage, by entry key
    _following: set[asyncio.Future[None]] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.feed = BatchFeed(self.snapshot)

    @property
    def id(self) -> str:
        return self.batch.state.id

    def snapshot(self) -> dict[str, Any]:
        entries = self.batch.state.entries
        rows = [row_of(entry, self.stages.get(entry.key, "")) for entry in entries[:MAX_ROWS]]
        return {"counts": counts_of(entries), "rows": rows, "outcome": self.outcome}

    # --- BatchWatcher ----------------------------------------------------------------------

    def started(self, entry: Entry, events: EventLog) -> None:
        self.stages[entry.key] = ""
        self._tell(entry)
        follower = asyncio.ensure_future(self._follow(entry, events))
        self._following.add(follower)
        follower.add_done_callback(self._following.discard)

    def ended(self, entry: Entry) -> None:
        self.stages.pop(entry.key, None)
        self._tell(entry)

    def retrying(self, entry: Entry, delay: float) -> None:
        self.stages.pop(entry.key, None)
        self._tell(entry, f"tried again in {delay:.0f} s")

    def _tell(self, entry: Entry, stage: str = "") -> None:
        self.feed.publish("question", {"row": row_of(entry, stage or self.stages.get(entry.key, "")),
                                       "counts": counts_of(self.batch.state.entries)})  # fmt: skip

    async def _follow(self, entry: Entry, events: EventLog) -> None:
        async for event in events.follow():
            if event.kind == "stage" and entry.key in self.stages:
                self.stages[entry.key] = event.message
                self.feed.publish("stage", {"line": entry.line, "stage": event.message})

    async def stop_following(self) -> None:
        for follower in list(self._following):
            follower.cancel()
        await asyncio.gather(*self._following, return_exceptions=True)


class BatchBoard:
    """The batch sessions of one workbench, sharing ``service`` 's run slots. ``research`` and
    ``make_model`` are the batch's own (the pipeline's research, the settings' endpoint)."""

    def __init__(
        self, service: Service, *, research: ResearchFn = pipeline_research, make_model: ModelFactory = default_model
    ) -> None:
        self.service = service
        self.research = research
        self.make_model = make_model
        self._jobs: dict[str, BatchJob] = {}

    def get(self, batch_id: str) -> BatchJob | None:
        return self._jobs.get(batch_id)

    def running(self, batch_id: str) -> bool:
        job = self._jobs.get(batch_id)
        return job is not None and job.outcome == "running"

    def start(self, batch: Batch, base: Settings, wanted: int) -> BatchJob:
        """Run ``batch`` with ``base`` settings, up to ``wanted`` questions at once (as many run
        slots as are free); Busy when none is, InputError when the batch runs already."""
        if self.running(batch.state.id):
            raise InputError(f"batch {batch.state.id} is running on this server already")
        held = ExitStack()
        taken = held.enter_context(self.service.slots.take(wanted))
        try:
            held.enter_context(holding(batch.state))
        except BaseException:
            held.close()
            raise
        job = BatchJob(batch, taken, datetime.now(UTC))
        options = SessionOptions(parallel=taken)
        job.task = asyncio.ensure_future(self._run(job, base, options, held))
        self._jobs[job.id] = job
        return job

    def cancel(self, batch_id: str) -> bool:
        """Stop the batch's running questions (they are pending again); whether it was running."""
        job = self._jobs.get(batch_id)
        if job is None or job.task is None or job.task.done():
            return False
        return job.task.cancel()

    async def close(self) -> None:
        """Stop every batch still running and wait until each has written its state."""
        running = [job.task for job in self._jobs.values() if job.task is not None and not job.task.done()]
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)

    async def _run(self, job: BatchJob, base: Settings, options: SessionOptions, held: ExitStack) -> None:
        message = ""
        with held:
            try:
                await run_session(job.batch, base, options=options, research=self.research,
                                  make_model=self.make_model, watcher=job)  # fmt: skip
                job.outcome = job.batch.state.status
            except asyncio.CancelledError:
                job.outcome, message = "cancelled", "cancelled: the running questions stopped and are pending again"
                raise
            except ResearchError as exc:
                job.outcome, job.error = "failed", one_line(error_message(exc))
            except Exception as exc:  # a bug: said on the page and logged with its traceback, never lost
                log.exception("batch %s failed", job.id)
                job.outcome, job.error = "failed", f"unexpected error: {type(exc).__name__}: {exc}"
            finally:
                await job.stop_following()
                job.feed.end(job.outcome, message or job.error or job.outcome)
