"""Fetch web pages safely and concurrently, and extract their text.

:class:`Fetcher` is the one way research-agent reads a URL:

* bounded concurrency, overall and per host; connect and total timeouts (the total
  covers robots.txt, every redirect and the whole body, so a page that trickles
  forever is cut off);
* every host (each redirect hop too, robots.txt included) is resolved first and
  loopback, private, link-local, multicast, reserved, unspecified and deprecated
  (site-local, 6to4 relay) addresses are refused unless ``allow_private``; the
  connection then goes to the address that was checked (the URL is pinned to it, the
  ``Host`` header and TLS server name keep the real name), so DNS cannot change its
  answer between the check and the connect;
* a page keeps the addresses it was fetched from (every hop), and a cached page is
  served only when a fetch with the current settings would accept all of them, so
  the cache is no way around the guard;
* redirects are followed by hand (at most ``max_redirects``), loops detected;
* the body is streamed and decompressed here with a bound (gzip/deflate), so neither a
  10 GB body nor a gzip bomb gets past ``max_bytes`` of decoded content;
* HTML, XHTML and plain text are accepted (PDF too when ``pypdf`` is installed);
  binary content served as text is refused; declared charsets are honoured and
  undecodable bytes replaced;
* robots.txt is fetched once per host per run and obeyed unless ``respect_robots`` is off;
* text is extracted with trafilatura (title, date, site name, main text), with a
  plain-text fallback when the main text is empty or tiny.

Page text is not sanitized here: the pipeline sanitizes everything before it enters a
prompt. Pages that look like prompt injection are counted in :attr:`Fetcher.stats`.

Failures are values, not exceptions: :meth:`Fetcher.fetch` returns a
:class:`FetchFailure` whose ``reason`` is one of :data:`FAILURE_REASONS`.
"""

from __future__ import annotations

import asyncio
import codecs
import importlib.util
import ipaddress
import logging
import os
import re
import socket
import zlib
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit, urlunsplit
from urllib.robotparser import RobotFileParser

import httpx

from .addresses import is_public_address
from .passages import estimate_tokens, select_passages
from .sanitize import looks_like_injection
from .sources import SearchHit, Source
from .urls import is_web_url, normalize_url, registrable_domain
from .version import __version__

if TYPE_CHECKING:
    from .cache import PageCache
    from .config import Settings

__all__ = [
    "Fetcher",
    "Page",
    "FetchFailure",
    "FetchStats",
    "SourceRead",
    "Resolver",
    "DEFAULT_USER_AGENT",
    "FAILURE_REASONS",
    "is_public_address",
    "extract_page",
    "decode_body",
    "pdf_supported",
]

log = logging.getLogger(__name__)


DEFAULT_USER_AGENT = f"research-agent/{__version__} (+https://github.com/research-agent/research-agent)"

FAILURE_REASONS = (
    "bad_url",  # not an absolute http(s) URL
    "dns_error",  # the host name did not resolve
    "private_address",  # resolves to loopback/private/link-local/... and allow_private is off
    "robots",  # robots.txt disallows the path for our user agent
    "timeout",  # connect timeout or the total deadline passed
    "network_error",  # connection refused/reset, TLS failure, protocol error
    "redirect_loop",  # a redirect came back to a URL already visited
    "too_many_redirects",  # more than max_redirects hops
    "bad_redirect",  # a redirect without a usable http(s) Location
    "bad_content_type",  # not HTML/XHTML/plain text (or PDF with pypdf)
    "binary_content",  # bytes that are not text, whatever the declared type
    "too_large",  # more than max_bytes of (decoded) body
    "bad_encoding",  # a Content-Encoding we cannot decode safely
    "decode_error",  # corrupt compressed stream, or text that is mostly undecodable
    "extract_error",  # the extractor failed on the document
    "empty",  # no text left after extraction
    # plus "http_<status>" for any non-2xx final answer, e.g. "http_404", "http_503"
)

Resolver = Callable[[str], Awaitable[Sequence[str]]]
"""``async (host) -> IP address strings``: the DNS seam. Tests map names to addresses."""

