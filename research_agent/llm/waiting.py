"""How long a run has been waiting for the model, for the progress line.

A slow local server can take minutes for one draft; the user sees "waiting for the
model, 45 s" rather than a line that seems stuck. The time comes from
:meth:`research_agent.llm.usage.UsageRecorder.waited`; a :class:`Ticker` says when to
look (and what time it is), so tests drive both without the wall clock.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any, Protocol

__all__ = ["Ticker", "SystemTicker", "report_waits", "waits_reported"]


class Ticker(Protocol):
    """A clock (``now``, monotonic seconds) and a pace (``tick`` returns at the next tick)."""

    def now(self) -> float: ...

    async def tick(self) -> None: ...


class SystemTicker:
    """The real clock, ticking every ``interval`` seconds."""

    def __init__(self, interval: float = 1.0) -> None:
        self.interval = interval

    def now(self) -> float:
        return time.monotonic()

    async def tick(self) -> None:
        await asyncio.sleep(self.interval)


async def report_waits(recorder: Any, progress: Any, ticker: Ticker) -> None:
    """At every tick, put ``waiting=<whole seconds>`` on ``progress`` when it changed."""
    shown = 0
    while True:
        await ticker.tick()
        waited = int(recorder.waited())
        if waited != shown:
            progress.counts(waiting=waited)
            shown = waited


@contextlib.asynccontextmanager
async def waits_reported(recorder: Any, progress: Any, ticker: Ticker) -> AsyncIterator[None]:
    """Report waits in the background for the duration of the block."""
    task = asyncio.create_task(report_waits(recorder, progress, ticker))
    try:
        yield
    finally:
        # Cancel without awaiting: an await here would let a deadline that passed while the
        # block held the loop (a slow lint rule) cancel us and hide the block's own error.
        task.cancel()
        progress.counts(waiting=0)
