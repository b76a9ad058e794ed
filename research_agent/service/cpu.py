"""CPU-heavy work of a front end (review, export) in worker processes, so it can never stall the event loop.

A regex or a parser holds the GIL for as long as it runs: in a thread it would still stop
every other session of a server. :class:`CpuWork` runs a module-level function in one of
a few worker processes (the extraction pool's machinery: a worker that crashes or passes
its time limit is killed and replaced, and names its job) and awaits the answer, so the
loop keeps answering other clients meanwhile.

Any front end uses it the same way::

    review = await service.cpu.run(review_markdown, text, rules=rules, mode=mode)

The function and its arguments must pickle (a module-level function, plain data). A
:class:`~research_agent.errors.ResearchError` raised in the worker is raised again here
with its own message; a crash, a timeout or any other exception is a one-line
:class:`CpuWorkFailed`. Where no process can be started (a sandbox), the work runs in a
thread of this process instead.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from ..errors import CpuWorkFailed, ResearchError
from ..fetch.processes.pool import CRASHED, TIMED_OUT, UNAVAILABLE, ExtractionPool, Failed

__all__ = ["CpuWork", "CpuWorkFailed", "CPU_WORKERS", "CPU_TIMEOUT"]

T = TypeVar("T")

CPU_WORKERS = 2  # reviews at once; one more waits for a worker
CPU_TIMEOUT = 120.0  # seconds one call may take in a worker (a 1 MiB pathological review takes ~15 s)


def _call(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[str, Any]:
    """Runs in the worker: ("ok", result), or ("error", a ResearchError) to raise in the caller."""
    try:
        return "ok", fn(*args, **kwargs)
    except ResearchError as exc:
        return "error", exc


class CpuWork:
    """Up to ``workers`` worker processes for one front end's CPU-heavy calls, started on the first."""

    def __init__(self, *, workers: int = CPU_WORKERS, timeout: float = CPU_TIMEOUT) -> None:
        self.workers = workers
        self.timeout = timeout
        self._pool: ExtractionPool | None = None
        self._lock = threading.Lock()

    def _the_pool(self) -> ExtractionPool:
        with self._lock:
            if self._pool is None:
                self._pool = ExtractionPool(_call, workers=self.workers, timeout=self.timeout)
            return self._pool

    async def run(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)`` in a worker process, awaited without blocking the loop."""
        future = self._the_pool().submit(fn, args, kwargs)
        outcome = await asyncio.wrap_future(future)
        if isinstance(outcome, Failed):
            if outcome.reason == UNAVAILABLE:
                outcome = await asyncio.to_thread(_call, fn, args, kwargs)
            else:
                raise CpuWorkFailed(_failure(getattr(fn, "__name__", "the work"), outcome, self.timeout))
        status, value = outcome
        if status == "error":
            raise value
        return value

    def close(self) -> None:
        """Stop the workers (a call still running is abandoned)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close(cancel=True)


def _failure(name: str, failed: Failed, timeout: float) -> str:
    if failed.reason == TIMED_OUT:
        return f"{name} took longer than {timeout:g} s and was stopped"
    if failed.reason == CRASHED:
        return f"{name} failed: {failed.detail}"
    return f"{name} failed: {failed.detail or failed.reason}"