_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_TEXT_TYPES = _HTML_TYPES | {"text/plain"}
_PDF_TYPE = "application/pdf"
_ROBOTS_MAX_BYTES = 512 * 1024
_ROBOTS_TIMEOUT = 10.0
_BINARY_SAMPLE = 8192
_FALLBACK_MIN_CHARS = 200
_MAGIC = (b"\x89PNG", b"GIF8", b"\xff\xd8\xff", b"PK\x03\x04", b"\x7fELF", b"\x1f\x8b", b"BZh", b"MZ\x90")
_CTRL = bytes(b for b in range(32) if b not in (9, 10, 12, 13)) + b"\x7f"
_CTRL_TABLE = bytes.maketrans(_CTRL, b"\x00" * len(_CTRL))


def pdf_supported() -> bool:
    """True when the optional ``pypdf`` dependency is installed."""
    return importlib.util.find_spec("pypdf") is not None


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class Page:
    """A fetched, extracted page. ``text`` is the full main text, unsanitized."""

    url: str
    final_url: str
    title: str
    date: str | None
    site_name: str
    text: str
    from_cache: bool = False
    addresses: tuple[str, ...] = ()  # every address it was fetched from, all hops (the guard's evidence)


@dataclass(frozen=True)
class FetchFailure:
    """Why a URL could not be read: ``reason`` is machine-ish (see FAILURE_REASONS)."""

    url: str
    reason: str
    detail: str = ""


@dataclass(frozen=True)
class FetchStats:
    """What a Fetcher did so far: pages fetched, served from cache, failed by reason."""

    fetched: int = 0
    cached: int = 0
    failed: Mapping[str, int] = field(default_factory=dict)
    injection_pages: int = 0

    @property
    def failed_total(self) -> int:
        return sum(self.failed.values())

    def as_dict(self) -> dict[str, Any]:
        """Plain types, for the run record."""
        return {
            "fetched": self.fetched,
            "cached": self.cached,
            "failed": dict(sorted(self.failed.items())),
            "failed_total": self.failed_total,
            "injection_pages": self.injection_pages,
        }


@dataclass(frozen=True)
class SourceRead:
    """What :meth:`Fetcher.read_source` produced for one hit.

    ``source`` is always usable; when the page could not be read, it is a
    snippet-only source (``source.snippet_only``) built from the search snippet and
    ``failure`` says why. ``page`` is the fetched page when there was one.
    """

    source: Source
    failure: FetchFailure | None = None
    page: Page | None = None

    @property
    def read(self) -> bool:
        return self.failure is None


class _Refused(Exception):
    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True)
class _Body:
    final_url: str
    mime: str
    charset: str | None
    data: bytes
    addresses: tuple[str, ...] = ()


# --------------------------------------------------------------------------- addresses


async def _system_resolve(host: str) -> list[str]:
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


# --------------------------------------------------------------------------- bodies


class _BoundedDecoder:
    """Content-Encoding decoder that never produces more than it is allowed to."""

    def __init__(self, encoding: str) -> None:
        names = [e.strip().lower() for e in encoding.split(",") if e.strip()]
        names = [n for n in names if n != "identity"]
        if len(names) > 1:
            raise _Refused("bad_encoding", encoding)
        self.kind = names[0] if names else "identity"
        if self.kind in ("gzip", "x-gzip"):
            self._z: Any = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif self.kind == "deflate":
            self._z = zlib.decompressobj()
            self._first = True
        elif self.kind == "identity":
            self._z = None
        else:
            raise _Refused("bad_encoding", self.kind)

    def feed(self, data: bytes, limit: int) -> bytes:
        """Decode ``data``; raise too_large if that would give more than ``limit`` bytes."""
        if self._z is None:
            if len(data) > limit:
                raise _Refused("too_large", "body exceeds the size cap")
            return data
        try:
            out = self._z.decompress(data, limit + 1)
        except zlib.error:
            if self.kind == "deflate" and self._first:  # some servers send raw deflate
                self._z = zlib.decompressobj(-zlib.MAX_WBITS)
                self._first = False
                return self.feed(data, limit)
            raise _Refused("decode_error", "corrupt compressed body") from None
        if self.kind == "deflate":
            self._first = False
        if len(out) > limit or self._z.unconsumed_tail:
            raise _Refused("too_large", "decompressed body exceeds the size cap")
        return out

    def flush(self, limit: int) -> bytes:
        if self._z is None:
            return b""
        try:
            out = self._z.flush()
        except zlib.error:
            raise _Refused("decode_error", "corrupt compressed body") from None
        if len(out) > limit:
            raise _Refused("too_large", "decompressed body exceeds the size cap")
        return out


