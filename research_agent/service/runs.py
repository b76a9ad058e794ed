"""Running one research call for a front end: the pipeline, then the critique scheduled as the CLI does.

A caller's cancellation (an MCP client's, a web page's Cancel button) reaches the run the way
Ctrl-C reaches ``research-agent run``: one cancellation into the pipeline's task, which then
unwinds as it always does (a report and its record are written both or neither, temp files
are removed, what the run owns is closed). :func:`unwound_on_cancel` waits for that
unwinding, shielded from a server's repeated cancellation (anyio cancel scopes cancel again
and again), before the call ends.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

import anyio

from ..config import Settings
from ..memory.critique.schedule import Scheduled, after_report
from ..pipeline import research
from ..progress import Progress
from ..results import ResearchResult

__all__ = ["unwound_on_cancel", "research_and_schedule"]

T = TypeVar("T")


async def unwound_on_cancel(coro: Coroutine[Any, Any, T]) -> T:
    """Await ``coro`` in a task of its own; when this is cancelled, cancel the task once and
    wait until it has unwound, then let the cancellation go on."""
    task = asyncio.ensure_future(coro)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        task.cancel()
        with anyio.CancelScope(shield=True):
            await asyncio.wait({task})
        if not task.cancelled():
            task.exception()  # a run that failed as it unwound: retrieved, since nobody is left to tell
        raise


async def research_and_schedule(
    question: str, settings: Settings, progress: Progress
) -> tuple[ResearchResult, Scheduled]:
    """Research ``question`` as ``research-agent run`` does, then ask memory for the critique
    (in a worker thread: waiting for a critique runs an event loop of its own)."""
    result = await research(question, settings=settings, progress=progress)
    scheduled = await asyncio.to_thread(after_report, result.run_record_path, settings)
    return result, scheduled
