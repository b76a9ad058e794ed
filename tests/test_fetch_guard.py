"""The address guard covers the page cache too, and ranges the ipaddress module calls global."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from research_agent.fetch import Fetcher, is_public_address
from research_agent.fetch.cache import CACHE_VERSION, PageCache
from research_agent.sources import Page
from tests.support import http_server
from tests.support.fetch import SITE, failure, make_fetcher, resolver, sample_page
from tests.support.http_server import ARTICLE_TEXT, LocalServer, article_html

local_server = http_server.local_server  # the fixture

CANARY = "coefficient of performance"  # a phrase of the local server's /article


async def test_a_page_cached_under_allow_private_is_not_served_without_it(
    local_server: LocalServer, tmp_path: Path
) -> None:
    cache = PageCache(tmp_path, 3600)
    url = local_server.url("/article", host=SITE)
    async with make_fetcher(cache=cache, allow_private=True) as fetcher:
        first = await fetcher.fetch(url)
    assert isinstance(first, Page) and CANARY in first.text
    assert first.addresses == ("127.0.0.1",)
    assert cache.get(url) is not None
    requests = len(local_server.requests)

    async with make_fetcher(cache=cache, allow_private=False) as fetcher:
        refused = await fetcher.fetch(url)
        stats = fetcher.stats
    assert failure(refused) == "private_address"
    assert stats.cached == 0 and stats.failed == {"private_address": 1}
    assert len(local_server.requests) == requests  # refused before any request, as a live fetch is

    async with make_fetcher(cache=cache, allow_private=True) as fetcher:
        again = await fetcher.fetch(url)
    assert isinstance(again, Page) and again.from_cache  # still served where private addresses are allowed


async def test_every_redirect_hop_is_recorded_and_rechecked_on_a_cache_hit(tmp_path: Path) -> None:
    html = article_html("Intranet", ARTICLE_TEXT)
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.host)
        if request.url.host == "93.184.216.34":
            return httpx.Response(302, headers={"Location": "http://intranet.test/wiki"})
        return httpx.Response(200, html=html)

    dns = resolver({"public.test": "93.184.216.34", "intranet.test": "10.1.2.3"})
    cache = PageCache(tmp_path, 3600)
    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        allowed = Fetcher(resolver=dns, http_client=client, respect_robots=False, allow_private=True, cache=cache)
        page = await allowed.fetch("http://public.test/go")
        assert isinstance(page, Page) and page.addresses == ("93.184.216.34", "10.1.2.3")
        stored = json.loads(cache.path_for("http://public.test/go").read_text(encoding="utf-8"))
        assert stored["addresses"] == ["93.184.216.34", "10.1.2.3"]
        seen.clear()

        guarded = Fetcher(resolver=dns, http_client=client, respect_robots=False, cache=cache)
        result = await guarded.fetch("http://public.test/go")
    assert failure(result) == "private_address"  # the first hop is public, the page came from 10.1.2.3
    assert seen == ["93.184.216.34"]  # a live fetch, stopped at the private hop as always


def _write_entry(cache: PageCache, url: str, **changes: object) -> None:
    entry = {
        "version": CACHE_VERSION,
        "key": url,
        "stored_at": 1e12,
        "url": url,
        "final_url": url,
        "title": "T",
        "date": None,
        "site_name": "example.com",
        "text": "cached text",
        "addresses": ["93.184.216.34"],
    }
    entry.update(changes)
    for key in [k for k, v in changes.items() if v is None and k != "date"]:
        del entry[key]
    path = cache.path_for(url)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(entry), encoding="utf-8")


@pytest.mark.parametrize(
    "changes",
    [
        {"version": 1, "addresses": None},  # a legacy entry: no record of where it came from
        {"addresses": None},
        {"addresses": []},
        {"addresses": ["not-an-address"]},
        {"addresses": ["93.184.216.34", 7]},
        {"addresses": "93.184.216.34"},
    ],
    ids=["legacy", "missing", "empty", "garbage", "not-a-string", "not-a-list"],
)
def test_an_entry_without_valid_addresses_is_a_miss(tmp_path: Path, changes: dict) -> None:
    cache = PageCache(tmp_path, 3600, clock=lambda: 1e12)
    url = "https://example.com/a"
    _write_entry(cache, url)
    assert cache.get(url) is not None and cache.get(url).addresses == ("93.184.216.34",)
    _write_entry(cache, url, **changes)
    assert cache.get(url) is None


def test_a_page_without_addresses_is_not_stored(tmp_path: Path) -> None:
    cache = PageCache(tmp_path, 3600)
    assert not cache.put(Page("https://example.com/a", "https://example.com/a", "T", None, "example.com", "x"))
    assert len(cache) == 0
    assert cache.put(sample_page("https://example.com/b")) and len(cache) == 1


@pytest.mark.parametrize(
    "address",
    [
        "fec0::1",  # site-local, deprecated by RFC 3879 (ipaddress calls it global)
        "fec0:1::1",
        "feff:ffff::1",  # the top of fec0::/10
        "192.88.99.1",  # 6to4 relay anycast, deprecated by RFC 7526
        "3fff::1",  # IPv6 documentation, RFC 9637
        "2001:db8::1",  # IPv6 documentation, RFC 3849
        "64:ff9b::7f00:1",  # NAT64 of 127.0.0.1
        "64:ff9b::a01:203",  # NAT64 of 10.1.2.3
        "64:ff9b::a9fe:a9fe",  # NAT64 of 169.254.169.254
        "64:ff9b:1::1",  # local-use NAT64 prefix
        "::7f00:1",  # IPv4-compatible (deprecated) 127.0.0.1
    ],
)
def test_deprecated_and_special_ranges_are_refused(address: str) -> None:
    assert not is_public_address(address)


@pytest.mark.parametrize("address", ["64:ff9b::808:808", "2001:4860:4860::8888", "192.88.100.1", "2a00:1450:4001::1"])
def test_neighbours_of_the_special_ranges_stay_public(address: str) -> None:
    # NAT64 of a public IPv4 address is how IPv6-only networks reach IPv4 sites.
    assert is_public_address(address)