def _looks_binary(sample: bytes, charset: str | None) -> bool:
    if not sample:
        return False
    if charset and charset.lower().replace("_", "-").startswith(("utf-16", "utf-32")):
        return False
    if sample.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return False
    if sample.startswith(_MAGIC) or b"\x00" in sample:
        return True
    controls = len(sample) - len(sample.translate(None, _CTRL))
    return controls / len(sample) > 0.05


def _parse_content_type(value: str) -> tuple[str, str | None]:
    mime, _, rest = value.partition(";")
    charset = None
    for param in rest.split(";"):
        name, _, val = param.partition("=")
        if name.strip().lower() == "charset":
            charset = val.strip().strip("\"'") or None
    return mime.strip().lower(), charset


_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_\-:.]+)""", re.IGNORECASE)
_XML_DECL = re.compile(r"^\s*<\?xml[^>]*\?>", re.IGNORECASE)
# WHATWG: these labels mean windows-1252 in practice.
_WINDOWS_1252 = {"latin-1", "latin1", "iso-8859-1", "iso8859-1", "l1", "ascii", "us-ascii", "iso-ir-100"}


def _codec(label: str | None) -> str | None:
    if not label:
        return None
    label = label.strip().lower()
    if label in _WINDOWS_1252:
        return "cp1252"
    try:
        name = codecs.lookup(label).name
    except LookupError:
        return None
    return None if name == "utf-7" else name


def decode_body(data: bytes, header_charset: str | None, *, html: bool) -> str:
    """Decode page bytes: BOM, then the declared charset (header, then meta), then
    UTF-8, then windows-1252; undecodable bytes become U+FFFD."""
    for bom, name in (
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if data.startswith(bom):
            return data.decode(name, errors="replace")
    declared = _codec(header_charset)
    if declared is None and html:
        match = _META_CHARSET.search(data[:4096])
        declared = _codec(match.group(1).decode("ascii", "ignore")) if match else None
    if declared is not None:
        return data.decode(declared, errors="replace")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        lenient = data.decode("utf-8", errors="replace")
    # Stray bytes in a page of valid UTF-8 sequences are damage; when invalid bytes
    # outnumber the valid non-ASCII characters (or there are none), the page is in a single-byte charset.
    bad = lenient.count("\ufffd")
    good = sum(1 for ch in lenient if ord(ch) > 127) - bad
    if good >= bad and good > 0:
        return lenient
    return data.decode("cp1252", errors="replace")


# --------------------------------------------------------------------------- extraction

_BLOCK_TAGS = (
    "p", "div", "br", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "table",
    "section", "article", "header", "footer", "blockquote", "pre", "dd", "dt", "dl", "main",
)  # fmt: skip
_DROP_TAGS = ("script", "style", "noscript", "template", "svg", "iframe", "object", "head")


def _clean_lines(text: str) -> str:
    lines = [" ".join(line.split()) for line in text.splitlines()]
    out: list[str] = []
    for line in lines:
        if line or (out and out[-1]):
            out.append(line)
    return "\n".join(out).strip().replace("\n\n\n", "\n\n")


def _html_fallback(html: str) -> tuple[str, str]:
    """(title, visible text) of an HTML document, without scripts and styles."""
    import lxml.html
    from lxml.etree import ParserError

    try:
        doc = lxml.html.document_fromstring(html)
    except (ParserError, ValueError):
        return "", ""
    titles = doc.xpath("//title")
    title = " ".join(titles[0].text_content().split()) if titles else ""
    for bad in doc.xpath("|".join(f"//{t}" for t in _DROP_TAGS)):
        bad.drop_tree()
    for el in doc.iter(*_BLOCK_TAGS):
        el.tail = "\n\n" + (el.tail or "")
    return title, _clean_lines(doc.text_content())


def _meta_content(tree: Any, *names: str) -> str:
    for name in names:
        for value in tree.xpath(f'//meta[@property="{name}" or @name="{name}"]/@content'):
            text = " ".join(str(value).split())
            if text:
                return text
    return ""


def _first_text(tree: Any, xpath: str) -> str:
    for el in tree.xpath(xpath):
        text = " ".join(el.text_content().split())
        if text:
            return text
    return ""


def _page_metadata(tree: Any) -> tuple[str, str | None, str]:
    """(title, date, site name) from the page's own metadata; cheap, no guessing from prose."""
    from htmldate import find_date

    title = (
        _meta_content(tree, "og:title", "twitter:title")
        or _first_text(tree, "//title")
        or _first_text(tree, "//h1")
    )
    site = _meta_content(tree, "og:site_name", "application-name")
    try:
        # Always a parsed tree, never a string: given a string that looks like a URL,
        # htmldate would download it.
        date = find_date(tree, extensive_search=False, original_date=True, outputformat="%Y-%m-%d")
    except Exception:  # htmldate raises assorted errors on odd markup; a page without a date is fine
        log.debug("date extraction failed", exc_info=True)
        date = None
    return title, date or None, site


