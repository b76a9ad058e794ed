"""One session of a batch, as every front end runs it (the ``batch`` command, the MCP tool).

It builds what the runs share (the one model client behind the endpoint's limits, the one page
reader), runs the questions not done yet (:func:`~.runner.run_batch`), closes what it built,
and writes the batch page, however the session ends: finished, failed, or cancelled.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx

from ..config import Settings
from ..llm import ChatModel
from ..search.registry import WEB_PROVIDERS, provider_names
from .limits import EndpointLimits, LimitedModel, limited_http_client
from .plan import Batch
from .runner import BatchWatcher, ResearchFn, RunOptions, run_batch
from .summary import lesson_statuses, summary_data, write_summary

__all__ = ["SessionOptions", "ModelFactory", "Endpoint", "open_endpoint", "run_session", "shared_reader", "statuses_now",
           "default_model", "default_parallel", "MAX_PARALLEL"]

log = logging.getLogger(__name__)

MAX_PARALLEL = 8

ModelFactory = Callable[[Settings, httpx.AsyncClient], ChatModel]


def default_model(settings: Settings, http_client: httpx.AsyncClient) -> ChatModel:
    """The batch's one model client: the OpenAI-compatible client of ``settings`` over ``http_client``."""
    from ..llm import OpenAIChatModel

    return OpenAIChatModel.from_settings(settings, http_client=http_client)


def default_parallel(settings: Settings) -> int:
    """Questions at once when not told: one more than the endpoint's slots (so that a question
    fetching pages leaves no slot idle), at most :data:`MAX_PARALLEL`."""
    return min(MAX_PARALLEL, settings.llm_concurrency + 1)


@dataclass(frozen=True)
class SessionOptions:
    """How a session runs: questions at once, retries, per-minute limits (None: none), the HTML pages."""

    parallel: int
    retries: int = 2
    rpm: float | None = None
    tpm: float | None = None
    html: bool = False


@dataclass
class Endpoint:
    """What the runs of a session share on the model endpoint: the one model client behind the
    endpoint's ``limits``, and what closing it closes (the page reader joins once made)."""

    model: LimitedModel
    limits: EndpointLimits
    owned: list[Any]

    async def aclose(self) -> None:
        await _close(self.owned)


async def open_endpoint(
    base: Settings,
    options: SessionOptions,
    make_model: ModelFactory,
    *,
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> Endpoint:
    """The session's model client behind the limits ``options`` set; what it opened is closed
    again when the client cannot be made (no endpoint, a bad key file), which is raised."""
    limits = EndpointLimits(rpm=options.rpm, tpm=options.tpm, clock=clock, sleep=sleep)
    http_client = limited_http_client(limits, max_bytes=base.llm_max_answer_bytes)
    owned: list[Any] = [http_client]
    try:
        model = LimitedModel(make_model(base, http_client), limits)
    except BaseException:
        await _close(owned)
        raise
    return Endpoint(model, limits, [model, *owned])


async def run_session(
    batch: Batch,
    base: Settings,
    *,
    options: SessionOptions,
    research: ResearchFn,
    make_model: ModelFactory = default_model,
    watcher: BatchWatcher | None = None,
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> dict[str, Any]:
    """Run ``batch`` (see the module docstring) and return what its page shows (also kept as
    ``batch.page``). The page is written even when the session is cancelled or stopped by an
    error, which then goes on."""
    state = batch.state
    endpoint = await open_endpoint(base, options, make_model, sleep=sleep, clock=clock)  # refused: nothing written
    started = time.monotonic()
    try:
        if batch.new:
            state.lessons_at_start = await asyncio.to_thread(lesson_statuses, base)
        reader = shared_reader(batch, base)
        if reader is not None:
            endpoint.owned.insert(0, reader)
        await run_batch(batch, model=endpoint.model, research=research, reader=reader, watcher=watcher, sleep=sleep,
                        options=RunOptions(options.parallel, options.retries, options.html))  # fmt: skip
    finally:
        await endpoint.aclose()
        state.wall_seconds += time.monotonic() - started
        state.limits = endpoint.limits.stats.as_dict()
        state.status = "stopped" if state.status == "running" else state.status
        state.save()
        batch.page = summary_data(state, lessons_now=await statuses_now(base))
        write_summary(batch.page, base.reports_dir, html=options.html)
    return batch.page


def shared_reader(batch: Batch, base: Settings) -> Any:
    """One page reader for every run of the batch that reads web pages (its fetch and extraction
    bounded as for one run); None when no question searches the web."""
    if not any(WEB_PROVIDERS.intersection(provider_names(s)) for s in batch.settings.values()):
        return None
    from ..fetch import Fetcher

    return Fetcher.from_settings(base)


async def statuses_now(base: Settings) -> dict[str, str]:
    try:
        return await asyncio.to_thread(lesson_statuses, base)
    except asyncio.CancelledError:  # a second Ctrl-C while the page is written: no lesson changes shown
        return {}


async def _close(owned: list[Any]) -> None:
    """Close what the session made: its model client, HTTP client and page reader, each declaring ``aclose``."""
    for resource in owned:
        try:
            await resource.aclose()
        except Exception as exc:  # closing must never hide the batch's own outcome
            log.debug("closing %r failed: %s", resource, exc)
