"""The MCP server's parts in-process: how a cancelled call unwinds its run, progress from a
worker thread, the run slots, the --allow-dir check, and the settings a call gets."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import anyio
import pytest

from research_agent.errors import InputError
from research_agent.mcp_server.progress import STEPS, TOTAL, NotifyingProgress
from research_agent.service import Busy, RunSlots, Service, ServiceOptions, check_corpus_dirs
from research_agent.service.runs import unwound_on_cancel

HANG_GUARD = 60


async def test_a_cancelled_call_cancels_its_run_once_and_ends_after_the_run_has_cleaned_up() -> None:
    started, cancelled, cleanup_may_end = asyncio.Event(), asyncio.Event(), asyncio.Event()
    seen: list[str] = []
    call_scope = anyio.CancelScope()

    async def run() -> str:
        started.set()
        try:
            await asyncio.Event().wait()  # a model call that never answers
        except asyncio.CancelledError:
            seen.append("cancelled")
            cancelled.set()
            await asyncio.sleep(0)  # cleanup that awaits (closing clients) must not be cancelled again
            await cleanup_may_end.wait()
            seen.append("cleaned up")
            raise
        return "never"

    async def call() -> None:
        with call_scope:  # what the SDK does when the client cancels: cancel the handler's scope
            await unwound_on_cancel(run())
        seen.append("call ended")

    with anyio.fail_after(HANG_GUARD):
        async with anyio.create_task_group() as group:
            group.start_soon(call)
            await started.wait()
            call_scope.cancel()
            await cancelled.wait()
            cleanup_may_end.set()
    assert seen == ["cancelled", "cleaned up", "call ended"]


async def test_an_uncancelled_call_returns_what_its_run_returns_or_raises() -> None:
    async def answer() -> int:
        return 42

    async def fail() -> int:
        raise InputError("bad")

    assert await unwound_on_cancel(answer()) == 42
    with pytest.raises(InputError, match="bad"):
        await unwound_on_cancel(fail())


async def test_progress_from_a_worker_thread_is_sent_in_order_with_growing_numbers_and_a_total() -> None:
    sent: list[tuple[float, float, str]] = []

    async def send(number: float, total: float, message: str) -> None:
        sent.append((number, total, message))

    progress = NotifyingProgress(asyncio.get_running_loop())
    with anyio.fail_after(HANG_GUARD):
        async with progress.forwarding(send):
            progress.stage("index", "preparing sources")
            worker = threading.Thread(target=lambda: [progress.stage("index", f"docs: {n}/3 files read")
                                                      for n in (1, 2, 3)])
            worker.start()
            await asyncio.to_thread(worker.join)
            progress.counts(waiting=3)
            progress.note("corpus docs: skipped 1 binary")
            for stage in ("decompose", "search", "fetch", "relevance", "draft", "skeptic", "revise", "skeptic",
                          "decompose", "write"):  # a revision and a replan go back; the number does not
                progress.stage(stage)
            progress.note("after the last stage")
    messages = [message for _, _, message in sent]
    assert messages[:5] == ["index: preparing sources", "index: docs: 1/3 files read", "index: docs: 2/3 files read",
                            "index: docs: 3/3 files read", "note: corpus docs: skipped 1 binary"]  # fmt: skip
    assert messages[-3:] == ["write", "note: after the last stage", "done"]
    numbers = [number for number, _, _ in sent]
    assert all(total == TOTAL == len(STEPS) + 1 for _, total, _ in sent), "every notification carries the total"
    assert all(a < b for a, b in zip(numbers, numbers[1:], strict=False)), numbers
    assert numbers[0] == 1 and numbers[messages.index("decompose")] == 2 and numbers[-1] == TOTAL
    assert numbers[-2] < TOTAL and numbers[messages.index("write")] == TOTAL - 1


async def test_a_failed_run_sends_no_done() -> None:
    sent: list[str] = []

    async def send(number: float, total: float, message: str) -> None:
        sent.append(message)

    progress = NotifyingProgress(asyncio.get_running_loop())
    with pytest.raises(InputError), anyio.fail_after(HANG_GUARD):
        async with progress.forwarding(send):
            progress.stage("decompose")
            raise InputError("bad")
    assert sent == ["decompose"]


async def test_a_streamed_answer_is_notified_every_hundred_tokens_and_at_its_end() -> None:
    sent: list[tuple[float, str]] = []

    async def send(number: float, total: float, message: str) -> None:
        sent.append((number, message))

    progress = NotifyingProgress(asyncio.get_running_loop())
    with anyio.fail_after(HANG_GUARD):
        async with progress.forwarding(send):
            progress.stage("draft", "6 sources")
            for tokens in range(1, 251):
                progress.counts(streamed=tokens, streamed_ms=tokens * 100)
            progress.counts(waiting=30)
            progress.counts(streamed=0, streamed_ms=25_000)
    assert [message for _, message in sent] == [
        "draft: 6 sources", "draft: 100 tokens, 10.0 tok/s", "draft: 200 tokens, 10.0 tok/s",
        "draft: 250 tokens, 10.0 tok/s", "done"]  # fmt: skip
    numbers = [number for number, _ in sent]
    assert numbers == sorted(numbers) and numbers[0] == 6 and numbers[-2] < 7  # the stream creeps within draft


async def test_a_failing_send_never_stops_the_run() -> None:
    """Every send fails; the run goes on past the first failure (it waits for it), ends done, and
    each later event, the last "done" included, is still tried in order."""
    tried: list[tuple[float, str]] = []
    first_failed = asyncio.Event()

    async def send(number: float, total: float, message: str) -> None:
        tried.append((number, message))
        first_failed.set()
        raise ConnectionResetError("the client went away")

    progress = NotifyingProgress(asyncio.get_running_loop())
    went_on = False
    with anyio.fail_after(HANG_GUARD):
        async with progress.forwarding(send):
            progress.stage("decompose")
            await first_failed.wait()
            progress.stage("search")
            progress.note("one provider failed")
            went_on = True
    assert went_on and progress.ended is not None and progress.ended.outcome == "done"
    assert [message for _, message in tried] == ["decompose", "search", "note: one provider failed", "done"]
    assert tried[-1][0] == TOTAL and [n for n, _ in tried] == sorted(n for n, _ in tried)


def test_run_slots_refuse_one_more_at_once_and_free_a_slot_when_a_run_ends() -> None:
    slots = RunSlots(2)
    busy = r"busy: 2 research run\(s\) already in progress, .*--max-runs 2"
    with slots.take(), slots.take():
        with pytest.raises(Busy, match=busy), slots.take():
            pass
        assert slots.active == 2
    with slots.take():
        assert slots.active == 1
    assert slots.active == 0


def test_corpus_folders_must_be_allowed_ones_or_below_them_after_resolving_symlinks(tmp_path: Path) -> None:
    allowed, outside = tmp_path / "allowed", tmp_path / "outside"
    (allowed / "notes").mkdir(parents=True)
    outside.mkdir()
    (allowed / "link").symlink_to(outside, target_is_directory=True)
    (outside / "back").symlink_to(allowed / "notes", target_is_directory=True)
    roots = (allowed.resolve(),)
    assert check_corpus_dirs([allowed, allowed / "notes", outside / "back"], roots) == (
        allowed.resolve(), (allowed / "notes").resolve(), (allowed / "notes").resolve()
    )
    for refused in (outside, allowed / "link", allowed / "notes" / ".." / ".." / "outside", tmp_path):
        with pytest.raises(InputError, match="refused: it is not below an allowed folder"):
            check_corpus_dirs([refused], roots)
    with pytest.raises(InputError, match="this server reads no folders"):
        check_corpus_dirs([allowed], ())


def test_private_fetching_is_the_server_s_choice_whatever_the_config_file_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config.toml"
    config.write_text("allow_private = true\nmodel = \"from-config\"\n")
    monkeypatch.setenv("RESEARCH_AGENT_CONFIG", str(config))
    monkeypatch.setenv("RESEARCH_AGENT_MODEL", "from-env")
    locked = Service(ServiceOptions(overrides={"reports_dir": tmp_path / "r"}))
    assert locked.settings().allow_private is False
    assert locked.settings().model == "from-env", "flags, then the environment, then the config file"
    opened = Service(ServiceOptions(overrides={"model": "from-flag"}, allow_private=True))
    assert opened.settings().allow_private is True and opened.settings().model == "from-flag"
    assert locked.run_settings(mode="quick", max_sources=3).source_limit == 3


def test_a_corpus_in_the_config_file_must_be_allowed_for_runs_but_not_for_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f"corpus_dirs = [{str(tmp_path)!r}]\n")
    monkeypatch.setenv("RESEARCH_AGENT_CONFIG", str(config))
    service = Service(ServiceOptions(allow_dirs=((tmp_path / "docs").resolve(),)))
    assert service.settings().corpus_dirs == (tmp_path,)
    with pytest.raises(InputError, match="refused: it is not below an allowed folder"):
        service.run_settings()
