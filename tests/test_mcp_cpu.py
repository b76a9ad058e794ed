"""CPU-heavy MCP work runs in a worker process: one client's review never stalls another client."""

from __future__ import annotations

import functools
import os
from pathlib import Path

import anyio
from mcp import Client

from research_agent.mcp_server.server import build_server
from research_agent.review.report_file import review_markdown
from research_agent.service import ServiceOptions
from research_agent.service.cpu import CpuWork, CpuWorkFailed
from tests.support.held import HANG_GUARD, held_review, send, wait_for_byte
from tests.support.review_reports import CLEAN_BODY, report


async def test_a_held_review_leaves_other_clients_answered_and_runs_in_another_process(tmp_path: Path) -> None:
    arrived, go = tmp_path / "arrived", tmp_path / "go"
    os.mkfifo(arrived)
    os.mkfifo(go)
    arrivals = os.open(arrived, os.O_RDONLY | os.O_NONBLOCK)
    server = build_server(ServiceOptions(reviewer=functools.partial(held_review, str(arrived), str(go))))
    large = report(CLEAN_BODY + "\n\n" + "Filler prose without any figure in it at all. " * 12_000)
    results = []
    try:
        with anyio.fail_after(HANG_GUARD * 2):
            async with Client(server) as first, anyio.create_task_group() as group:

                async def review() -> None:
                    results.append(await first.call_tool("review_report", {"markdown": large}))

                group.start_soon(review)
                worker_pid = int(await anyio.to_thread.run_sync(wait_for_byte, arrivals))
                async with Client(server) as second:  # initializes while the review is held
                    tools = {tool.name for tool in (await second.list_tools()).tools}
                assert results == [], "the review was still held while the second client was served"
                send(str(go), b"1")
    finally:
        server.service.close()
        os.close(arrivals)
    assert "review_report" in tools
    assert worker_pid != os.getpid()
    assert not results[0].is_error, results[0].content[0].text
    assert results[0].structured_content["approved"] == review_markdown(large).approved  # the real review



def crash() -> None:
    os._exit(3)


async def test_a_worker_that_dies_is_one_line_and_the_next_call_works() -> None:
    work = CpuWork(workers=1)
    try:
        try:
            await work.run(crash)
        except CpuWorkFailed as exc:
            message = str(exc)
        else:
            raise AssertionError("a crashed worker gave a result")
        assert message.startswith("crash failed: its worker process died") and "\n" not in message
        assert await work.run(os.getpid) != os.getpid()
    finally:
        work.close()


async def test_an_input_error_in_the_worker_is_raised_again_with_its_message() -> None:
    from research_agent.errors import InputError

    work = CpuWork(workers=1)
    try:
        try:
            await work.run(review_markdown, "# T\n", mode="bogus")
        except InputError as exc:
            assert "unknown mode 'bogus'" in str(exc)
        else:
            raise AssertionError("the worker's InputError was lost")
    finally:
        work.close()
