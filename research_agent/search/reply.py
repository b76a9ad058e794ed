"""One bounded request to a search API: the reply is streamed, capped and timed as a whole.

A search provider's reply is outside input like a page: it is read through the same
bounded reader as page fetching (:func:`research_agent.fetch.body.read_body`), which
decompresses gzip/deflate itself so the cap counts decoded bytes (a 10 MB gzip that
expands to 10 GB stops at the cap), and the whole request, connect to last byte, has one
wall-clock limit (``asyncio.timeout``): a reply that trickles a byte every two seconds
fails at the limit instead of restarting a per-read timeout forever. Breaking either
limit is a :class:`~research_agent.search.base.ProviderError`, like any other provider
failure: the run goes on with the other providers. A 429 is a :class:`RateLimited` that
carries the ``Retry-After`` the API asked for, so that a polite caller can honour it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from ..errors import FetchRefused, RateLimited
from ..fetch.body import read_body
from ..llm.client.retry import parse_retry_after
from .base import ProviderError

__all__ = ["ReplyLimits", "RateLimited", "request_json", "request_bytes", "parse_json", "MAX_REPLY_BYTES"]

MAX_REPLY_BYTES = 5 * 1024 * 1024  # a page of results is tens of KB


@dataclass(frozen=True)
class ReplyLimits:
    """How long one request may take in all (seconds) and how big its decoded reply may be.

    ``clock`` (seconds, monotonic) is the event loop's unless given: the limit is also
    checked against it after every chunk, which is how a test drives a trickling reply
    with a clock of its own rather than by waiting.
    """

    timeout: float = 20.0
    max_bytes: int = MAX_REPLY_BYTES
    clock: Callable[[], float] | None = None


class _Expired(Exception):
    """The whole-request limit passed between two chunks (by ``ReplyLimits.clock``)."""


async def _read(response: httpx.Response, limits: ReplyLimits, deadline: float, clock: Callable[[], float]) -> bytes:
    def check_time() -> None:
        if clock() >= deadline:
            raise _Expired

    return await read_body(response, limits.max_bytes, None, check_binary=False, on_chunk=check_time)


def _status_reason(response: httpx.Response) -> str | None:
    code = response.status_code
    if code in (401, 403):
        return f"not authorised (HTTP {code})"
    if code >= 400:
        return f"HTTP {code}"
    return None


def _refusal(exc: FetchRefused, limits: ReplyLimits) -> str:
    if exc.reason == "too_large":
        return f"answered with more than {limits.max_bytes:,} bytes (the reply cap)"
    if exc.reason == "bad_encoding":
        return f"answered in an encoding that is not read ({exc.detail[:40]})"
    return f"answered with a corrupt reply ({exc.reason})"


async def _exchange(
    provider: str, client: httpx.AsyncClient, request: httpx.Request, limits: ReplyLimits
) -> bytes:
    clock = limits.clock or asyncio.get_running_loop().time
    deadline = clock() + limits.timeout
    response = await client.send(request, stream=True)
    try:
        if response.status_code == 429:
            raise RateLimited(provider, parse_retry_after(dict(response.headers)))
        reason = _status_reason(response)
        if reason:
            raise ProviderError(provider, reason)
        return await _read(response, limits, deadline, clock)
    finally:
        await response.aclose()


async def request_bytes(
    provider: str, client: httpx.AsyncClient, method: str, url: str, *, limits: ReplyLimits, **kwargs: Any
) -> bytes:
    """Send one request and return its decoded body, or raise ProviderError (one line)."""
    headers = {**kwargs.pop("headers", {}), "Accept-Encoding": "gzip, deflate"}  # what read_body decodes
    try:
        async with asyncio.timeout(limits.timeout):
            request = client.build_request(method, url, headers=headers, timeout=limits.timeout, **kwargs)
            return await _exchange(provider, client, request, limits)
    except (TimeoutError, httpx.TimeoutException, _Expired):
        raise ProviderError(provider, f"timed out after {limits.timeout:g}s") from None
    except FetchRefused as exc:
        raise ProviderError(provider, _refusal(exc, limits)) from None
    except httpx.HTTPError as exc:
        raise ProviderError(provider, f"request failed: {type(exc).__name__}: {exc}") from None


def parse_json(provider: str, data: bytes) -> Any:
    """A reply's JSON, or ProviderError: invalid JSON, or nested past the parser's stack."""
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        raise ProviderError(provider, "answered with invalid JSON") from None


async def request_json(
    provider: str, client: httpx.AsyncClient, method: str, url: str, *, limits: ReplyLimits, **kwargs: Any
) -> Any:
    """Send one request and return its JSON reply, or raise ProviderError (one line)."""
    return parse_json(provider, await request_bytes(provider, client, method, url, limits=limits, **kwargs))