def _extract_html(html: str, url: str) -> tuple[str, str | None, str, str]:
    """(title, date, site name, main text) of an HTML page.

    Metadata comes from the page's meta tags (htmldate for the date, restricted to
    markup); the main text from trafilatura in its fast mode, which skips the
    readability/justext second opinions (about 3x faster on long pages). When that
    text is empty or tiny, the page's visible text is used instead.
    """
    import lxml.html
    import trafilatura
    from lxml.etree import ParserError

    html = _XML_DECL.sub("", html, count=1)
    try:
        tree = lxml.html.document_fromstring(html)
    except (ParserError, ValueError):
        return "", None, "", ""
    title, date, site = _page_metadata(tree)
    doc = trafilatura.bare_extraction(
        tree,
        url=url,
        fast=True,
        with_metadata=False,
        include_comments=False,
        include_tables=True,
        include_images=False,
        include_links=False,
    )
    text = ((getattr(doc, "text", None) or "") if doc is not None else "").strip()
    if len(text) < _FALLBACK_MIN_CHARS:
        fb_title, fb_text = _html_fallback(html)
        if len(fb_text) > len(text):
            text = fb_text
        title = title or fb_title
    return title, date, site, text


def _extract_pdf(data: bytes) -> tuple[str, str]:
    import io

    import pypdf

    reader = pypdf.PdfReader(io.BytesIO(data))
    texts = []
    for page in reader.pages[:300]:
        texts.append(page.extract_text() or "")
    meta = reader.metadata
    title = str(meta.title) if meta is not None and meta.title else ""
    return title, _clean_lines("\n\n".join(texts))


def extract_page(url: str, final_url: str, mime: str, data: bytes, charset: str | None) -> Page:
    """Turn a downloaded body into a Page (blocking; run it in a thread).

    Raises ``ValueError`` when the body decodes to mostly replacement characters.
    """
    if mime == _PDF_TYPE:
        title, text = _extract_pdf(data)
        return Page(url, final_url, title or final_url, None, registrable_domain(final_url), text)
    is_html = mime != "text/plain"
    text_in = decode_body(data, charset, html=is_html)
    if text_in and text_in.count("\ufffd") > 0.3 * len(text_in):
        raise ValueError("mostly undecodable text")
    if is_html:
        title, date, site, text = _extract_html(text_in, final_url)
    else:
        text = _clean_lines(text_in)
        first = next((line for line in text.splitlines() if line.strip()), "")
        title, date, site = first[:200], None, ""
    return Page(
        url=url,
        final_url=final_url,
        title=" ".join(title.split())[:300] or final_url,
        date=date,
        site_name=site or registrable_domain(final_url),
        text=text,
    )


# --------------------------------------------------------------------------- fetcher


