"""Limits every run of a batch shares on one model endpoint, kept at the ChatModel seam.

All runs of a batch share one model client, so they share its concurrency limit
(``RESEARCH_AGENT_LLM_CONCURRENCY``: calls in flight). On top of it, :class:`EndpointLimits`
holds what a provider meters per minute and what it asks of everyone at once:

* requests per minute (``--rpm``) and tokens per minute (``--tpm``), each a token bucket
  that refills at the rate and holds at most one second's worth (at least one request, and
  never less than what one call needs to start), so a batch never bursts past what a
  provider enforcing its limit per second allows;
* one backoff: a 429 (or a 503 with ``Retry-After``) that any run gets pauses every run's
  next call until the time the endpoint asked for, instead of each run retrying into the
  same limit.

:class:`LimitedModel` wraps the shared model: before each call it waits its turn
(:meth:`EndpointLimits.admit`) with the call's tokens *estimated* from the prompt's length and
the answer's token limit; after it, the estimate is corrected from the usage the endpoint
reported, and every HTTP request the call made beyond the first (a retry, a structured-output
fallback) is charged to the request bucket. :func:`limited_http_client` is the HTTP client the
shared model client is built with (the model client's own, with its limits: bounded bodies, no
redirect to another origin): it counts those requests and hears the 429s. The model client's retry
loop is the only one (the openai SDK's retries are off) and still waits out its own ``Retry-After``;
the pause only keeps the other runs from walking into the same limit meanwhile. Waiting happens
before a call starts, never inside the client's time limits.
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from ..errors import LLMError
from ..llm import ChatModel, ChatRequest, ChatResponse, Usage, parse_retry_after
from ..llm.budget import ContextBudget
from ..llm.client.answers import MAX_ANSWER_BYTES
from ..llm.client.transport import CONNECTION_LIMITS, model_http_client
from ..llm.protocol import TokenCallback
from ..shapes import Plain, shape

__all__ = ["EndpointLimits", "LimitStats", "LimitedModel", "TokenBucket", "limited_http_client", "estimate_tokens"]

DEFAULT_ANSWER_TOKENS = 512  # an answer's tokens, for the estimate, when the call sets no limit
PAUSE_WITHOUT_RETRY_AFTER = 1.0  # seconds every run waits after a 429 that did not say how long
CHARS_PER_TOKEN = 4


def estimate_tokens(request: ChatRequest) -> int:
    """The tokens a call will spend, before it is made: its prompt at four characters a token,
    plus its answer's token limit (or :data:`DEFAULT_ANSWER_TOKENS`)."""
    prompt = (len(request.system) + len(request.user)) // CHARS_PER_TOKEN
    return prompt + (request.max_tokens or DEFAULT_ANSWER_TOKENS)


class TokenBucket:
    """``per_minute`` units a minute, at most ``burst`` at once (default one second's worth, at
    least one). :meth:`take` may leave the level below zero (a call larger than the burst, a
    correction after the call); the debt is paid by waiting before the next :meth:`take`."""

    def __init__(self, per_minute: float, now: float, *, burst: float | None = None) -> None:
        self.rate = per_minute / 60.0
        self.capacity = burst if burst is not None else max(1.0, self.rate)
        self.level = self.capacity
        self._stamp = now

    def _refill(self, now: float) -> None:
        self.level = min(self.capacity, self.level + max(0.0, now - self._stamp) * self.rate)
        self._stamp = max(self._stamp, now)

    def wait(self, amount: float, now: float) -> float:
        """Seconds until ``amount`` may be taken (0: now). More than the burst needs a full bucket."""
        self._refill(now)
        need = min(amount, self.capacity)
        return 0.0 if self.level >= need else (need - self.level) / self.rate

    def take(self, amount: float, now: float) -> None:
        """Take ``amount`` (negative: give it back, up to a full bucket)."""
        self._refill(now)
        self.level = min(self.capacity, self.level - amount)


@dataclass
class LimitStats(Plain):
    """What the limits did: calls let through, seconds waited for the buckets, pauses after a 429."""

    calls: int = 0
    requests: int = 0  # HTTP requests seen (retries and fallbacks included; 0 with a model of no HTTP)
    waited: float = field(default=0.0, metadata=shape(key="waited_seconds", digits=1))
    pauses: int = 0
    # seconds of pause asked for, summed
    paused: float = field(default=0.0, metadata=shape(key="paused_seconds", digits=1))


