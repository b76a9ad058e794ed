"""``research_batch``: many questions in one call, run as ``research-agent batch`` runs them.

The questions run through the same batch session (:mod:`research_agent.batch.session`): one
model client for all of them with one shared backoff, their critiques inside the batch, the
state in ``reports/meta/batch-<id>.yaml`` and the page ``reports/batch-<id>.md``. The server's
``--max-runs`` bounds it: the call takes as many free run slots as it may use (at least one,
else it is busy), and runs that many questions at once. A progress notification comes as each
question ends. Cancelling the call stops the running questions cleanly; those finished stay.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from pydantic import Field

from ..batch.questions import questions_from_list
from ..batch.runner import QuietWatcher
from ..batch.session import SessionOptions, run_session
from ..batch.start import holding, new_batch
from ..batch.state import Entry
from ..batch.summary import BatchTotals, LessonChange
from ..service.runs import unwound_on_cancel
from ..shapes import plain
from .answers import answered, service_of
from .arguments import CorpusFolders, MaxSources, ModeName, Providers, run_settings
from .progress import Send

__all__ = ["research_batch", "BatchOutput", "MAX_QUESTIONS", "batch_text"]

log = logging.getLogger(__name__)

MAX_QUESTIONS = 100

Questions = Annotated[
    list[str], Field(description=f"The questions to research (1 to {MAX_QUESTIONS}, each at most 2,000 characters).")
]
Parallel = Annotated[
    int | None, Field(description="Questions at once (default and most: the run slots free on the server).")
]


@dataclass(frozen=True)
class BatchQuestionOut:
    """One question: where it stands and, when done, what came out."""

    n: int
    question: str
    status: str
    error: str
    run_id: str
    report_path: str | None
    review: str | None
    claims_checked: int | None
    unsupported_share: float | None
    sources_kept: int | None
    tokens: int | None
    cost_usd: float | None
    seconds: float


@dataclass(frozen=True)
class BatchOutput:
    """The batch: its id, its state file and page, its totals, each question."""

    id: str
    status: str
    state_path: str
    page_path: str
    totals: BatchTotals
    lessons_changed: tuple[LessonChange, ...]
    questions: tuple[BatchQuestionOut, ...]


def batch_text(data: Mapping[str, Any]) -> str:
    """research_batch: the counts, the page, the failures."""
    t = data["totals"]
    lines = [f"Batch {data['id']} {data['status']}: {t['done']} done, {t['failed']} failed, "
             f"{t['pending'] + t['running']} not run, of {t['questions']}.",
             f"Page: {data['page_path']}; state: {data['state_path']}."]  # fmt: skip
    lines += [f"Failed: {q['question'][:100]}: {q['error']}" for q in data["questions"] if q["status"] == "failed"][:10]
    return "\n".join(lines)


def _output(data: dict[str, Any], page: str) -> dict[str, Any]:
    """The tool's answer from the batch's summary (:func:`~research_agent.batch.summary.summary_data`)."""
    questions = tuple(BatchQuestionOut(
        n=q["line"], question=q["question"], status=q["status"], error=q["error"], run_id=q["run_id"],
        report_path=q["report"], review=q["review"], claims_checked=q["claims_checked"],
        unsupported_share=q["unsupported_share"], sources_kept=q["sources_kept"], tokens=q["tokens"],
        cost_usd=q["cost_usd"], seconds=q["seconds"],
    ) for q in data["questions"])  # fmt: skip
    return plain(BatchOutput(
        id=data["id"], status=data["status"], state_path=data["state_path"], page_path=page,
        totals=BatchTotals(**data["totals"]), lessons_changed=tuple(LessonChange(**c) for c in data["lessons_changed"]),
        questions=questions,
    ))  # fmt: skip


class _Notifier(QuietWatcher):
    """A BatchWatcher that sends one progress notification as each question ends, in order."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.ended_count = 0
        self._queue: asyncio.Queue[tuple[float, str] | None] = asyncio.Queue()

    def ended(self, entry: Entry) -> None:
        if entry.state in ("done", "failed"):
            self.ended_count += 1
            what = f"{entry.state} ({entry.run_id})" if entry.state == "done" else f"failed: {entry.error}"
            self._queue.put_nowait((self.ended_count, f"{self.ended_count}/{self.total} {what}: {entry.question[:100]}"))

    @asynccontextmanager
    async def forwarding(self, send: Send) -> AsyncIterator[None]:
        forwarder = asyncio.ensure_future(self._forward(send))
        try:
            yield
        finally:
            self._queue.put_nowait(None)
            await forwarder

    async def _forward(self, send: Send) -> None:
        while (item := await self._queue.get()) is not None:
            try:
                await send(item[0], float(self.total), item[1])
            except Exception as exc:  # the client went away: the batch goes on
                log.debug("progress notification not sent: %s", exc)


@answered(BatchOutput, summary=batch_text)
async def research_batch(
    questions: Questions,
    ctx: Context,
    mode: ModeName = "standard",
    corpus: CorpusFolders = None,
    search: Providers = None,
    max_sources: MaxSources = None,
    parallel: Parallel = None,
) -> dict[str, Any]:
    """Research many questions, each as `research` does, as one batch (minutes per question).

    The questions share one model client and one backoff on the endpoint; each report is
    critiqued inside the batch, so later questions get the lessons earlier ones made. Runs
    as many questions at once as the server has free run slots (--max-runs), or `parallel`.
    A question that fails transiently is tried again; one that keeps failing is marked
    failed and the batch goes on. Returns each question's status, run id, report path,
    review verdict, claims checked and unsupported share, sources kept, tokens and cost,
    and the batch page reports/batch-<id>.md. Progress is reported as each question ends.
    """
    from ..pipeline import research

    service = service_of(ctx)
    settings = run_settings(service, mode, corpus, search, max_sources)
    rows = questions_from_list(questions, MAX_QUESTIONS)
    batch = new_batch(rows, settings)
    with service.slots.take(parallel or service.options.max_runs) as taken, holding(batch.state):
        notifier = _Notifier(len(rows))
        async with notifier.forwarding(ctx.report_progress):
            data = await unwound_on_cancel(run_session(batch, settings, options=SessionOptions(parallel=taken),
                                                       research=research, watcher=notifier))  # fmt: skip
    return _output(data, str(settings.reports_dir / f"batch-{batch.state.id}.md"))
