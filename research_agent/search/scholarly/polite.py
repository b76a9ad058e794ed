"""One scholarly API's requests: paced to its published limit, ``Retry-After`` honoured, bounded.

Every request of a provider goes through its :class:`Api`: one at a time, each starting at least
``interval`` seconds after the one before (the API's published rate for callers without a key:
arXiv asks for one request every three seconds, NCBI for three a second), each read through the
bounded reader with one time limit (:func:`research_agent.search.reply.request_bytes`).

A 429 pushes the provider's next request back by the ``Retry-After`` it names (or by a second when
it names none). A wait no longer than the request's own time limit is waited out and the request
tried once more; a longer one fails this request, and every request of the provider fails at once
until it has passed ("resting"), so that a run does not queue behind an API that asked it to stop.

A key travels in the query of every request of a keyed API, and httpx logs each request's address
(``HTTP Request: GET ...?api_key=...``): once such an API is made, httpx's log records show a key as
``***`` (:func:`~research_agent.text.controls.hide_keys`), whatever handler a program gives them.

``clock`` and ``sleep`` are the pace's seams: a test passes its own clock and a ``sleep`` that only
moves it, and so sees how long a request waited without waiting.
"""

from __future__ import annotations

import asyncio
import logging
import math
import xml.etree.ElementTree as ET
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any

import httpx

from ...errors import Resting
from ...text.controls import hide_keys
from ..base import ProviderError
from ..reply import RateLimited, ReplyLimits, parse_json, request_bytes

__all__ = ["Pace", "Api", "ApiProvider", "parse_xml", "UNKEYED_WAIT"]

Sleep = Callable[[float], Awaitable[Any]]
UNKEYED_WAIT = 1.0  # seconds after a 429 that names no Retry-After


class Pace:
    """Requests one at a time, each starting ``interval`` seconds or more after the last one started."""

    def __init__(self, interval: float, *, clock: Callable[[], float] | None = None, sleep: Sleep | None = None) -> None:
        self.interval = max(0.0, float(interval))
        self._clock = clock
        self._sleep = sleep or asyncio.sleep
        self._lock = asyncio.Lock()
        self._next = -math.inf

    def now(self) -> float:
        return self._clock() if self._clock is not None else asyncio.get_running_loop().time()

    def hold(self, seconds: float) -> None:
        """Start no request for ``seconds`` from now (a Retry-After)."""
        self._next = max(self._next, self.now() + seconds)

    def rest_left(self) -> float:
        """Seconds until the next request may start (0 when it may start now)."""
        return max(0.0, self._next - self.now())

    @asynccontextmanager
    async def turn(self, *, longest_wait: float) -> AsyncIterator[None]:
        """The provider's next turn, waited for when it is at most ``longest_wait`` seconds away;
        :class:`Resting` at once when it is further."""
        async with self._lock:
            wait = self.rest_left()
            if wait > longest_wait:
                raise Resting(wait)
            if wait > 0:
                await self._sleep(wait)
            self._next = self.now() + self.interval
            yield


class _KeysHidden(logging.Filter):
    """A log record's message with every key in it shown as ``***``."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if (hidden := hide_keys(message)) != message:
            record.msg, record.args = hidden, None
        return True


_KEYS_HIDDEN = _KeysHidden()


class Api:
    """One provider's way to its API: ``name`` (for errors), the HTTP client, the reply limits, the
    pace, and what every request carries (``params``: a key, a contact address; ``headers``)."""

    def __init__(
        self,
        name: str,
        client: httpx.AsyncClient,
        limits: ReplyLimits,
        pace: Pace,
        *,
        params: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.name = name
        self.client = client
        self.limits = limits
        self.pace = pace
        self._params = {k: v for k, v in (params or {}).items() if v}
        self._headers = {k: v for k, v in (headers or {}).items() if v}
        given = [*self._params.items(), *self._headers.items()]
        self._secrets = [v for k, v in given if "key" in k.lower()]
        if self._secrets and _KEYS_HIDDEN not in logging.getLogger("httpx").filters:
            logging.getLogger("httpx").addFilter(_KEYS_HIDDEN)

    def __repr__(self) -> str:  # never show a key
        return f"Api({self.name!r}, interval={self.pace.interval:g}s)"

    async def get(self, url: str, params: Mapping[str, Any]) -> bytes:
        """The body of ``GET url?params`` (plus the API's own parameters), or ProviderError."""
        for attempt in range(2):
            try:
                async with self.pace.turn(longest_wait=self.limits.timeout):
                    return await request_bytes(
                        self.name, self.client, "GET", url, limits=self.limits,
                        params={**params, **self._params}, headers=self._headers,
                    )  # fmt: skip
            except Resting as exc:
                raise ProviderError(
                    self.name, f"rate limited: resting {exc.seconds:.0f}s more, as the API's Retry-After asked"
                ) from None
            except RateLimited as exc:
                wait = exc.retry_after if exc.retry_after is not None else UNKEYED_WAIT
                self.pace.hold(wait)
                if attempt or wait > self.limits.timeout:
                    raise
            except ProviderError as exc:  # its reason reaches the run record and the report: never a key
                reason = exc.reason
                for secret in self._secrets:
                    reason = reason.replace(secret, "***")
                raise ProviderError(self.name, reason) from None
        raise AssertionError("unreachable")  # the second attempt returns or raises

    async def get_json(self, url: str, params: Mapping[str, Any]) -> Any:
        return parse_json(self.name, await self.get(url, params))

    async def get_xml(self, url: str, params: Mapping[str, Any]) -> ET.Element:
        return parse_xml(self.name, await self.get(url, params))


class ApiProvider:
    """A search provider that asks one API, through ``api``, at ``base_url``."""

    name = ""

    def __init__(self, api: Api, base_url: str) -> None:
        self._api = api
        self.base_url = base_url.rstrip("/")


def parse_xml(provider: str, data: bytes) -> ET.Element:
    """The root element of an XML reply, or ProviderError. A reply that declares entities is refused
    before parsing (no API here needs one; expat bounds expansion anyway, this makes it moot)."""
    if b"<!ENTITY" in data:
        raise ProviderError(provider, "answered with XML that declares entities (refused)")
    try:
        return ET.fromstring(data)
    except (ET.ParseError, RecursionError, ValueError):
        raise ProviderError(provider, "answered with invalid XML") from None
