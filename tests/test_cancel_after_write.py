"""Both or neither, and the front end tells the truth (issue 45 point 1).

A cancel that lands before a run writes its report leaves nothing and says "cancelled"; one that
lands after the write leaves the report, ends "done" and says the cancel came late, with the
report's link on the workbench. The race is driven deterministically: :class:`Suspensions` stops
the pipeline at each of its awaits after the write in turn (no sleep, no timing), and the
critique's scheduling thread is held by events.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Coroutine, Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest

from research_agent.memory.critique.schedule import Scheduled
from research_agent.pipeline import research
from research_agent.progress import NoProgress
from research_agent.service import Service
from research_agent.service.runs import ResearchCall, unwound_on_cancel
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.mcp import HoldingResponder
from tests.support.pipeline import QUERY
from tests.support.research_responder import ResearchResponder
from tests.support.web import HANG_GUARD, docs_corpus, in_process, options_for

corpus = docs_corpus  # the fixture
MAX_AWAITS = 200  # far more awaits than a run's cleanup has: only against an endless sweep


def files(tmp_path: Path) -> list[str]:
    reports = tmp_path / "reports"
    return sorted(p.relative_to(reports).as_posix() for p in reports.rglob("*") if p.is_file()) if reports.exists() else []


class Suspensions:
    """Awaits ``coro``, calling ``on_suspend()`` each time it suspends (every await that yields to
    the loop), synchronously, before the loop runs anything else."""

    def __init__(self, coro: Coroutine[Any, Any, Any], on_suspend: Callable[[], None]) -> None:
        self.coro = coro
        self.on_suspend = on_suspend

    def __await__(self) -> Generator[Any, Any, Any]:
        inner = self.coro.__await__()
        sent: Any = None
        thrown: BaseException | None = None
        while True:
            try:
                yielded = inner.throw(thrown) if thrown is not None else inner.send(sent)
            except StopIteration as stop:
                return stop.value
            self.on_suspend()
            try:
                sent, thrown = (yield yielded), None
            except BaseException as exc:  # a cancellation (or a close): passed on into the run
                sent, thrown = None, exc


@dataclass
class CancelAfterWrite:
    """A ``research`` for ResearchCall: the real pipeline, cancelled ``at`` awaits after its report
    is written (0: in the very step that wrote it). ``landed``: whether the cancel was tried."""

    at: int
    call: ResearchCall | None = None
    landed: bool = False
    sent: list[bool] = field(default_factory=list)
    _after: int = -1

    async def __call__(self, question: str, *, on_written: Callable[[Any], None], **kwargs: Any) -> Any:
        def written(result: Any) -> None:
            on_written(result)
            self._after = 0
            if self.at == 0:
                self._cancel()

        def suspended() -> None:
            if self._after < 0:
                return
            self._after += 1
            if self._after == self.at:
                self._cancel()

        return await Suspensions(research(question, on_written=written, **kwargs), suspended)

    def _cancel(self) -> None:
        assert self.call is not None
        self.landed = True
        self.sent.append(self.call.cancel())


def settings_of(tmp_path: Path, base_url: str, corpus: Path) -> Any:
    service = Service(options_for(tmp_path, base_url=base_url, allow_dirs=(corpus,), critique=False))
    return service.run_settings(corpus_dirs=(corpus,), mode="standard")


async def test_a_cancel_at_any_await_after_the_write_leaves_the_report_and_ends_done(
    tmp_path: Path, corpus: Path
) -> None:
    """Every await between the write and the end of the pipeline (closing the model's client,
    stopping the corpus index), the write's own step included: the cancel is not sent, the run
    ends done, and its files are all there."""
    with FakeOpenAIServer(ResearchResponder()) as server:
        for at in range(MAX_AWAITS):
            base = tmp_path / f"run-{at}"
            driver = CancelAfterWrite(at)
            with anyio.fail_after(HANG_GUARD):
                driver.call = ResearchCall(QUERY, settings_of(base, server.base_url, corpus), NoProgress(),
                                           research=driver)  # fmt: skip
                result, scheduled = await driver.call.outcome()
            if not driver.landed:  # the run ended before its `at`-th await after the write: all were tried
                break
            assert driver.sent == [False], f"a cancel at await {at} after the write was sent into the run"
            assert driver.call.cancel_late and driver.call.status == "done"
            assert scheduled.state == "skipped"  # the critique's scheduling still ran
            assert result.report_path.is_file() and result.run_record_path.is_file()
            assert f"meta/passages-{result.id}.json" in files(base), files(base)
    assert at >= 2, "the pipeline's cleanup after the write awaits something (the model's client closing)"


async def test_a_cancel_while_the_critique_is_scheduled_leaves_report_and_scheduling(
    tmp_path: Path, corpus: Path
) -> None:
    entered, release = threading.Event(), threading.Event()
    scheduled_for: list[Path] = []

    def schedule(record: Path, settings: Any) -> Scheduled:
        entered.set()
        release.wait(HANG_GUARD)
        scheduled_for.append(record)
        return Scheduled("started", pid=1)

    with FakeOpenAIServer(ResearchResponder()) as server:
        with anyio.fail_after(HANG_GUARD):
            call = ResearchCall(QUERY, settings_of(tmp_path, server.base_url, corpus), NoProgress(),
                                schedule=schedule)  # fmt: skip
            await asyncio.to_thread(entered.wait, HANG_GUARD)
            sent = call.cancel()
            release.set()
            result, scheduled = await call.outcome()
    assert sent is False and call.cancel_late and call.status == "done"
    assert scheduled.state == "started" and scheduled_for == [result.run_record_path]
    assert result.report_path.is_file()


async def test_a_cancel_before_the_write_leaves_only_its_journal_and_says_cancelled(tmp_path: Path, corpus: Path) -> None:
    responder = HoldingResponder(ResearchResponder(), "skeptic")  # the last call before the write
    with FakeOpenAIServer(responder) as server:
        try:
            with anyio.fail_after(HANG_GUARD):
                call = ResearchCall(QUERY, settings_of(tmp_path, server.base_url, corpus), NoProgress())
                await asyncio.to_thread(responder.wait_arrivals, 1)
                sent = call.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await call.outcome()
        finally:
            responder.release.set()
    assert sent is True and not call.cancel_late and call.status == "cancelled" and call.written is None
    left = [f for f in files(tmp_path) if not f.startswith(("meta/index", "meta/checkpoints/"))]
    [journal] = left  # no report, no record: the journal's entry (and the checkpoints a resume reads)
    entry = json.loads((tmp_path / "reports" / journal).read_text(encoding="utf-8"))
    assert journal.startswith("meta/journal-") and entry["status"] == "cancelled" and entry["report"] == ""


async def test_a_caller_cancelled_after_the_write_gets_the_result_and_the_run_finishes(
    tmp_path: Path, corpus: Path
) -> None:
    """The MCP path: the SDK cancels the handler's scope; a run past its write is not cancelled."""
    entered, release = threading.Event(), threading.Event()

    def schedule(record: Path, settings: Any) -> Scheduled:
        entered.set()
        release.wait(HANG_GUARD)
        return Scheduled("started", pid=1)

    got: list[Any] = []
    scope = anyio.CancelScope()
    with FakeOpenAIServer(ResearchResponder()) as server:
        with anyio.fail_after(HANG_GUARD):
            call = ResearchCall(QUERY, settings_of(tmp_path, server.base_url, corpus), NoProgress(),
                                schedule=schedule)  # fmt: skip

            async def handler() -> None:
                with scope:
                    got.append(await call.outcome())
                    await anyio.sleep(0)  # the caller's next checkpoint is cancelled all the same

            async with anyio.create_task_group() as group:
                group.start_soon(handler)
                await asyncio.to_thread(entered.wait, HANG_GUARD)
                scope.cancel()
                release.set()
    assert scope.cancelled_caught and call.cancel_late and call.status == "done"
    ((result, scheduled),) = got
    assert scheduled.state == "started" and result.report_path.is_file()


