"""Extraction for async callers (the fetcher): in this process while documents come one
at a time, in an :class:`~.pool.ExtractionPool` once they overlap.

Its own module so that :mod:`.pool`, which a corpus reader's worker processes import,
does not bring asyncio into them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from .pool import EXTRACT_TIMEOUT, MIN_POOL_JOBS, ExtractionPool, cpu_budget
from .worker_process import UNAVAILABLE, Failed

__all__ = ["OverlapExtraction"]


class OverlapExtraction:
    """``fn`` for async callers (the fetcher): in a thread of this process while
    documents come one at a time; from the moment two overlap, worker processes start
    in the background and take every document once one is ready. While they start, the
    documents waiting are extracted here one by one, so a handful of pages never waits
    for the workers, and the first of a long list are done by the time they are up.

    At most ``limit`` jobs (default 2 per worker) are in the pool at once, so what waits
    is held by its caller. A job the pool could not run (no worker could start) runs here.
    Only jobs in a worker are protected from a crash or hang; the ones here are not.
    """

    def __init__(self, fn: Callable[..., Any], *, timeout: float = EXTRACT_TIMEOUT, limit: int | None = None):
        self.fn = fn
        self.timeout = timeout
        self._pool: ExtractionPool | None = None
        self._active = 0
        self._here_busy = False  # the GIL runs one extraction at a time anyway
        self._changed = asyncio.Condition()  # the thread here is free, or the workers are ready
        self._pool_up: asyncio.Future[None] | None = None
        self._slots = asyncio.Semaphore(limit or 2 * cpu_budget())

    @property
    def pool_started(self) -> bool:
        """Whether worker processes were started (until :meth:`aclose`)."""
        return self._pool is not None

    async def run(self, *args: Any, **kwargs: Any) -> Any:
        """``fn(*args, **kwargs)``, or a :class:`Failed` when its worker crashed or hung."""
        self._active += 1
        try:
            if self._pool is None and self._active >= MIN_POOL_JOBS:
                self._start_pool()
            if await self._take_here():
                return await self._run_here(*args, **kwargs)
            async with self._slots:
                result = await self._submit(*args, **kwargs)
            if isinstance(result, Failed) and result.reason == UNAVAILABLE:
                await self._take_here(wait_for_pool=False)
                result = await self._run_here(*args, **kwargs)
            return result
        finally:
            self._active -= 1

    async def _submit(self, *args: Any, **kwargs: Any) -> Any:
        """The job's result from a worker, or UNAVAILABLE (run it here) when :meth:`aclose` closed the
        pool while the job waited for its turn."""
        pool = self._pool
        try:
            if pool is None:
                raise RuntimeError("the extraction pool is closed")
            future = pool.submit(*args, **kwargs)
        except RuntimeError as exc:
            return Failed(UNAVAILABLE, str(exc))
        return await asyncio.wrap_future(future)

    def _start_pool(self) -> None:
        pool = self._pool = ExtractionPool(self.fn, timeout=self.timeout)
        pool.start()
        self._pool_up = asyncio.ensure_future(self._announce_when_ready(pool))

    async def _announce_when_ready(self, pool: ExtractionPool) -> None:
        await asyncio.to_thread(pool.ready.wait)  # set when ready, broken or closed: it ends
        async with self._changed:
            self._changed.notify_all()

    def _pool_ready(self) -> bool:
        return self._pool is not None and self._pool.ready.is_set()

    async def _take_here(self, *, wait_for_pool: bool = True) -> bool:
        """Wait until this thread is free (True: it is now taken) or, with
        ``wait_for_pool``, a worker is ready (False)."""
        async with self._changed:
            await self._changed.wait_for(
                lambda: not self._here_busy or (wait_for_pool and self._pool_ready())
            )
            if wait_for_pool and self._pool_ready():
                return False
            self._here_busy = True
            return True

    async def _run_here(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return await asyncio.to_thread(self.fn, *args, **kwargs)
        finally:
            async with self._changed:
                self._here_busy = False
                self._changed.notify_all()

    async def aclose(self) -> None:
        """Stop the workers, if any were started; what is still queued is cancelled."""
        pool, self._pool = self._pool, None
        if pool is not None:
            await asyncio.to_thread(pool.close)
        if self._pool_up is not None:
            await self._pool_up  # ends: the closed pool's ready event is set
            self._pool_up = None
