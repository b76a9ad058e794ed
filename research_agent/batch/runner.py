"""Running a batch: at most ``parallel`` questions at once, each researched and then critiqued here,
the state written after every change.

Each question runs the pipeline as ``research-agent run`` does, with the batch's one model
client (behind its shared limits) and its one page reader, and gets the lessons that exist when
it starts; its critique then runs inside the batch with the same client, so later questions
learn from earlier ones. A question that fails on something that passes (the endpoint
unavailable or too slow, a deadline, every search provider down) is tried again after a
backoff, at most ``retries`` times; one that keeps failing, or fails on something that would
fail again (a bad corpus, a model that cannot answer the schema), is marked failed and the
batch goes on. A configuration error (no endpoint, an endpoint that cannot be reached at all, a
refused key, an unknown model) or a full disk stops the whole batch at once, as it ends ``run``. Cancelling (Ctrl-C, SIGTERM, an MCP client) cancels the running
questions, which unwind as a run does and go back to pending; the finished ones stay.

A written report is a question done, whatever stops the batch after it: its critique is then the
only thing left to run (a resumed batch runs just that, :mod:`.resumed`). A question keeps the id of
its run from the run's start (the run journal's, :mod:`research_agent.journal`), so one that was
stopped or killed mid-run resumes that run from its checkpoints instead of starting it again.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..config import Settings
from ..errors import (
    ConfigError,
    DiskFull,
    EndpointUnreachable,
    LLMTimeout,
    LLMUnavailable,
    ModelNotFound,
    ResearchError,
    RunTimeout,
    SearchError,
    UnreadableAnswer,
    error_message,
)
from ..fetch.gather import SourceReader
from ..files.atomic import atomic_write_text
from ..llm import ChatModel
from ..memory.critique.schedule import critique_within
from ..results import ResearchResult
from ..service.events import EventLog
from ..text.controls import one_line
from .plan import Batch
from .resumed import question_journal, written_report
from .state import BatchStatus, Entry

__all__ = ["BatchWatcher", "QuietWatcher", "RunOptions", "run_batch", "TRANSIENT", "FATAL"]

log = logging.getLogger(__name__)

TRANSIENT = (LLMUnavailable, LLMTimeout, UnreadableAnswer, RunTimeout, SearchError)
FATAL = (ConfigError, ModelNotFound, EndpointUnreachable, DiskFull)  # every later question would fail the same way
RETRY_BASE = 5.0  # seconds before the first retry of a question; doubled each time, with jitter
RETRY_CAP = 120.0

ResearchFn = Callable[..., Awaitable[ResearchResult]]


class BatchWatcher(Protocol):
    """Where a batch tells how it goes (the CLI's progress, MCP notifications)."""

    def started(self, entry: Entry, events: EventLog) -> None: ...

    def ended(self, entry: Entry) -> None: ...

    def retrying(self, entry: Entry, delay: float) -> None: ...


class QuietWatcher:
    """A BatchWatcher that shows nothing."""

    def started(self, entry: Entry, events: EventLog) -> None:
        return None

    def ended(self, entry: Entry) -> None:
        return None

    def retrying(self, entry: Entry, delay: float) -> None:
        return None


@dataclass(frozen=True)
class RunOptions:
    """How a batch runs: questions at once, retries of a transient failure, the HTML export of each report."""

    parallel: int = 1
    retries: int = 2
    export_html: bool = False


@dataclass
class _Shared:
    model: ChatModel
    reader: SourceReader | None
    research: ResearchFn
    watcher: BatchWatcher
    options: RunOptions
    sleep: Callable[[float], Awaitable[Any]]
    rng: random.Random
    writing: asyncio.Lock = field(default_factory=asyncio.Lock)  # the state's writes, in order


async def _save(batch: Batch, shared: _Shared, *changed: Entry) -> None:
    """Write the state after a change: rendered here, written (fsync included) in a worker thread
    so that the other questions' runs go on meanwhile; the writes land in the order of the changes."""
    text = batch.state.render(*changed)
    async with shared.writing:
        await asyncio.to_thread(atomic_write_text, batch.state.path, text)


def _stop(batch: Batch, status: BatchStatus) -> None:
    """The batch's last word in its state: questions left running are pending again."""
    for entry in batch.state.entries:
        if entry.state == "running":
            entry.state = "pending"
    batch.state.status = status
    batch.state.save(*batch.state.entries)


async def run_batch(
    batch: Batch,
    *,
    model: ChatModel,
    research: ResearchFn,
    reader: SourceReader | None = None,
    watcher: BatchWatcher | None = None,
    options: RunOptions = RunOptions(),
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    rng: random.Random | None = None,
) -> None:
    """Run every question of ``batch`` not done yet (see the module docstring). The state says
    ``finished`` when the batch ran to its end, ``stopped`` when it was cancelled or stopped by
    an error (raised again: the first one, when several workers failed together)."""
    shared = _Shared(model, reader, research, watcher or QuietWatcher(), options, sleep, rng or random.Random())
    queue = collections.deque(batch.todo())
    for entry in queue:
        entry.state = "pending"
    batch.state.save(*queue)
    try:
        async with asyncio.TaskGroup() as group:
            for _ in range(max(1, min(options.parallel, len(queue)))):
                group.create_task(_worker(batch, queue, shared))
    except BaseExceptionGroup as group_error:
        _stop(batch, "stopped")
        raise group_error.exceptions[0] from None
    except BaseException:
        _stop(batch, "stopped")
        raise
    _stop(batch, "finished")


async def _worker(batch: Batch, queue: collections.deque[Entry], shared: _Shared) -> None:
    while queue:
        await _ask(batch, queue.popleft(), shared)


async def _ask(batch: Batch, entry: Entry, shared: _Shared) -> None:
    """One question to its end: done, failed, or back to pending when the batch is cancelled."""
    settings = batch.settings[entry.key]
    while True:
        entry.state, entry.error = "running", ""
        entry.attempts += 1
        await _save(batch, shared, entry)
        events = EventLog(asyncio.get_running_loop())
        shared.watcher.started(entry, events)
        started = time.monotonic()
        written: list[ResearchResult] = []
        try:
            entry.outcome = await _one(entry, settings, events, shared, started, batch, written)
        except BaseException as exc:
            if written:  # the report is written: the question is done, its critique not run
                events.end("done")
                stopped = isinstance(exc, asyncio.CancelledError | KeyboardInterrupt)
                why = "the batch was stopped before the critique ran" if stopped else _message(exc)
                _done(entry, outcome_of(written[0], {"state": "not run", "error": why}), started)
                await _save(batch, shared, entry)
                shared.watcher.ended(entry)
                if isinstance(exc, (asyncio.CancelledError, KeyboardInterrupt, *FATAL)):
                    raise
                return
            events.end("cancelled" if isinstance(exc, asyncio.CancelledError) else "failed", _message(exc))
            goes_on = _failed(entry, exc, shared)
            await _save(batch, shared, entry)
            if not goes_on:
                shared.watcher.ended(entry)
                raise
            if entry.state == "pending":  # to be tried again
                delay = _backoff(entry.attempts, shared.rng)
                shared.watcher.retrying(entry, delay)
                await shared.sleep(delay)
                continue
        else:
            events.end("done")
            _done(entry, entry.outcome, started)
            await _save(batch, shared, entry)
        shared.watcher.ended(entry)
        return


def _done(entry: Entry, outcome: dict[str, Any], started: float) -> None:
    entry.state, entry.outcome, entry.run_id = "done", outcome, str(outcome.get("run_id", ""))
    entry.seconds = round(time.monotonic() - started, 1)


def _failed(entry: Entry, exc: BaseException, shared: _Shared) -> bool:
    """Record ``exc`` on ``entry``; True when the batch goes on (the question is failed, or pending
    for a retry), False when it stops (the question is pending again, its attempt not counted)."""
    stops = isinstance(exc, (asyncio.CancelledError, KeyboardInterrupt, *FATAL))
    if stops:
        entry.state = "pending"
        entry.attempts -= 1  # not the question's fault
    else:
        entry.error = _message(exc)
        transient = isinstance(exc, TRANSIENT) and entry.attempts <= shared.options.retries
        entry.state = "pending" if transient else "failed"
        if not isinstance(exc, ResearchError):
            log.debug("question %d failed", entry.line, exc_info=exc)
    return not stops


def _message(exc: BaseException) -> str:
    return one_line(error_message(exc))[:500]


def _backoff(attempt: int, rng: random.Random) -> float:
    ceiling = min(RETRY_CAP, RETRY_BASE * 2 ** (attempt - 1))
    return ceiling * (0.5 + 0.5 * rng.random())


async def _one(
    entry: Entry, settings: Settings, events: EventLog, shared: _Shared, started: float, batch: Batch,
    written: list[ResearchResult],
) -> dict[str, Any]:
    """The question researched (or its run resumed, or its written report found), then critiqued."""
    held_out = batch.held_out.get(entry.key)
    result = written_report(entry, settings)
    if result is None:
        result = await shared.research(
            entry.question, settings=settings, model=shared.model, reader=shared.reader, progress=events,
            on_written=written.append, journalling=question_journal(batch, entry, settings),
        )  # fmt: skip
    written[:] = [result]
    time_left = settings.run_timeout - (time.monotonic() - started)
    critique = await _critique(result, settings, events, shared, time_left, held_out)
    html = ""
    if shared.options.export_html:
        html = await _export_html(result.report_path, settings.reports_dir)
    return outcome_of(result, critique, html)


async def _critique(
    result: ResearchResult, settings: Settings, events: EventLog, shared: _Shared, time_left: float,
    held_out: str | None = None,
) -> dict[str, Any]:
    """The run's critique, here and now (as ``--wait-critique`` does); its failure leaves the question done.
    ``held_out``: the eval that holds the run out of learning (the critique then builds no lesson)."""
    if not (settings.mode.critiqued and settings.critique):
        return {"state": "skipped"}
    events.stage("critique")
    try:
        critique = await critique_within(result.run_record_path, shared.model, settings=settings, now=None,
                                         timeout=max(0.0, time_left), held_out=held_out)  # fmt: skip
    except ResearchError as exc:
        return {"state": "failed", "error": _message(exc)}
    return {"state": "passed" if critique.overall_pass else "not passed", "mean_score": critique.mean_score,
            "id": critique.id}  # fmt: skip


async def _export_html(report: Path, reports_dir: Path) -> str:
    """The report's HTML page beside it; "" when the export failed (the report is there all the same)."""
    from ..export import export_report

    try:
        exported = await asyncio.to_thread(export_report, report, fmt="html", reports_dir=reports_dir)
    except ResearchError as exc:
        log.info("the HTML export of %s failed: %s", report, exc)
        return ""
    return str(exported.path)


def outcome_of(result: ResearchResult, critique: dict[str, Any], html: str = "") -> dict[str, Any]:
    """What the batch page shows of one finished question."""
    record = result.run_record
    checks = record.claim_check
    usage = result.total_usage
    return {
        "run_id": result.id,
        "report": str(result.report_path),
        "html": html,
        "domain": record.domain,
        "gate": record.gate_decision,
        "review": record.review.status if record.review is not None else "none",
        "claims_checked": checks.checked if checks is not None else 0,
        "unsupported_share": checks.facts().unsupported_share if checks is not None else None,
        "sources_kept": sum(1 for source in record.sources if source.status == "kept"),
        "tokens": usage.prompt_tokens + usage.completion_tokens,
        "cost_usd": None if record.cost_usd is None else round(record.cost_usd, 6),
        "critique": critique,
    }