class Fetcher:
    """Safe, bounded, cached page fetching for one run (or one program).

    Use as ``async with Fetcher(...) as f:``, or call :meth:`aclose` when done; an
    ``http_client`` passed in is left open. ``resolver`` is the DNS seam
    (``async host -> [addresses]``); the default asks the system resolver.

    HTTPS requests go to the checked address with the real name as TLS server name;
    they carry ``Connection: close`` so a pooled connection opened for one name is
    never reused for another name served from the same address.
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
        user_agent: str = DEFAULT_USER_AGENT,
        cache: PageCache | None = None,
        resolver: Resolver | None = None,
        http_client: httpx.AsyncClient | None = None,
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
        self.user_agent = user_agent
        self.cache = cache
        self._resolver: Resolver = resolver or _system_resolve
        self._client = http_client
        self._own_client = http_client is None
        self._slots = asyncio.Semaphore(concurrency)
        # Extraction is CPU-bound and holds the GIL most of the time: more threads than
        # CPUs only add memory (parsed trees), not speed.
        self._extract_slots = asyncio.Semaphore(max(1, min(concurrency, os.cpu_count() or 1)))
        self._host_slots: dict[str, asyncio.Semaphore] = {}
        self._robots: dict[str, asyncio.Future[RobotFileParser | None]] = {}
        self._dns: dict[str, tuple[str, ...]] = {}
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
        """Cancel pending robots.txt loads and close the client this Fetcher created."""
        for task in self._robots.values():
            if not task.done():
                task.cancel()
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
        host = urlsplit(url).hostname or ""
        slot = self._host_slots.setdefault(host, asyncio.Semaphore(self.per_host))
        async with slot, self._slots:
            try:
                async with asyncio.timeout(self.total_timeout):
                    if self.respect_robots and not await self._robots_allow(url):
                        raise _Refused("robots")
                    body = await self._download(url, max_bytes=self.max_bytes, robots=False)
            except _Refused as exc:
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
        try:
            async with self._extract_slots:
                page = await asyncio.to_thread(
                    extract_page, url, body.final_url, body.mime, body.data, body.charset
                )
        except ValueError as exc:
            return self._fail(url, "decode_error", str(exc))
        except Exception as exc:  # extractors raise a wide variety; the run must go on
            log.warning("extraction failed for %s", url, exc_info=True)
            return self._fail(url, "extract_error", f"{type(exc).__name__}: {exc}"[:200])
        if not page.text.strip():
            return self._fail(url, "empty")
        page = replace(page, addresses=body.addresses)
        self._fetched += 1
        if looks_like_injection(page.text) or looks_like_injection(page.title):
            self._injection += 1
        if self.cache is not None:
            self.cache.put(page)
        return page

    async def read_source(self, hit: SearchHit, *, queries: Iterable[str], token_budget: int) -> SourceRead:
        """Read one search hit into a Source whose text is the passages best matching ``queries``.

        Local-corpus hits (which already carry their text) are not fetched. For a web
        hit whose page cannot be read, the Source is snippet-only: its text is the
        search snippet, ``snippet_only`` is True, and ``SourceRead.failure`` says why.
        """
        queries = tuple(q for q in queries if q)
        if hit.provider == "local" or (hit.text and not is_web_url(hit.location)):
            return SourceRead(self._local_source(hit, queries, token_budget))
        result = await self.fetch(hit.location)
        key = normalize_url(hit.location)
        if isinstance(result, FetchFailure):
            source = Source(
                key=key,
                title=hit.title or hit.location,
                location=hit.location,
                site=registrable_domain(hit.location),
                text=hit.snippet,
                provider=hit.provider,
                snippet_only=True,
                published=hit.published,
                sub_queries=queries,
            )
            return SourceRead(source, failure=result)
        text = select_passages(result.text, queries or (hit.title,), token_budget=token_budget)
        source = Source(
            key=key,
            title=result.title or hit.title or hit.location,
            location=result.final_url,
            site=registrable_domain(result.final_url),
            text=text or result.text[: max(1, token_budget) * 4],
            provider=hit.provider,
            published=result.date or hit.published,
            sub_queries=queries,
        )
        return SourceRead(source, page=result)

    # ----------------------------------------------------------------- internals

    def _local_source(self, hit: SearchHit, queries: tuple[str, ...], token_budget: int) -> Source:
        try:
            key = str(Path(hit.location).expanduser().resolve())
        except (OSError, RuntimeError, ValueError):
            key = hit.location
        text = hit.text or hit.snippet
        if estimate_tokens(text) > token_budget:
            text = select_passages(text, queries or (hit.title,), token_budget=token_budget)
        return Source(
            key=key,
            title=hit.title or Path(key).name,
            location=hit.location,
            site=key,
            text=text,
            provider=hit.provider,
            published=hit.published,
            sub_queries=queries,
        )

    def _from_cache(self, url: str) -> Page | None:
        """The cached page, if a fetch with these settings would accept every address it came from.

        A page cached by a run that allowed private addresses is a miss for one that does
        not: the live fetch that follows applies the guard to today's DNS answer.
        """
        if self.cache is None:
            return None
        page = self.cache.get(url)
        if page is None:
            return None
        if not page.addresses:
            return None  # no evidence of where it came from: never trusted
        if not self.allow_private and not all(is_public_address(a) for a in page.addresses):
            log.info("cached page %s came from a private address; not served without allow_private", url)
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

    async def _resolve(self, host: str) -> tuple[str, ...]:
        if _is_ip(host):
            return (host,)
        known = self._dns.get(host)
        if known is not None:
            return known
        try:
            addresses = tuple(await self._resolver(host))
        except (OSError, UnicodeError) as exc:
            raise _Refused("dns_error", f"{host}: {exc}") from None
        if not addresses:
            raise _Refused("dns_error", f"{host}: no address")
        self._dns[host] = addresses
        return addresses

    async def _pin(
        self, url: str
    ) -> tuple[list[httpx.URL], dict[str, str], dict[str, Any], tuple[str, ...]]:
        """Resolve and check the URL's host; return request URLs pinned to each checked
        address, headers, extensions, and the addresses checked."""
        try:
            parsed = httpx.URL(url)
        except (httpx.InvalidURL, ValueError) as exc:
            raise _Refused("bad_url", str(exc)) from None
        host = parsed.raw_host.decode("ascii").strip("[]").lower()
        if not host:
            raise _Refused("bad_url", url)
        addresses = await self._resolve(host)
        if not self.allow_private:
            for address in addresses:
                if not is_public_address(address):
                    raise _Refused("private_address", f"{host} -> {address}")
        if _is_ip(host):
            return [parsed], {}, {}, addresses
        headers = {"Host": parsed.netloc.decode("ascii")}
        extensions: dict[str, Any] = {}
        if parsed.scheme == "https":
            extensions["sni_hostname"] = host
            headers["Connection"] = "close"
        return [parsed.copy_with(host=a) for a in addresses[:4]], headers, extensions, addresses

    async def _send(
        self,
        client: httpx.AsyncClient,
        targets: list[httpx.URL],
        headers: dict[str, str],
        extensions: dict[str, Any],
    ) -> httpx.Response:
        """Send to the first address that accepts a connection (IPv6 first may be unreachable)."""
        for i, target in enumerate(targets):
            request = client.build_request("GET", target, headers=headers, extensions=extensions)
            try:
                return await client.send(request, stream=True, follow_redirects=False)
            except httpx.ConnectError:
                if i == len(targets) - 1:
                    raise
        raise _Refused("dns_error", "no address")  # unreachable: targets is never empty

    def _accept(self) -> str:
        accept = "text/html,application/xhtml+xml,text/plain;q=0.9"
        return accept + (",application/pdf;q=0.8" if self._pdf else "") + ",*/*;q=0.1"

    async def _download(self, url: str, *, max_bytes: int, robots: bool) -> _Body:
        client = self._http()
        current = url
        seen = {_without_fragment(url)}
        checked: dict[str, None] = {}  # every address of every hop, in order
        for _ in range(self.max_redirects + 1):
            targets, headers, extensions, addresses = await self._pin(current)
            checked.update(dict.fromkeys(addresses))
            headers.update(
                {
                    "User-Agent": self.user_agent,
                    "Accept": "text/plain,*/*;q=0.5" if robots else self._accept(),
                    "Accept-Encoding": "gzip, deflate",
                }
            )
            response = await self._send(client, targets, headers, extensions)
            try:
                if response.status_code in _REDIRECTS:
                    location = response.headers.get("location", "").strip()
                    nxt = urljoin(current, location) if location else ""
                    if not is_web_url(nxt):
                        raise _Refused("bad_redirect", location[:200])
                    nxt = _without_fragment(nxt)
                    if nxt in seen:
                        raise _Refused("redirect_loop", nxt)
                    seen.add(nxt)
                    current = nxt
                    continue
                if not 200 <= response.status_code < 300:
                    raise _Refused(f"http_{response.status_code}")
                mime, charset = _parse_content_type(response.headers.get("content-type", ""))
                if not robots:
                    self._check_type(mime)
                data = await self._read_body(
                    response, max_bytes, charset, check_binary=not robots and mime != _PDF_TYPE
                )
                return _Body(current, mime or "text/html", charset, data, tuple(checked))
            finally:
                await response.aclose()
        raise _Refused("too_many_redirects", f"more than {self.max_redirects}")

    def _check_type(self, mime: str) -> None:
        if not mime or mime in _TEXT_TYPES:
            return
        if mime == _PDF_TYPE and self._pdf:
            return
        raise _Refused("bad_content_type", mime)

    async def _read_body(
        self, response: httpx.Response, max_bytes: int, charset: str | None, *, check_binary: bool
    ) -> bytes:
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > max_bytes:
            raise _Refused("too_large", f"declared {declared} bytes")
        buf = bytearray()
        checked = not check_binary
        if response.is_stream_consumed:
            # A transport that hands over a body it already read and decoded (httpx.MockTransport).
            decoder = _BoundedDecoder("identity")
            chunks: AsyncIterator[bytes] = _once(response.content)
        else:
            decoder = _BoundedDecoder(response.headers.get("content-encoding", ""))
            chunks = response.aiter_raw()
        async for raw in chunks:
            buf += decoder.feed(raw, max_bytes - len(buf))
            if not checked and len(buf) >= _BINARY_SAMPLE:
                checked = True
                if _looks_binary(bytes(buf[:_BINARY_SAMPLE]), charset):
                    raise _Refused("binary_content")
        buf += decoder.flush(max_bytes - len(buf))
        if not checked and _looks_binary(bytes(buf[:_BINARY_SAMPLE]), charset):
            raise _Refused("binary_content")
        return bytes(buf)

    async def _robots_allow(self, url: str) -> bool:
        parts = urlsplit(url)
        origin = f"{parts.scheme.lower()}://{parts.netloc.lower()}"
        task = self._robots.get(origin)
        if task is None:
            task = asyncio.ensure_future(self._load_robots(origin))
            self._robots[origin] = task
        parser = await asyncio.shield(task)
        return parser is None or parser.can_fetch(self.user_agent, url)

    async def _load_robots(self, origin: str) -> RobotFileParser | None:
        """The parsed robots.txt of ``origin``; None means everything is allowed.

        Per RFC 9309: a 4xx (or no usable file) allows everything, a 5xx disallows
        everything. When robots.txt cannot be reached at all the page is tried, and
        its own fetch reports what is wrong.
        """
        try:
            async with asyncio.timeout(min(self.total_timeout, _ROBOTS_TIMEOUT)):
                body = await self._download(f"{origin}/robots.txt", max_bytes=_ROBOTS_MAX_BYTES, robots=True)
        except _Refused as exc:
            if exc.reason.startswith("http_5"):
                parser = RobotFileParser()
                parser.disallow_all = True
                return parser
            return None
        except (TimeoutError, httpx.HTTPError, OSError) as exc:
            log.info("robots.txt of %s unreachable (%s); fetching pages anyway", origin, type(exc).__name__)
            return None
        text = decode_body(body.data, body.charset, html=False)
        parser = RobotFileParser()
        parser.parse(text.splitlines())
        return parser


async def _once(data: bytes) -> AsyncIterator[bytes]:
    yield data


def _without_fragment(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path or "/", parts.query, ""))
