"""Web search providers: DuckDuckGo (``ddgs``), SearXNG and Tavily.

Each provider turns a query into :class:`~research_agent.sources.SearchHit` objects
(title, URL, snippet, provider name, publication date when known). A provider that
cannot answer (timeout, HTTP 5xx, rate limit, bad key, malformed JSON) raises
:class:`ProviderError`; :func:`research_agent.search.registry.search_all` records it as
a :class:`~research_agent.search.base.ProviderFailure` and goes on with the others.
Results whose URL is not an absolute http(s) URL are dropped here (and logged). SearXNG
and Tavily read their replies through :mod:`.reply`: streamed, capped in decoded size,
and timed as a whole request.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import httpx

from ..fetch.urls import is_web_url
from ..sources import SearchHit
from ..text.controls import one_line
from .base import ProviderError
from .reply import MAX_REPLY_BYTES, ReplyLimits, request_json

__all__ = [
    "ProviderError",
    "DdgsProvider",
    "SearxngProvider",
    "TavilyProvider",
    "DdgsBackend",
    "TAVILY_BASE_URL",
]

log = logging.getLogger(__name__)

DdgsBackend = Callable[[str, int], list[dict[str, Any]]]
"""``(query, max_results) -> list of ddgs result dicts`` (keys title, href, body)."""

TAVILY_BASE_URL = "https://api.tavily.com"
_MAX_TITLE = 300
_MAX_SNIPPET = 2000


def _text(value: Any, limit: int) -> str:
    if value is None:
        return ""
    text = one_line(value)
    return text[:limit]


def _hits(
    provider: str,
    rows: Iterable[Any],
    *,
    max_results: int,
    url_key: str | tuple[str, ...],
    snippet_key: str,
    date_key: str | None,
) -> list[SearchHit]:
    """Turn provider rows into hits, dropping rows without a usable URL."""
    keys = (url_key,) if isinstance(url_key, str) else url_key
    hits: list[SearchHit] = []
    dropped = 0
    for row in rows:
        if len(hits) >= max_results:
            break
        if not isinstance(row, Mapping):
            dropped += 1
            continue
        url = next((str(row[k]).strip() for k in keys if isinstance(row.get(k), str) and row.get(k)), "")
        if not is_web_url(url):
            dropped += 1
            continue
        published = row.get(date_key) if date_key else None
        hits.append(
            SearchHit(
                title=_text(row.get("title"), _MAX_TITLE) or url,
                location=url,
                snippet=_text(row.get(snippet_key), _MAX_SNIPPET),
                provider=provider,
                published=_text(published, 64) or None,
            )
        )
    if dropped:
        log.info("%s: dropped %d result(s) without a usable http(s) URL", provider, dropped)
    return hits


def _result_hits(provider: str, data: Any, *, max_results: int, date_key: str) -> list[SearchHit]:
    """The hits of a JSON answer's ``results`` list of ``url``/``title``/``content`` rows
    (SearXNG's and Tavily's shape; only the date's key differs)."""
    if not isinstance(data, Mapping) or not isinstance(data.get("results"), list):
        raise ProviderError(provider, "answer has no 'results' list")
    return _hits(provider, data["results"], max_results=max_results, url_key="url", snippet_key="content", date_key=date_key)


class DdgsProvider:
    """DuckDuckGo (and the other engines ``ddgs`` aggregates); no key needed.

    ``backend`` is the seam to the outside world: a blocking callable
    ``(query, max_results) -> list[dict]``. The default calls
    ``ddgs.DDGS().text(query, max_results=...)``. It runs in a worker thread.
    """

    name = "ddgs"

    def __init__(self, backend: DdgsBackend | None = None, *, timeout: float = 20.0) -> None:
        self._backend = backend or _ddgs_text
        self._timeout = timeout

    async def search(self, query: str, *, max_results: int) -> list[SearchHit]:
        try:
            rows = await asyncio.wait_for(
                asyncio.to_thread(self._backend, query, max_results), timeout=self._timeout
            )
        except TimeoutError:
            raise ProviderError(self.name, f"timed out after {self._timeout:g}s") from None
        except Exception as exc:  # ddgs raises its own tree plus whatever its HTTP stack raises
            raise ProviderError(self.name, _ddgs_reason(exc)) from None
        if not isinstance(rows, list):
            raise ProviderError(self.name, f"backend returned {type(rows).__name__}, not a list")
        return _hits(
            self.name,
            rows,
            max_results=max_results,
            url_key=("href", "url"),
            snippet_key="body",
            date_key="date",
        )


_OFFLINE = re.compile(r"dns|resolv|error sending request|connect|network is unreachable|no route", re.I)
_ERROR_NAME = re.compile(r"\b([A-Z][A-Za-z]*(?:Error|Exception))\b")


def _ddgs_reason(exc: Exception) -> str:
    """Why ddgs failed, in a few words: its exceptions nest every engine's whole error text."""
    kind, text = type(exc).__name__, one_line(exc)
    if "Ratelimit" in kind:
        return "rate limited"
    if "Timeout" in kind or "timed out" in text.lower():
        return "timed out"
    if _OFFLINE.search(text):
        inner = _ERROR_NAME.search(text)
        return "cannot reach the search engine (offline, or no DNS)" + (f": {inner.group(1)}" if inner else "")
    first = text.split(" > ")[0].split("; ")[0]
    return f"{kind}: {first}"[:120]


def _ddgs_text(query: str, max_results: int) -> list[dict[str, Any]]:
    from ddgs import DDGS
    from ddgs.exceptions import DDGSException

    try:
        return DDGS().text(query, max_results=max_results)
    except DDGSException as exc:
        # ddgs reports an empty result set as an exception; that is an answer, not a failure.
        if "no results" in str(exc).lower():
            return []
        raise


class SearxngProvider:
    """A SearXNG instance's JSON API: ``GET {url}/search?q=...&format=json``.

    The instance must list ``json`` under ``search.formats`` in its settings.yml; when
    it does not, SearXNG answers 403 and this provider says so.
    """

    name = "searxng"

    def __init__(
        self,
        url: str,
        http_client: httpx.AsyncClient,
        *,
        timeout: float = 20.0,
        max_bytes: int = MAX_REPLY_BYTES,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.url = url.rstrip("/")
        self._client = http_client
        self._limits = ReplyLimits(timeout, max_bytes, clock)

    async def search(self, query: str, *, max_results: int) -> list[SearchHit]:
        try:
            data = await request_json(
                self.name,
                self._client,
                "GET",
                f"{self.url}/search",
                limits=self._limits,
                params={"q": query, "format": "json", "pageno": 1},
                headers={"Accept": "application/json"},
            )
        except ProviderError as exc:
            if "HTTP 403" in exc.reason:
                raise ProviderError(
                    self.name, "instance refused format=json (HTTP 403): enable json in search.formats"
                ) from None
            raise
        return _result_hits(self.name, data, max_results=max_results, date_key="publishedDate")


class TavilyProvider:
    """Tavily's search API: ``POST {base_url}/search`` with a bearer key."""

    name = "tavily"

    def __init__(
        self,
        api_key: str,
        http_client: httpx.AsyncClient,
        base_url: str = TAVILY_BASE_URL,
        *,
        timeout: float = 30.0,
        max_bytes: int = MAX_REPLY_BYTES,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self._api_key = api_key
        self._client = http_client
        self.base_url = base_url.rstrip("/")
        self._limits = ReplyLimits(timeout, max_bytes, clock)

    def __repr__(self) -> str:  # never show the key
        return f"TavilyProvider(base_url={self.base_url!r})"

    async def search(self, query: str, *, max_results: int) -> list[SearchHit]:
        body = {
            "query": query,
            "max_results": max(1, min(int(max_results), 20)),
            "search_depth": "basic",
            "include_answer": False,
            "include_raw_content": False,
            "include_images": False,
        }
        try:
            data = await request_json(
                self.name,
                self._client,
                "POST",
                f"{self.base_url}/search",
                limits=self._limits,
                json=body,
                headers={"Authorization": f"Bearer {self._api_key}", "Accept": "application/json"},
            )
        except ProviderError as exc:
            if exc.reason.startswith("HTTP 43"):  # 432/433: plan or pay-as-you-go limit reached
                raise ProviderError(self.name, f"usage limit reached ({exc.reason})") from None
            raise
        return _result_hits(self.name, data, max_results=max_results, date_key="published_date")
