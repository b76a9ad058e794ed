"""An idle limit: stop a block when nothing has arrived for too long, however long it runs.

A streamed answer from a slow server may take many minutes in all and still be healthy,
as long as tokens keep coming. :func:`idle_limit` ends the block only when
:meth:`IdleWatch.touch` has not been called for ``limit`` seconds. The time comes from a
:class:`~research_agent.llm.waiting.Ticker` (its clock, checked at its pace), so tests
tell idle time from total time by moving a clock, without sleeping.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from ...errors import IdleTimeout
from ..waiting import Ticker

__all__ = ["IdleWatch", "IdleTimeout", "idle_limit"]


class IdleWatch:
    """When something last arrived, on the ticker's clock, and how long may pass before the next
    (``limit``: a reader may change it, e.g. once the first token came)."""

    def __init__(self, ticker: Ticker, limit: float) -> None:
        self._now = ticker.now
        self.last = ticker.now()
        self.limit = limit

    def touch(self) -> None:
        """Something arrived now."""
        self.last = self._now()

    def idle(self) -> float:
        """Seconds since something last arrived."""
        return self._now() - self.last


@contextlib.asynccontextmanager
async def idle_limit(limit: float, ticker: Ticker) -> AsyncIterator[IdleWatch]:
    """Run the block until it ends or stays idle for ``limit`` seconds (the watch's ``limit`` from
    then on): then IdleTimeout.

    Like :func:`asyncio.timeout`, the block is stopped by cancelling its task; a
    cancellation from anyone else goes through untouched.
    """
    task = asyncio.current_task()
    assert task is not None, "idle_limit needs a running task"
    watch = IdleWatch(ticker, limit)
    before = task.cancelling()
    fired = False

    async def guard() -> None:
        nonlocal fired
        while True:
            await ticker.tick()
            if watch.idle() >= watch.limit:
                fired = True
                task.cancel()
                return

    guarding = asyncio.ensure_future(guard())
    try:
        yield watch
    except asyncio.CancelledError:
        if fired and task.uncancel() <= before:
            raise IdleTimeout(f"no token for {watch.limit:g}s") from None
        raise
    finally:
        guarding.cancel()
