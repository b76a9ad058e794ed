"""Streamed answers under test control: server-sent events from an httpx.MockTransport, and a
clock that moves only when a test moves it.

``ManualTicker`` stands in for the idle limit's ticker: ``now()`` is what the test set, and
each ``tick()`` waits until the test calls :meth:`ManualTicker.advance`. ``advance(s,
checked=True)`` also waits until the idle guard has looked at the new time, so a test can
tell idle time from total time without sleeping.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import httpx

__all__ = ["JumpingLoop", "ManualTicker", "event", "content_events", "sse", "sse_response", "usage_event", "DONE"]

DONE = b"data: [DONE]\n\n"


class JumpingLoop(asyncio.SelectorEventLoop):
    """An event loop whose clock a test moves forward: time passes at once, not by waiting."""

    offset = 0.0

    def time(self) -> float:
        return super().time() + self.offset


class ManualTicker:
    """A clock (``now``) and a pace (``tick``) that only the test moves."""

    def __init__(self, time: float = 0.0) -> None:
        self.time = time
        self.calls = 0
        self._release: asyncio.Queue[None] = asyncio.Queue()
        self._called = asyncio.Event()

    def now(self) -> float:
        return self.time

    async def tick(self) -> None:
        self.calls += 1
        self._called.set()
        await self._release.get()

    def step(self) -> None:
        """Let one tick pass, the clock where it is."""
        self._release.put_nowait(None)

    async def advance(self, seconds: float, *, checked: bool = False) -> None:
        """Move the clock and let one tick pass; with ``checked``, return once the guard has
        looked at the new time and is waiting for the next tick."""
        target = self.calls + 1
        self.time += seconds
        self._release.put_nowait(None)
        while checked and self.calls < target:
            self._called.clear()
            await self._called.wait()


def event(content: str | None = None, finish: str | None = None, **extra: Any) -> dict[str, Any]:
    """One chat.completion.chunk with ``content`` in its delta."""
    delta = {} if content is None else {"content": content}
    return {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            **extra}  # fmt: skip


def usage_event(prompt: int, completion: int) -> dict[str, Any]:
    """The last event of a stream asked for usage: no choices, the token counts."""
    return {"object": "chat.completion.chunk", "choices": [],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}}


def content_events(text: str, size: int = 12) -> list[dict[str, Any]]:
    return [event(text[i : i + size]) for i in range(0, len(text), size)]


def sse(payload: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(payload)}\n\n".encode()


def sse_response(chunks: Callable[[], AsyncIterator[bytes]]) -> httpx.Response:
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=chunks())


async def events_then(
    payloads: Sequence[dict[str, Any]], *, before_end: asyncio.Event | None = None, hold: asyncio.Event | None = None,
    end: Sequence[bytes] = (DONE,),
) -> AsyncIterator[bytes]:
    """``payloads`` as events; then set ``before_end`` and wait for ``hold`` (never set: a stall); then ``end``."""
    for payload in payloads:
        yield sse(payload)
    if before_end is not None:
        before_end.set()
    if hold is not None:
        await hold.wait()
    for data in end:
        yield data