async def test_a_task_that_finished_as_the_cancel_came_gives_its_result() -> None:
    caller: asyncio.Task[int] | None = None

    async def work() -> int:
        await asyncio.sleep(0)
        assert caller is not None
        caller.cancel()  # the cancel arrives in the step the work ends in
        return 42

    caller = asyncio.ensure_future(unwound_on_cancel(work()))
    assert await caller == 42


async def test_the_workbench_says_a_late_cancel_came_and_links_the_report(tmp_path: Path, corpus: Path) -> None:
    entered, release = threading.Event(), threading.Event()

    def schedule(record: Path, settings: Any) -> Scheduled:
        entered.set()
        release.wait(HANG_GUARD)
        return Scheduled("skipped")

    with FakeOpenAIServer(ResearchResponder()) as server:
        options = options_for(tmp_path, base_url=server.base_url, allow_dirs=(corpus,), critique=False)
        async with in_process(options) as web:
            web.bench.board.schedule = schedule
            csrf = await web.csrf()
            answer = await web.client.post("/runs", data={"csrf": csrf, "question": QUERY, "corpus": "0"})
            where = answer.headers["location"]
            (job,) = web.bench.board.newest()
            try:
                await asyncio.to_thread(entered.wait, HANG_GUARD)
                cancelled = await web.client.post(f"{where}/cancel", data={"csrf": csrf})
            finally:
                release.set()
            await asyncio.wait_for(job.task, HANG_GUARD)
            page = await web.client.get(where)
            events = (await web.client.get(f"{where}/events")).text
    assert cancelled.status_code == 303 and job.outcome == "done"
    assert f'href="/reports/{job.run_id}"' in page.text and "status-done" in page.text
    assert "The cancel came after the report was written, so the run finished: the report stays." in page.text
    assert "wrote nothing" not in page.text and "nothing of it was written" not in page.text
    assert f'"report": "/reports/{job.run_id}"' in events and "the cancel came after the report was written" in events
    assert (tmp_path / "reports" / f"{job.run_id}.md").is_file()


async def test_a_job_cancelled_before_its_first_step_gives_its_slot_back_and_says_cancelled(tmp_path: Path) -> None:
    async with in_process(options_for(tmp_path, max_runs=1)) as web:
        board = web.bench.board
        job = board.research(QUERY, web.bench.service.settings(), (("mode", "standard"),))
        assert board.cancel(job.key) and board.service.slots.free == 0
        await asyncio.wait({job.task}, timeout=HANG_GUARD)
        await asyncio.wait_for(_ended(job), HANG_GUARD)
        assert job.outcome == "cancelled" and board.service.slots.free == 1
        assert job.log.ended is not None and "nothing of it was written" in job.log.ended.message


async def _ended(job: Any) -> None:
    async for _ in job.log.follow():  # the end event is the follower's last
        pass
