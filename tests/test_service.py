"""The shared floor of the front ends (research_agent.service) on its own, without the MCP SDK:
the event stream a late follower replays, the HTTP guard in front of a plain ASGI app, the run
slots a batch takes several of, and imports that never load mcp, starlette or uvicorn."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from typing import Any

import anyio
import httpx
import pytest

from research_agent.service import Busy, RunSlots
from research_agent.service.events import TOTAL, EventLog, RunEvent
from research_agent.service.http import HttpBind, HttpGuard

HANG_GUARD = 60
TOKEN = "t0ken-for-the-tests-0123456789"


async def _collect(log: EventLog) -> list[RunEvent]:
    return [event async for event in log.follow()]


async def test_a_follower_gets_what_was_said_before_it_came_then_the_rest_until_the_end() -> None:
    log = EventLog(asyncio.get_running_loop())
    log.stage("decompose")
    log.counts(found=3)
    log.counts(found=5, kept=2)
    await asyncio.sleep(0)  # the calls above reach the loop
    early = asyncio.ensure_future(_collect(log))
    worker = threading.Thread(target=lambda: log.stage("index", "docs: 1/2 files read"))
    worker.start()
    await asyncio.to_thread(worker.join)
    log.note("one source was unreadable")
    log.end("done")
    with anyio.fail_after(HANG_GUARD):
        seen = await early
    late = await _collect(log)  # after the end: the same story, from the history
    assert [e.message for e in seen] == ["decompose", "", "index: docs: 1/2 files read",
                                         "note: one source was unreadable", "done"]  # fmt: skip
    assert seen[1].kind == "counts" and seen[1].counts == {"found": 5, "kept": 2}, "only the last counts"
    assert [e.kind for e in late] == ["stage", "stage", "note", "counts", "end"]
    assert seen[-1].outcome == "done" and seen[-1].place == TOTAL
    assert log.current == "index: docs: 1/2 files read"


async def test_a_run_that_failed_ends_below_the_total_and_a_second_end_is_ignored() -> None:
    log = EventLog(asyncio.get_running_loop())
    log.stage("draft")
    log.end("failed", "the model endpoint refused the key")
    log.end("done")
    events = await _collect(log)
    assert [(e.kind, e.outcome) for e in events] == [("stage", ""), ("end", "failed")]
    assert events[-1].message == "the model endpoint refused the key" and events[-1].place < TOTAL


async def _hello(scope: dict[str, Any], receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"hello"})


async def _status(bind: HttpBind, headers: dict[str, str], path: str = "/any/page") -> int:
    transport = httpx.ASGITransport(app=HttpGuard(_hello, bind))
    async with httpx.AsyncClient(transport=transport, base_url=bind.base_url) as client:
        return (await client.get(path, headers=headers)).status_code


async def test_the_guard_checks_token_host_and_origin_in_front_of_any_app() -> None:
    public = HttpBind("0.0.0.0", 8600, TOKEN, command="serve")
    auth = {"Authorization": f"Bearer {TOKEN}"}
    assert await _status(public, {}) == 401
    assert await _status(public, auth) == 200
    assert await _status(public, {**auth, "Host": "evil.example"}) == 421
    assert await _status(public, {**auth, "Origin": "http://evil.example"}) == 403
    assert await _status(public, {**auth, "Origin": "http://0.0.0.0:8600"}) == 200
    local = HttpBind("127.0.0.1", 8600)
    assert await _status(local, {"Host": "localhost:8600", "Origin": "http://127.0.0.1:8600"}) == 200
    assert await _status(local, {"Host": "localhost:8601"}) == 421, "another port is another site"


def test_a_public_bind_without_a_token_names_the_command_that_asked() -> None:
    from research_agent.errors import ConfigError

    with pytest.raises(ConfigError, match=r"^serve on 0.0.0.0 \(not loopback\) needs a bearer token: set X_TOKEN"):
        HttpBind("0.0.0.0", 8600, command="serve", token_env="X_TOKEN")


def test_a_batch_takes_as_many_slots_as_are_free_and_at_least_one() -> None:
    slots = RunSlots(4)
    with slots.take() as one, slots.take(8) as many:
        assert (one, many, slots.free) == (1, 3, 0)
        with pytest.raises(Busy), slots.take(2):
            pass
    assert slots.active == 0


def test_the_service_floor_imports_without_the_mcp_sdk_starlette_or_uvicorn() -> None:
    script = (
        "import sys\n"
        "sys.modules['mcp'] = None\n"  # importing mcp now fails, as without the extra
        "import research_agent.service, research_agent.service.events, research_agent.service.http\n"
        "import research_agent.service.runs, research_agent.service.cpu\n"
        "print(sorted(m for m in ('mcp.server', 'starlette', 'uvicorn', 'sse_starlette') if m in sys.modules))\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=HANG_GUARD)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
