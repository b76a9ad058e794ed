"""Fetch web pages safely and concurrently, and extract their text.

:class:`Fetcher` is the one way research-agent reads a URL:

* bounded concurrency, overall and per host; connect and total timeouts (the total
  covers robots.txt, every redirect and the whole body, so a page that trickles
  forever is cut off);
* every host (each redirect hop too, robots.txt included) passes the address guard
  (:mod:`.guard`): resolved first, non-public addresses refused unless
  ``allow_private``, the connection pinned to the address that was checked;
* a page keeps the addresses it was fetched from (every hop), and a cached page is
  served only when the guard would accept all of them, so the cache is no way around it;
* redirects are followed by hand (at most ``max_redirects``), loops detected;
* the body is read with a bound on decoded content (:mod:`.body`);
* HTML, XHTML and plain text are accepted (PDF too when ``pypdf`` is installed);
  binary content served as text is refused;
* robots.txt is fetched once per host per run and obeyed unless ``respect_robots`` is off;
* text is extracted by :func:`.extract.extract`, the same rules as corpus files: in a
  thread while pages come one at a time, in worker processes (one per CPU,
  :mod:`.processes.pool`) once two overlap; a page that crashes or hangs the extractor costs that
  page (``extract_error``), and the workers stop when the Fetcher is closed. At most
  :attr:`Fetcher.max_pending` pages are held in memory at once.

Page text is not sanitized here: the pipeline sanitizes everything before it enters a
prompt. Pages that look like prompt injection are counted in :attr:`Fetcher.stats`.

Failures are values, not exceptions: :meth:`Fetcher.fetch` returns a
:class:`FetchFailure` whose ``reason`` is one of :data:`FAILURE_REASONS`.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit, urlunsplit

import httpx

from ..sources import Document, Page, SearchHit
from ..text.sanitize import looks_like_injection
from ..version import __version__
from .body import Body, parse_content_type, read_body
from .extract import (
    BAD_PDF,
    BINARY,
    PDF,
    PDF_UNSUPPORTED,
    UNDECODABLE,
    Unreadable,
    extract,
    kind_for_mime,
    pdf_supported,
)
from .guard import AddressGuard, Pinned, Resolver
from .outcome import FetchFailure, FetchRefused, FetchStats, SourceRead
from .processes.overlap import OverlapExtraction
from .processes.pool import EXTRACT_TIMEOUT, Failed, cpu_budget
from .reading import local_source, page_source, snippet_source, work_source
from .robots import ROBOTS_MAX_BYTES, RobotsRules
from .urls import is_web_url, registrable_domain

if TYPE_CHECKING:
    from ..config import Settings
    from .cache import PageCache

__all__ = ["Fetcher", "DEFAULT_USER_AGENT", "MAX_PDF_PAGES"]

log = logging.getLogger(__name__)

MAX_PDF_PAGES = 300  # a page's reader wants passages, not a whole book: the first pages are read
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_PDF_TYPE = "application/pdf"
# How extraction's reasons read among FAILURE_REASONS.
_UNREADABLE = {BINARY: "binary_content", UNDECODABLE: "decode_error", BAD_PDF: "extract_error"}
_UNREADABLE[PDF_UNSUPPORTED] = "bad_content_type"


DEFAULT_USER_AGENT = f"research-agent/{__version__} (+https://github.com/research-agent/research-agent)"


class Fetcher:
    """Safe, bounded, cached page fetching for one run (or one program).

    Use as ``async with Fetcher(...) as f:``, or call :meth:`aclose` when done; an
    ``http_client`` passed in is left open. ``resolver`` is the DNS seam
    (``async host -> [addresses]``); the default asks the system resolver.
    ``user_agent`` defaults to :func:`default_user_agent`. ``extractor`` is
    :func:`.extract.extract` or a module-level stand-in with its signature;
    ``extract_timeout`` limits each page's extraction in a worker process.
    """

    def __init__(
        self,
        *,
        concurrency: int = 8,
        per_host: int = 2,
        connect_timeout: float = 10.0,
        total_timeout: float = 20.0,
        max_bytes: int = 5 * 1024 * 1024,
        max_redirects: int = 5,
        allow_private: bool = False,
        respect_robots: bool = True,
        user_agent: str | None = None,
        cache: PageCache | None = None,
        resolver: Resolver | None = None,
        http_client: httpx.AsyncClient | None = None,
        extractor: Callable[..., Document | Unreadable] = extract,
        extract_timeout: float = EXTRACT_TIMEOUT,
    ) -> None:
        if concurrency < 1 or per_host < 1:
            raise ValueError("concurrency and per_host must be at least 1")
        self.concurrency = concurrency
        self.per_host = per_host
        self.connect_timeout = connect_timeout
        self.total_timeout = total_timeout
        self.max_bytes = max_bytes
        self.max_redirects = max_redirects
        self.allow_private = allow_private
        self.respect_robots = respect_robots
        self.user_agent = user_agent or DEFAULT_USER_AGENT
        self.cache = cache
        self._guard = AddressGuard(allow_private=allow_private, resolver=resolver)
        self._robots = RobotsRules(self._download_robots, user_agent=self.user_agent, timeout=total_timeout)
        self._client = http_client
        self._own_client = http_client is None
        self._slots = asyncio.Semaphore(concurrency)
        self._extraction = OverlapExtraction(extractor, timeout=extract_timeout)
        # Pages held in memory at once (downloading, waiting for extraction, extracting):
        # downloads are quicker than extraction, and without a bound a long list of URLs
        # would all be downloaded and held before most were extracted.
        self.max_pending = concurrency + 2 * cpu_budget()
        self._pending = asyncio.Semaphore(self.max_pending)
        self._host_slots: dict[str, asyncio.Semaphore] = {}
        self._pdf = pdf_supported()
        self._fetched = 0
        self._cached = 0
        self._failed: Counter[str] = Counter()
        self._injection = 0

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        *,
        http_client: httpx.AsyncClient | None = None,
        resolver: Resolver | None = None,
        cache: PageCache | None = None,
    ) -> Fetcher:
        """A Fetcher configured from run settings; the page cache too unless ``use_cache`` is off."""
        if cache is None and settings.use_cache:
            from .cache import PageCache

            cache = PageCache.for_settings(settings)
        return cls(
            concurrency=settings.fetch_concurrency,
            per_host=settings.fetch_per_host,
            connect_timeout=min(10.0, settings.fetch_timeout),
            total_timeout=settings.fetch_timeout,
            max_bytes=settings.max_page_bytes,
            allow_private=settings.allow_private,
            respect_robots=settings.respect_robots,
            cache=cache,
            resolver=resolver,
            http_client=http_client,
        )

    async def __aenter__(self) -> Fetcher:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Cancel pending robots.txt loads, stop the extraction workers and close the
        client this Fetcher created."""
        self._robots.cancel()
        await self._extraction.aclose()
        if self._own_client and self._client is not None:
            await self._client.aclose()
            self._client = None

    @property
    def stats(self) -> FetchStats:
        """A snapshot of the counts so far."""
        return FetchStats(
            fetched=self._fetched,
            cached=self._cached,
            failed=dict(self._failed),
            injection_pages=self._injection,
        )

    # ----------------------------------------------------------------- public calls

    async def fetch(self, url: str) -> Page | FetchFailure:
        """Fetch and extract ``url``; never raises for anything the page does."""
        url = (url or "").strip()
        if not is_web_url(url):
            return self._fail(url, "bad_url")
        cached = self._from_cache(url)
        if cached is not None:
            self._cached += 1
            return cached
        async with self._pending:
            body = await self._fetch_body(url)
            if isinstance(body, FetchFailure):
                return body
            page = await self._extract(url, body)
        if isinstance(page, FetchFailure):
            return page
        self._fetched += 1
        if looks_like_injection(page.text) or looks_like_injection(page.title):
            self._injection += 1
        if self.cache is not None:
            self.cache.put(page)
        return page

    async def read_source(self, hit: SearchHit, *, queries: Iterable[str], token_budget: int) -> SourceRead:
        """Read one search hit into a Source whose text is the passages best matching ``queries``.

        Local-corpus hits (which already carry their text) are not fetched; a scholarly hit's
        open full text is, and its abstract stands when that fails (``failure`` says why). For a web
        hit whose page cannot be read, the Source is snippet-only: its text is the
        search snippet, ``snippet_only`` is True, and ``SourceRead.failure`` says why.
        """
        queries = tuple(q for q in queries if q)
        if hit.provider == "local" or (hit.text and not is_web_url(hit.location)):
            return SourceRead(local_source(hit, queries, token_budget))
        if hit.work is not None:  # the abstract is in hand; an open full text is read when there is one
            full = await self.fetch(hit.work.full_text_url) if hit.work.full_text_url else None
            page = full if isinstance(full, Page) else None
            failure = full if isinstance(full, FetchFailure) else None
            return SourceRead(work_source(hit, queries, token_budget, page), failure=failure, page=page)
        result = await self.fetch(hit.location)
        if isinstance(result, FetchFailure):
            return SourceRead(snippet_source(hit, queries), failure=result)
        return SourceRead(page_source(hit, result, queries, token_budget), page=result)

    # ----------------------------------------------------------------- internals

    async def _fetch_body(self, url: str) -> Body | FetchFailure:
        """The page's body within the slots and the total deadline, or why not."""
        host = urlsplit(url).hostname or ""
        slot = self._host_slots.setdefault(host, asyncio.Semaphore(self.per_host))
        async with slot, self._slots:
            try:
                async with asyncio.timeout(self.total_timeout):
                    if self.respect_robots and not await self._robots.allows(url):
                        raise FetchRefused("robots")
                    return await self._download(url, max_bytes=self.max_bytes, robots=False)
            except FetchRefused as exc:
                return self._fail(url, exc.reason, exc.detail)
            except (TimeoutError, httpx.TimeoutException):
                return self._fail(url, "timeout")
            except httpx.HTTPError as exc:
                return self._fail(url, "network_error", f"{type(exc).__name__}: {exc}")
            except OSError as exc:
                return self._fail(url, "network_error", str(exc))
            except Exception as exc:  # an HTTP stack surprise must cost one page, not the run
                log.warning("unexpected error fetching %s", url, exc_info=True)
                return self._fail(url, "network_error", f"{type(exc).__name__}: {exc}"[:200])

    async def _extract(self, url: str, body: Body) -> Page | FetchFailure:
        """The Page of a downloaded body (extracted off the event loop), or why there is none."""
        kind = kind_for_mime(body.mime) or "html"
        try:
            doc = await self._extraction.run(
                body.data, kind, charset=body.charset, url=body.final_url, with_date=True, max_pdf_pages=MAX_PDF_PAGES
            )
        except Exception as exc:  # a surprise from an extractor must cost one page, not the run
            log.warning("extraction failed for %s", url, exc_info=True)
            return self._fail(url, "extract_error", f"{type(exc).__name__}: {exc}"[:200])
        if isinstance(doc, Failed):  # its worker crashed, hung or raised
            log.warning("extraction failed for %s: %s %s", url, doc.reason, doc.detail)
            return self._fail(url, "extract_error", f"the extractor {doc.reason.replace('_', ' ')}: {doc.detail}")
        if isinstance(doc, Unreadable):
            return self._fail(url, _UNREADABLE.get(doc.reason, "extract_error"), doc.detail)
        if not doc.text.strip():
            return self._fail(url, "empty")
        final_url = body.final_url
        return Page(
            url=url,
            final_url=final_url,
            title=doc.title or final_url,
            date=doc.date,
            site_name=doc.site_name or registrable_domain(final_url),
            text=doc.text,
            addresses=body.addresses,
        )

    def _from_cache(self, url: str) -> Page | None:
        """The cached page, if the address guard would accept every address it came from."""
        if self.cache is None:
            return None
        page = self.cache.get(url)
        if page is None or not self._guard.admits(url, page.addresses):
            return None
        return page

    def _fail(self, url: str, reason: str, detail: str = "") -> FetchFailure:
        self._failed[reason] += 1
        log.info("fetch %s failed: %s %s", url, reason, detail)
        return FetchFailure(url=url, reason=reason, detail=detail)

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(
                timeout=httpx.Timeout(self.total_timeout, connect=self.connect_timeout),
                follow_redirects=False,
                trust_env=False,
                limits=httpx.Limits(
                    max_connections=self.concurrency * 2, max_keepalive_connections=self.concurrency
                ),
            )
        return self._client

    async def _send(self, pinned: Pinned, headers: dict[str, str]) -> httpx.Response:
        """Send to the first address that accepts a connection (IPv6 first may be unreachable)."""
        client = self._http()
        for i, target in enumerate(pinned.targets):
            request = client.build_request("GET", target, headers=headers, extensions=pinned.extensions)
            try:
                return await client.send(request, stream=True, follow_redirects=False)
            except httpx.ConnectError:
                if i == len(pinned.targets) - 1:
                    raise
        raise FetchRefused("dns_error", "no address")  # unreachable: targets is never empty

    def _headers(self, pinned: Pinned, *, robots: bool) -> dict[str, str]:
        accept = "text/html,application/xhtml+xml,text/plain;q=0.9"
        accept += (",application/pdf;q=0.8" if self._pdf else "") + ",*/*;q=0.1"
        return {
            **pinned.headers,
            "User-Agent": self.user_agent,
            "Accept": "text/plain,*/*;q=0.5" if robots else accept,
            "Accept-Encoding": "gzip, deflate",
        }

    async def _download_robots(self, url: str) -> Body:
        return await self._download(url, max_bytes=ROBOTS_MAX_BYTES, robots=True)

    async def _download(self, url: str, *, max_bytes: int, robots: bool) -> Body:
        """Follow redirects by hand, every hop through the guard; the final body, bounded."""
        current = url
        seen = {_without_fragment(url)}
        checked: dict[str, None] = {}  # every address of every hop, in order
        for _ in range(self.max_redirects + 1):
            pinned = await self._guard.pin(current)
            checked.update(dict.fromkeys(pinned.addresses))
            response = await self._send(pinned, self._headers(pinned, robots=robots))
            try:
                if response.status_code in _REDIRECTS:
                    current = _next_hop(current, response, seen)
                    continue
                if not 200 <= response.status_code < 300:
                    raise FetchRefused(f"http_{response.status_code}")
                mime, charset = parse_content_type(response.headers.get("content-type", ""))
                if not robots:
                    self._check_type(mime)
                data = await read_body(
                    response, max_bytes, charset, check_binary=not robots and mime != _PDF_TYPE
                )
                return Body(current, mime or "text/html", charset, data, tuple(checked))
            finally:
                await response.aclose()
        raise FetchRefused("too_many_redirects", f"more than {self.max_redirects}")

    def _check_type(self, mime: str) -> None:
        kind = kind_for_mime(mime) if mime else "html"
        if kind is None or (kind == PDF and not self._pdf):
            raise FetchRefused("bad_content_type", mime)


def _next_hop(current: str, response: httpx.Response, seen: set[str]) -> str:
    """Where a redirect leads; raises FetchRefused for a missing/unusable Location or a loop."""
    location = response.headers.get("location", "").strip()
    nxt = urljoin(current, location) if location else ""
    if not is_web_url(nxt):
        raise FetchRefused("bad_redirect", location[:200])
    nxt = _without_fragment(nxt)
    if nxt in seen:
        raise FetchRefused("redirect_loop", nxt)
    seen.add(nxt)
    return nxt


def _without_fragment(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path or "/", parts.query, ""))