class EndpointLimits:
    """The per-minute buckets and the shared pause of one endpoint (``rpm``/``tpm`` None: no limit).

    ``clock`` and ``sleep`` are injectable so that tests can run a pause without waiting for it.
    Callers take turns in arrival order.
    """

    def __init__(
        self,
        *,
        rpm: float | None = None,
        tpm: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    ) -> None:
        now = clock()
        self.rpm, self.tpm = rpm, tpm
        self._requests = TokenBucket(rpm, now, burst=1.0) if rpm else None  # evenly spaced: never over rpm in a minute
        self._tokens = TokenBucket(tpm, now) if tpm else None
        self._clock = clock
        self._sleep = sleep
        self._turn = asyncio.Lock()
        self.paused_until = now
        self.stats = LimitStats()

    def _wait(self, tokens: int, now: float) -> float:
        waits = [self.paused_until - now]
        if self._requests is not None:
            waits.append(self._requests.wait(1, now))
        if self._tokens is not None:
            waits.append(self._tokens.wait(tokens, now))
        return max(waits)

    async def admit(self, tokens: int) -> None:
        """Wait until a call of ``tokens`` (estimated) may start, and count it."""
        async with self._turn:
            while (wait := self._wait(tokens, self._clock())) > 0:
                self.stats.waited += wait
                await self._sleep(wait)
            now = self._clock()
            if self._requests is not None:
                self._requests.take(1, now)
            if self._tokens is not None:
                self._tokens.take(tokens, now)
            self.stats.calls += 1

    def settle(self, estimated: int, actual: int | None, requests: int) -> None:
        """Correct a finished call: its tokens as reported (None: unknown, the estimate stands) and
        the HTTP requests it made beyond the first."""
        now = self._clock()
        if self._tokens is not None and actual is not None:
            self._tokens.take(actual - estimated, now)
        if self._requests is not None and requests > 1:
            self._requests.take(requests - 1, now)

    def pause(self, seconds: float) -> None:
        """Every run's next call waits until ``seconds`` from now (a later pause already set stays)."""
        self.stats.pauses += 1
        self.stats.paused += seconds
        self.paused_until = max(self.paused_until, self._clock() + seconds)


class _Call:
    """The HTTP requests of the call in progress in this task (see :func:`limited_http_client`)."""

    def __init__(self) -> None:
        self.requests = 0


_CURRENT: contextvars.ContextVar[_Call | None] = contextvars.ContextVar("batch_call", default=None)


def _tokens_of(usage: Usage | None) -> int | None:
    if usage is None or usage.calls == 0:
        return None
    return usage.prompt_tokens + usage.completion_tokens


class LimitedModel:
    """A ChatModel that waits for ``limits`` before every call of ``inner`` (see the module docstring).

    It streams when ``inner`` does and says ``inner``'s context window; closing it closes ``inner``.
    """

    def __init__(self, inner: ChatModel, limits: EndpointLimits) -> None:
        self.inner = inner
        self.limits = limits

    async def complete(self, request: ChatRequest) -> ChatResponse:
        return await self._limited(request, lambda: self.inner.complete(request))

    async def stream(self, request: ChatRequest, on_tokens: TokenCallback | None = None) -> ChatResponse:
        return await self._limited(request, lambda: self.inner.stream(request, on_tokens))

    async def _limited(self, request: ChatRequest, call: Callable[[], Awaitable[ChatResponse]]) -> ChatResponse:
        estimated = estimate_tokens(request)
        await self.limits.admit(estimated)
        this = _Call()
        token = _CURRENT.set(this)
        try:
            response = await call()
        except LLMError as exc:
            self.limits.settle(estimated, _tokens_of(exc.usage), this.requests)
            raise
        except BaseException:
            self.limits.settle(estimated, None, this.requests)
            raise
        finally:
            _CURRENT.reset(token)
        self.limits.settle(estimated, _tokens_of(response.usage), this.requests)
        return response

    async def context_budget(self) -> ContextBudget | None:
        return await self.inner.context_budget()

    async def aclose(self) -> None:
        await self.inner.aclose()


class _Observing(httpx.AsyncBaseTransport):
    """Counts each request against the call in progress, and turns a 429 into a shared pause."""

    def __init__(self, inner: httpx.AsyncBaseTransport, limits: EndpointLimits) -> None:
        self.inner = inner
        self.limits = limits

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        call = _CURRENT.get()
        if call is not None:
            call.requests += 1
        self.limits.stats.requests += 1
        response = await self.inner.handle_async_request(request)
        if response.status_code in (429, 503):
            asked = parse_retry_after(dict(response.headers))
            if asked is not None or response.status_code == 429:
                self.limits.pause(asked if asked is not None else PAUSE_WITHOUT_RETRY_AFTER)
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


def limited_http_client(
    limits: EndpointLimits, transport: httpx.AsyncBaseTransport | None = None, *, max_bytes: int = MAX_ANSWER_BYTES
) -> httpx.AsyncClient:
    """The HTTP client for the batch's model client (:func:`~research_agent.llm.client.transport.model_http_client`,
    answers capped at ``max_bytes``), its requests counted and its 429s heard by ``limits``.
    ``transport``: what sends them (default: the network). The model client sets each request's
    time limit itself."""
    sender = transport or httpx.AsyncHTTPTransport(limits=CONNECTION_LIMITS)
    return model_http_client(600, max_bytes=max_bytes, transport=_Observing(sender, limits))
