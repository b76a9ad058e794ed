"""Fetching: safety limits, hostile pages, extraction, robots.txt, caching, read_source."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from research_agent.cli.cache import app as cache_app
from research_agent.config import Settings
from research_agent.fetch import (
    Fetcher,
    FetchFailure,
    FetchStats,
    decode_body,
    is_public_address,
    pdf_supported,
)
from research_agent.fetch.cache import CACHE_VERSION, PageCache
from research_agent.fetch.fetcher import DEFAULT_USER_AGENT
from research_agent.sources import Page, SearchHit
from tests.support import http_server
from tests.support.fetch import SITE, failure, make_fetcher, resolver, sample_page
from tests.support.http_server import ARTICLE_TEXT, LocalServer, article_html, gzip_bomb

local_server = http_server.local_server  # the fixture


async def fetch(server: LocalServer, path: str, **kw: Any) -> Page | FetchFailure:
    async with make_fetcher(**kw) as fetcher:
        return await fetcher.fetch(server.url(path, host=SITE))


# --------------------------------------------------------------------------- ordinary pages


async def test_article_is_fetched_and_extracted(local_server: LocalServer) -> None:
    page = await fetch(local_server, "/article")
    assert isinstance(page, Page)
    assert page.title == "Heat pumps in cold climates"
    assert "coefficient of performance" in page.text
    assert "Copyright Example Energy" not in page.text  # boilerplate removed by trafilatura
    assert page.date == "2024-03-05"
    assert page.site_name == "Example Energy"
    assert page.final_url == page.url == local_server.url("/article", host=SITE)
    assert not page.from_cache
    request = next(r for r in local_server.requests if r.path == "/article")
    assert request.headers["User-Agent"] == DEFAULT_USER_AGENT
    assert request.headers["User-Agent"].startswith("research-agent/")
    assert request.headers["Host"] == f"{SITE}:{local_server.port}"  # pinned to 127.0.0.1, real name kept


async def test_gzip_encoded_page(local_server: LocalServer) -> None:
    page = await fetch(local_server, "/gzipped")
    assert isinstance(page, Page) and "coefficient of performance" in page.text


async def test_plain_text(local_server: LocalServer) -> None:
    page = await fetch(local_server, "/plain")
    assert isinstance(page, Page)
    assert page.title == "Plain notes on heat pumps"
    assert "vapour injection" in page.text
    assert page.site_name == "site.test"


async def test_tiny_main_text_falls_back_to_plain_body_text(local_server: LocalServer) -> None:
    page = await fetch(local_server, "/tiny")
    assert isinstance(page, Page)
    assert "data point number 0" in page.text and "data point number 29" in page.text
    assert page.title == "Tiny"


async def test_page_without_text_is_empty(local_server: LocalServer) -> None:
    assert failure(await fetch(local_server, "/empty")) == "empty"


async def test_redirect_chain_is_followed(local_server: LocalServer) -> None:
    page = await fetch(local_server, "/redirect/3")
    assert isinstance(page, Page)
    assert page.final_url == local_server.url("/article", host=SITE)
    assert page.url == local_server.url("/redirect/3", host=SITE)
    assert [p for p in local_server.paths() if p.startswith("/redirect")] == [
        "/redirect/3",
        "/redirect/2",
        "/redirect/1",
    ]


async def test_too_many_redirects(local_server: LocalServer) -> None:
    assert failure(await fetch(local_server, "/redirect/7")) == "too_many_redirects"
    assert failure(await fetch(local_server, "/redirect/3", max_redirects=2)) == "too_many_redirects"


async def test_redirect_loop(local_server: LocalServer) -> None:
    assert failure(await fetch(local_server, "/loop/a")) == "redirect_loop"


@pytest.mark.parametrize(("code", "reason"), [(404, "http_404"), (503, "http_503"), (410, "http_410")])
async def test_http_errors(local_server: LocalServer, code: int, reason: str) -> None:
    assert failure(await fetch(local_server, f"/status/{code}")) == reason


# --------------------------------------------------------------------------- hostile pages


async def test_page_that_never_finishes_times_out(local_server: LocalServer) -> None:
    result = await fetch(local_server, "/hang", total_timeout=0.5)
    assert failure(result) == "timeout"


async def test_slow_page_within_the_deadline(local_server: LocalServer) -> None:
    page = await fetch(local_server, "/slow")
    assert isinstance(page, Page) and page.title == "Heat pumps in cold climates"


async def test_declared_10gb_body_is_refused_without_reading_it(local_server: LocalServer) -> None:
    assert failure(await fetch(local_server, "/huge")) == "too_large"


async def test_endless_body_is_cut_at_the_cap(local_server: LocalServer) -> None:
    result = await fetch(local_server, "/huge-chunked", max_bytes=1024 * 1024)
    assert failure(result) == "too_large"


async def test_gzip_bomb_is_cut_at_the_decoded_cap(local_server: LocalServer) -> None:
    assert len(gzip_bomb()) < 200_000  # small on the wire...
    result = await fetch(local_server, "/gzip-bomb")  # ...64 MB decoded, cap 5 MB
    assert failure(result) == "too_large"


@pytest.mark.parametrize("path", ["/binary", "/binary-no-magic"])
async def test_binary_served_as_html_is_refused(local_server: LocalServer, path: str) -> None:
    assert failure(await fetch(local_server, path)) == "binary_content"


async def test_non_text_content_type_is_refused(local_server: LocalServer) -> None:
    assert failure(await fetch(local_server, "/image")) == "bad_content_type"


@pytest.mark.skipif(pdf_supported(), reason="pypdf installed: PDFs are accepted")
async def test_pdf_refused_without_pypdf(local_server: LocalServer) -> None:
    assert failure(await fetch(local_server, "/pdf")) == "bad_content_type"


async def test_declared_latin1_charset_is_honoured(local_server: LocalServer) -> None:
    page = await fetch(local_server, "/latin1")
    assert isinstance(page, Page)
    assert page.title == "Café économie"
    assert "Le café coûte cher." in page.text


async def test_meta_charset_is_honoured(local_server: LocalServer) -> None:
    page = await fetch(local_server, "/meta-charset")
    assert isinstance(page, Page)
    assert "Prices rose 5 € “quickly”." in page.text


async def test_unknown_charset_falls_back_and_replaces_bad_bytes(local_server: LocalServer) -> None:
    page = await fetch(local_server, "/bad-charset")
    assert isinstance(page, Page)
    assert "Naïve façade." in page.text


def test_decode_body_rules() -> None:
    assert decode_body("café".encode("cp1252"), None, html=False) == "café"  # not UTF-8: windows-1252
    assert decode_body("café".encode(), "latin-1", html=False) == "cafÃ©"  # the declaration wins
    assert decode_body(b"\xef\xbb\xbfhello", "latin-1", html=False) == "hello"  # BOM beats the declaration
    damaged = "naïve café déjà vu ".encode() + b"\xff"
    assert decode_body(damaged, None, html=False) == "naïve café déjà vu \ufffd"  # a stray byte replaced
    assert decode_body(b"hi", "utf-7", html=False) == "hi"  # utf-7 is never honoured


async def test_injection_page_is_fetched_but_counted(local_server: LocalServer) -> None:
    async with make_fetcher() as fetcher:
        page = await fetcher.fetch(local_server.url("/injection", host=SITE))
        clean = await fetcher.fetch(local_server.url("/article", host=SITE))
        stats = fetcher.stats
    assert isinstance(page, Page) and isinstance(clean, Page)
    assert "Ignore previous instructions" in page.text  # not sanitized here: the pipeline does that
    assert stats.injection_pages == 1 and stats.fetched == 2


# --------------------------------------------------------------------------- address safety


async def test_local_server_is_refused_without_allow_private(local_server: LocalServer) -> None:
    async with make_fetcher(allow_private=False) as fetcher:
        by_name = await fetcher.fetch(local_server.url("/article", host=SITE))
        by_ip = await fetcher.fetch(local_server.url("/article"))
        by_localhost = await fetcher.fetch(local_server.url("/article", host="localhost"))
    assert failure(by_name) == "private_address"
    assert failure(by_ip) == "private_address"
    assert failure(by_localhost) in {"private_address", "dns_error"}  # the seam does not know localhost
    assert local_server.requests == []  # nothing reached the server, not even robots.txt


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.0.0.7",
        "172.16.5.4",
        "192.168.1.1",
        "169.254.169.254",  # cloud metadata
        "100.64.0.1",  # carrier-grade NAT
        "0.0.0.0",
        "224.0.0.1",
        "240.0.0.1",
        "255.255.255.255",
        "::1",
        "::",
        "fe80::1",
        "fc00::1",
        "ff02::1",
        "::ffff:127.0.0.1",
        "::ffff:169.254.169.254",
        "2002:7f00:0001::1",  # 6to4 wrapping 127.0.0.1
    ],
)
async def test_private_and_special_addresses_are_refused(address: str) -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, text="<html>secret</html>")

    assert not is_public_address(address)
    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        fetcher = Fetcher(resolver=resolver({"evil.test": address}), http_client=client)
        result = await fetcher.fetch("http://evil.test/latest/meta-data/")
    assert failure(result) == "private_address"
    assert seen == []


@pytest.mark.parametrize("address", ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946", "8.8.8.8"])
def test_public_addresses(address: str) -> None:
    assert is_public_address(address)


def _public_site(pages: dict[str, httpx.Response]) -> tuple[httpx.AsyncClient, list[httpx.Request]]:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return pages.get(request.url.path, httpx.Response(404, text="nope"))

    return httpx.AsyncClient(transport=httpx.MockTransport(handler)), seen


async def test_connection_is_pinned_to_the_checked_address() -> None:
    html = article_html("Public", ARTICLE_TEXT)
    client, seen = _public_site({"/a": httpx.Response(200, html=html)})
    async with client:
        fetcher = Fetcher(resolver=resolver({"public.test": "93.184.216.34"}), http_client=client)
        page = await fetcher.fetch("https://public.test/a")
    assert isinstance(page, Page)
    assert [r.url.path for r in seen] == ["/robots.txt", "/a"]
    request = seen[-1]
    assert request.url.host == "93.184.216.34"
    assert request.headers["Host"] == "public.test"
    assert request.extensions["sni_hostname"] == "public.test"
    assert request.headers["Accept-Encoding"] == "gzip, deflate"


async def test_redirect_to_a_private_address_is_refused() -> None:
    client, seen = _public_site(
        {"/go": httpx.Response(302, headers={"Location": "http://intranet.test/admin"})}
    )
    async with client:
        fetcher = Fetcher(
            resolver=resolver({"public.test": "93.184.216.34", "intranet.test": "10.1.2.3"}),
            http_client=client,
            respect_robots=False,
        )
        result = await fetcher.fetch("http://public.test/go")
    assert failure(result) == "private_address"
    assert [r.url.host for r in seen] == ["93.184.216.34"]


async def test_next_checked_address_is_tried_when_the_first_refuses() -> None:
    html = article_html("Public", ARTICLE_TEXT)
    hosts: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        hosts.append(request.url.host)
        if request.url.host == "2606:2800:220:1:248:1893:25c8:1946":
            raise httpx.ConnectError("network unreachable", request=request)
        return httpx.Response(200, html=html)

    async def dual_stack(host: str) -> list[str]:
        return ["2606:2800:220:1:248:1893:25c8:1946", "93.184.216.34"]

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        fetcher = Fetcher(resolver=dual_stack, http_client=client, respect_robots=False)
        page = await fetcher.fetch("http://dual.test/a")
    assert isinstance(page, Page)
    assert hosts == ["2606:2800:220:1:248:1893:25c8:1946", "93.184.216.34"]


async def test_a_shared_client_that_follows_redirects_cannot_bypass_the_check() -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        if request.url.host == "93.184.216.34":
            return httpx.Response(302, headers={"Location": "http://169.254.169.254/latest/"})
        return httpx.Response(200, html="<html><body>metadata secrets</body></html>")

    transport = httpx.MockTransport(handler)
    async with httpx.AsyncClient(transport=transport, follow_redirects=True) as client:
        fetcher = Fetcher(
            resolver=resolver({"public.test": "93.184.216.34"}), http_client=client, respect_robots=False
        )
        result = await fetcher.fetch("http://public.test/go")
    assert failure(result) == "private_address"
    assert seen == ["http://93.184.216.34/go"]


@pytest.mark.parametrize(
    "url", ["ftp://x.test/a", "not a url", "", "javascript:alert(1)", "http://x.test:99999/"]
)
async def test_bad_urls(url: str) -> None:
    client, seen = _public_site({})
    async with client:
        result = await Fetcher(http_client=client, resolver=resolver({})).fetch(url)
    assert failure(result) == "bad_url"
    assert seen == []


async def test_unknown_host_is_a_dns_error() -> None:
    client, _ = _public_site({})
    async with client:
        result = await Fetcher(http_client=client, resolver=resolver({})).fetch("http://nowhere.test/")
    assert failure(result) == "dns_error"


async def test_connection_refused_is_a_network_error() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        fetcher = Fetcher(http_client=client, resolver=resolver({"public.test": "93.184.216.34"}))
        result = await fetcher.fetch("http://public.test/")
    assert failure(result) == "network_error"


# --------------------------------------------------------------------------- robots.txt


async def test_robots_txt_is_respected_and_fetched_once_per_host(local_server: LocalServer) -> None:
    async with make_fetcher() as fetcher:
        results = await asyncio.gather(
            fetcher.fetch(local_server.url("/private/page", host=SITE)),
            fetcher.fetch(local_server.url("/article", host=SITE)),
            fetcher.fetch(local_server.url("/article2", host=SITE)),
        )
        stats = fetcher.stats
    assert failure(results[0]) == "robots"
    assert isinstance(results[1], Page) and isinstance(results[2], Page)
    assert local_server.paths().count("/robots.txt") == 1
    assert "/private/page" not in local_server.paths()
    assert stats.failed == {"robots": 1}


async def test_robots_txt_can_be_ignored(local_server: LocalServer) -> None:
    page = await fetch(local_server, "/private/page", respect_robots=False)
    assert isinstance(page, Page)
    assert "/robots.txt" not in local_server.paths()


@pytest.mark.parametrize(("status", "allowed"), [(404, True), (403, True), (503, False)])
async def test_robots_txt_status_rules(status: int, allowed: bool) -> None:
    html = article_html("Public", ARTICLE_TEXT)
    client, _ = _public_site(
        {"/robots.txt": httpx.Response(status, text="x"), "/a": httpx.Response(200, html=html)}
    )
    async with client:
        fetcher = Fetcher(resolver=resolver({"public.test": "93.184.216.34"}), http_client=client)
        result = await fetcher.fetch("http://public.test/a")
    assert isinstance(result, Page) is allowed
    if not allowed:
        assert failure(result) == "robots"


# --------------------------------------------------------------------------- concurrency


async def test_concurrency_limits_overall_and_per_host() -> None:
    # Every request is held at the server until the test lets them all go, so the fetches
    # in flight at that moment are exactly what the limits admit; no timing is involved.
    html = article_html("Page", ARTICLE_TEXT)
    in_flight: dict[str, int] = {}
    peak: dict[str, int] = {}
    total = {"now": 0, "peak": 0}
    arrived = asyncio.Condition()
    release = asyncio.Event()

    async def handler(request: httpx.Request) -> httpx.Response:
        host = request.headers["Host"]
        async with arrived:
            in_flight[host] = in_flight.get(host, 0) + 1
            total["now"] += 1
            peak[host] = max(peak.get(host, 0), in_flight[host])
            total["peak"] = max(total["peak"], total["now"])
            arrived.notify_all()
        await release.wait()
        in_flight[host] -= 1
        total["now"] -= 1
        return httpx.Response(200, html=html)

    hosts = {f"h{i}.test": f"93.184.216.{i + 1}" for i in range(6)}
    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        fetcher = Fetcher(
            concurrency=4, per_host=2, resolver=resolver(hosts), http_client=client, respect_robots=False
        )
        urls = [f"http://{h}/p{j}" for h in hosts for j in range(5)]
        fetches = asyncio.gather(*(fetcher.fetch(u) for u in urls))
        async with arrived:
            await asyncio.wait_for(arrived.wait_for(lambda: total["now"] == 4), 60)  # a hang guard
        for _ in range(100):  # let any fetch the limits failed to hold back reach the server
            await asyncio.sleep(0)
        held = (total["now"], sorted(in_flight.values()))
        release.set()
        results = await asyncio.wait_for(fetches, 60)
    assert held == (4, [2, 2])  # the overall limit, filled by two hosts at their per-host limit
    assert all(isinstance(r, Page) for r in results)
    assert max(peak.values()) == 2 and total["peak"] == 4
    assert fetcher.stats.fetched == 30


# --------------------------------------------------------------------------- cache


class Clock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_cache_hit_miss_and_ttl(tmp_path: Path) -> None:
    clock = Clock()
    cache = PageCache(tmp_path, ttl_seconds=3600, clock=clock)
    url = "https://www.example.com/a"
    assert cache.get(url) is None
    assert cache.put(sample_page(url))
    hit = cache.get("HTTPS://www.example.com/a/?utm_source=x#frag")  # same page, other spelling
    assert hit is not None and hit.from_cache and hit.text == "Some text." and hit.date == "2024-01-01"
    clock.now += 3599
    assert cache.get(url) is not None
    clock.now += 2
    assert cache.get(url) is None  # expired
    assert len(cache) == 1
    assert cache.prune_expired() == 1
    assert len(cache) == 0


def test_cache_entries_are_sharded_json(tmp_path: Path) -> None:
    cache = PageCache(tmp_path, 60)
    cache.put(sample_page())
    path = cache.path_for("https://www.example.com/a")
    assert path.parent.parent == tmp_path and path.parent.name == path.stem[:2]
    entry = json.loads(path.read_text(encoding="utf-8"))
    assert entry["key"] == "https://www.example.com/a" and entry["version"] == CACHE_VERSION
    assert entry["addresses"] == ["93.184.216.34"]


def test_corrupt_or_foreign_entries_are_misses(tmp_path: Path) -> None:
    cache = PageCache(tmp_path, 60)
    url = "https://www.example.com/a"
    path = cache.path_for(url)
    path.parent.mkdir(parents=True)
    for content in [
        "{not json",
        "[]",
        json.dumps({"version": 99}),
        json.dumps({"version": 1, "stored_at": "x"}),
    ]:
        path.write_text(content, encoding="utf-8")
        assert cache.get(url) is None
    path.write_bytes(b"\xff\xfe\x00garbage")
    assert cache.get(url) is None


def test_cache_clear_counts_entries(tmp_path: Path) -> None:
    cache = PageCache(tmp_path, 60)
    for i in range(5):
        cache.put(sample_page(f"https://example.com/{i}"))
    assert cache.clear() == 5
    assert cache.clear() == 0
    assert PageCache(tmp_path / "missing", 60).clear() == 0


def test_concurrent_writers_never_leave_a_torn_entry(tmp_path: Path) -> None:
    url = "https://example.com/shared"
    errors: list[BaseException] = []

    def writer(n: int) -> None:
        try:
            cache = PageCache(tmp_path, 60)
            for i in range(20):
                cache.put(sample_page(url, text=f"writer {n} version {i} " + "x" * 5000))
                got = cache.get(url)
                assert got is not None and got.text.startswith("writer ")
        except BaseException as exc:  # collected and re-raised in the main thread
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(PageCache(tmp_path, 60)) == 1
    assert not list(tmp_path.rglob("*.ra-tmp"))


async def test_fetcher_uses_the_cache(local_server: LocalServer, tmp_path: Path) -> None:
    cache = PageCache(tmp_path, 3600)
    url = local_server.url("/article", host=SITE)
    async with make_fetcher(cache=cache) as fetcher:
        first = await fetcher.fetch(url)
        second = await fetcher.fetch(url + "?utm_campaign=x")
        stats = fetcher.stats
    assert isinstance(first, Page) and not first.from_cache
    assert isinstance(second, Page) and second.from_cache and second.text == first.text
    assert local_server.paths().count("/article") == 1
    assert stats.fetched == 1 and stats.cached == 1


async def test_failures_are_not_cached(local_server: LocalServer, tmp_path: Path) -> None:
    cache = PageCache(tmp_path, 3600)
    async with make_fetcher(cache=cache) as fetcher:
        await fetcher.fetch(local_server.url("/status/503", host=SITE))
    assert len(cache) == 0


def test_cli_cache_clear(tmp_path: Path) -> None:
    cache = PageCache(tmp_path / "pages", 3600)
    for i in range(3):
        cache.put(sample_page(f"https://example.com/{i}"))
    env = {"RESEARCH_AGENT_CACHE_DIR": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    result = CliRunner().invoke(cache_app, ["clear"], env=env)
    assert result.exit_code == 0, result.output
    assert "removed 3 cached web pages" in result.output
    assert len(cache) == 0
    result = CliRunner().invoke(cache_app, ["clear", "--expired"], env=env)
    assert "removed 0 expired cached web pages" in result.output
    assert "corpus" not in result.output, "no corpus index to mention"
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "0123456789abcdef.sqlite").write_bytes(b"")
    result = CliRunner().invoke(cache_app, ["clear"], env=env)
    assert result.output.splitlines()[-1].startswith(f"kept 1 corpus index in {tmp_path / 'corpus'} ")


# --------------------------------------------------------------------------- read_source and stats


async def test_read_source_selects_passages(local_server: LocalServer) -> None:
    url = local_server.url("/article", host=SITE)
    hit = SearchHit("Search title", url + "#top", "snippet text", "ddgs", published="2020-01-01")
    async with make_fetcher() as fetcher:
        read = await fetcher.read_source(hit, queries=["cold climate heat pumps"], token_budget=60)
    assert read.read and read.failure is None and read.page is not None
    source = read.source
    assert not source.snippet_only
    assert source.key == f"http://site.test:{local_server.port}/article"
    assert source.site == "site.test"
    assert source.title == "Heat pumps in cold climates"
    assert source.published == "2024-03-05"
    assert source.sub_queries == ("cold climate heat pumps",)
    assert 0 < len(source.text) <= len(read.page.text)
    assert len(source.text.split()) <= 60  # within the token budget's word cut


async def test_read_source_falls_back_to_the_snippet(local_server: LocalServer) -> None:
    hit = SearchHit("Gone", local_server.url("/status/404", host=SITE), "the search snippet", "searxng")
    async with make_fetcher() as fetcher:
        read = await fetcher.read_source(hit, queries=["q"], token_budget=100)
    assert not read.read and read.failure is not None and read.failure.reason == "http_404"
    assert read.source.snippet_only
    assert read.source.text == "the search snippet"
    assert read.source.title == "Gone" and read.source.provider == "searxng"


def test_fetcher_from_settings(tmp_path: Path) -> None:
    settings = Settings(cache_dir=tmp_path, fetch_concurrency=3, fetch_per_host=1, allow_private=True)
    fetcher = Fetcher.from_settings(settings)
    assert fetcher.cache is not None and fetcher.cache.dir == tmp_path / "pages"
    assert (fetcher.concurrency, fetcher.per_host, fetcher.allow_private) == (3, 1, True)
    assert fetcher.respect_robots and fetcher.max_bytes == 5 * 1024 * 1024
    assert Fetcher.from_settings(settings.replace(use_cache=False, respect_robots=False)).cache is None


def test_stats_as_dict() -> None:
    stats = FetchStats(fetched=3, cached=1, failed={"timeout": 2, "robots": 1}, injection_pages=1)
    assert stats.as_dict() == {
        "fetched": 3,
        "cached": 1,
        "failed": {"robots": 1, "timeout": 2},
        "failed_total": 3,
        "injection_pages": 1,
    }


async def test_a_run_of_hostile_pages_never_raises_and_is_counted(local_server: LocalServer) -> None:
    # /hang has its own test (a short deadline); here every page gets a deadline no page
    # needs, so a slow machine cannot turn a good page into a timeout.
    paths = [
        "/article",
        "/loop/a",
        "/huge",
        "/gzip-bomb",
        "/binary",
        "/image",
        "/status/500",
        "/empty",
    ]
    async with make_fetcher(total_timeout=60.0) as fetcher:
        results = await asyncio.gather(*(fetcher.fetch(local_server.url(p, host=SITE)) for p in paths))
        stats = fetcher.stats
    assert isinstance(results[0], Page)
    assert stats.fetched == 1 and stats.failed_total == len(paths) - 1
    assert set(stats.failed) == {
        "redirect_loop",
        "too_large",
        "binary_content",
        "bad_content_type",
        "http_500",
        "empty",
    }
