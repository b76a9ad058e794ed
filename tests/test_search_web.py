"""Web search providers, the registry's validation, and merged searching."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from research_agent.config import Settings
from research_agent.errors import ConfigError, SearchError
from research_agent.fetch import Fetcher
from research_agent.search.base import ProviderFailure, SearchProvider
from research_agent.search.registry import build_providers, hit_key, merge_hits, provider_names, search_all
from research_agent.search.web import DdgsProvider, ProviderError, SearxngProvider, TavilyProvider
from research_agent.sources import SearchHit
from tests.support import http_server
from tests.support.http_server import TAVILY_KEY, LocalServer

local_server = http_server.local_server  # the fixture

# --------------------------------------------------------------------------- helpers


def forbidden_client() -> tuple[httpx.AsyncClient, list[httpx.Request]]:
    """A client that records and refuses every request: proof that nothing went out."""
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        raise AssertionError(f"unexpected outbound request to {request.url}")

    return httpx.AsyncClient(transport=httpx.MockTransport(handler)), seen


class FakeProvider:
    """A provider answering from a table; raises what it is told to."""

    def __init__(
        self, name: str, table: dict[str, list[SearchHit]] | None = None, error: Exception | None = None
    ):
        self.name = name
        self.table = table or {}
        self.error = error
        self.calls: list[tuple[str, int]] = []

    async def search(self, query: str, *, max_results: int) -> list[SearchHit]:
        self.calls.append((query, max_results))
        if self.error is not None:
            raise self.error
        return self.table.get(query, [])[:max_results]


def web_hit(url: str, provider: str, title: str = "t", snippet: str = "s") -> SearchHit:
    return SearchHit(title=title, location=url, snippet=snippet, provider=provider)


# --------------------------------------------------------------------------- ddgs


async def test_ddgs_maps_results_through_the_backend_seam() -> None:
    calls: list[tuple[str, int]] = []

    def backend(query: str, max_results: int) -> list[dict[str, Any]]:
        calls.append((query, max_results))
        return [
            {
                "title": "Heat pumps",
                "href": "https://www.energy.gov/heat-pumps",
                "body": "A  guide\nto heat pumps.",
            },
            {"title": "No link", "href": "", "body": "dropped"},
            {"title": "Bad link", "href": "javascript:void(0)", "body": "dropped"},
            {"title": "", "href": "https://example.org/x", "body": ""},
        ]

    hits = await DdgsProvider(backend).search("heat pumps", max_results=5)
    assert calls == [("heat pumps", 5)]
    assert [h.location for h in hits] == ["https://www.energy.gov/heat-pumps", "https://example.org/x"]
    assert hits[0].snippet == "A guide to heat pumps."
    assert hits[0].provider == "ddgs"
    assert hits[1].title == "https://example.org/x"  # a missing title falls back to the URL


async def test_ddgs_respects_max_results() -> None:
    rows = [{"title": str(i), "href": f"https://e.org/{i}", "body": ""} for i in range(10)]
    hits = await DdgsProvider(lambda q, n: rows).search("q", max_results=3)
    assert len(hits) == 3


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (type("RatelimitException", (Exception,), {})("202 Ratelimit"), "rate limited"),
        (type("TimeoutException", (Exception,), {})("timed out"), "timed out"),
        (RuntimeError("boom"), "RuntimeError: boom"),
        # offline: ddgs nests every engine's whole error (about 400 characters); one short line says why
        (type("DDGSException", (Exception,), {})(
            "DNSError: DNSError('error sending request for url (https://html.duckduckgo.com/html/) > error "
            "resolving DNS > no connections available'); ConnectError: ConnectError('error sending request for "
            "url (https://lite.duckduckgo.com/lite/) > client error (Connect) > dns error > failed to lookup "
            "address information: Temporary failure in name resolution') " * 2),
         "cannot reach the search engine (offline, or no DNS): DNSError"),
    ],
)
async def test_ddgs_errors_become_provider_errors(error: Exception, reason: str) -> None:
    def backend(query: str, max_results: int) -> list[dict[str, Any]]:
        raise error

    with pytest.raises(ProviderError) as info:
        await DdgsProvider(backend).search("q", max_results=3)
    assert info.value.provider == "ddgs"
    assert info.value.reason == reason
    assert isinstance(info.value, SearchError)


async def test_ddgs_rejects_a_non_list_answer() -> None:
    with pytest.raises(ProviderError, match="not a list"):
        await DdgsProvider(lambda q, n: {"results": []}).search("q", max_results=3)  # type: ignore[arg-type,return-value]


# --------------------------------------------------------------------------- searxng and tavily, real formats


async def test_searxng_against_a_fake_instance(local_server: LocalServer) -> None:
    async with httpx.AsyncClient() as client:
        provider = SearxngProvider(local_server.url("/searxng/"), client)
        hits = await provider.search("heat pumps", max_results=10)
    assert [h.title for h in hits] == ["heat pumps - first", "Second"]  # javascript: URL dropped
    assert hits[0].snippet == "First result snippet."
    assert hits[0].published == "2024-01-02T00:00:00"
    assert hits[1].published is None
    assert all(h.provider == "searxng" for h in hits)
    request = local_server.requests[-1]
    assert request.path.startswith("/searxng/search?")
    assert "format=json" in request.path and "q=heat+pumps" in request.path


async def test_searxng_without_json_format_explains_the_403(local_server: LocalServer) -> None:
    def refuse_json(h: Any) -> None:
        h.send(403, "Forbidden", "text/plain")

    local_server.extra_routes[("GET", "/nojson/search")] = refuse_json
    async with httpx.AsyncClient() as client:
        with pytest.raises(ProviderError, match="enable json in search.formats"):
            await SearxngProvider(local_server.url("/nojson"), client).search("q", max_results=5)


async def test_tavily_against_a_fake_api(local_server: LocalServer) -> None:
    async with httpx.AsyncClient() as client:
        provider = TavilyProvider(TAVILY_KEY, client, base_url=local_server.url("/tavily"))
        hits = await provider.search("cold climate", max_results=2)
    assert [h.location for h in hits] == [
        "https://www.example.org/overview#section",
        "https://news.example.com/a",
    ]
    assert hits[0].published == "Tue, 05 Mar 2024 10:00:00 GMT"
    assert hits[0].snippet == "Tavily snippet one."
    request = local_server.requests[-1]
    assert request.method == "POST" and request.path == "/tavily/search"
    assert request.headers["Authorization"] == f"Bearer {TAVILY_KEY}"
    sent = json.loads(request.body)
    assert sent["query"] == "cold climate" and sent["max_results"] == 2
    assert TAVILY_KEY not in repr(provider)


async def test_tavily_bad_key(local_server: LocalServer) -> None:
    async with httpx.AsyncClient() as client:
        provider = TavilyProvider("tvly-wrong", client, base_url=local_server.url("/tavily"))
        with pytest.raises(ProviderError, match=r"not authorised \(HTTP 401\)"):
            await provider.search("q", max_results=2)


def _mock_client(handler: Any) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


@pytest.mark.parametrize(
    ("respond", "reason"),
    [
        (lambda r: httpx.Response(503, text="down"), "HTTP 503"),
        (lambda r: httpx.Response(429, text="slow down"), "rate limited (HTTP 429)"),
        (lambda r: httpx.Response(200, text="<html>not json</html>"), "answered with invalid JSON"),
        (lambda r: httpx.Response(200, json={"unexpected": True}), "answer has no 'results' list"),
        (lambda r: httpx.Response(200, json=["a list"]), "answer has no 'results' list"),
    ],
)
async def test_http_provider_failures(respond: Any, reason: str) -> None:
    async with _mock_client(respond) as client:
        for provider in (
            SearxngProvider("http://searx.test", client),
            TavilyProvider("k", client, "http://t.test"),
        ):
            with pytest.raises(ProviderError) as info:
                await provider.search("q", max_results=3)
            assert info.value.reason == reason


async def test_http_provider_timeout_and_connection_error() -> None:
    def timeout(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("slow", request=request)

    def refused(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    async with _mock_client(timeout) as client:
        with pytest.raises(ProviderError, match="timed out"):
            await SearxngProvider("http://searx.test", client, timeout=3).search("q", max_results=3)
    async with _mock_client(refused) as client:
        with pytest.raises(ProviderError, match="ConnectError"):
            await TavilyProvider("k", client, "http://t.test").search("q", max_results=3)


async def test_tavily_usage_limit() -> None:
    async with _mock_client(lambda r: httpx.Response(432, json={"detail": {"error": "limit"}})) as client:
        with pytest.raises(ProviderError, match="usage limit reached"):
            await TavilyProvider("k", client, "http://t.test").search("q", max_results=3)


# --------------------------------------------------------------------------- registry validation


def settings(**kw: Any) -> Settings:
    return Settings(cache_dir=Path("/nonexistent-cache"), **kw)


def test_default_is_ddgs_and_corpus_alone_is_local(tmp_path: Path) -> None:
    assert provider_names(settings()) == ("ddgs",)
    assert provider_names(settings(corpus_dirs=(tmp_path,))) == ("local",)
    assert provider_names(settings(search_providers=("ddgs", "searxng"), corpus_dirs=(tmp_path,))) == (
        "ddgs",
        "searxng",
        "local",
    )
    assert provider_names(settings(search_providers=("ddgs", "ddgs"))) == ("ddgs",)


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        (
            {"search_providers": ("ddgs", "bing")},
            "unknown search provider 'bing': choose from ddgs, searxng, tavily, local",
        ),
        ({"search_providers": ("searxng",)}, "searxng needs an http(s) URL"),
        ({"search_providers": ("searxng",), "searxng_url": "localhost:8888"}, "searxng needs an http(s) URL"),
        ({"search_providers": ("searxng",), "searxng_url": "ftp://x"}, "searxng needs an http(s) URL"),
        ({"search_providers": ("tavily",)}, "tavily needs TAVILY_API_KEY"),
        ({"search_providers": ("tavily",), "tavily_api_key": "  "}, "tavily needs TAVILY_API_KEY"),
        ({"search_providers": ("local",)}, "the local provider needs a corpus"),
    ],
)
def test_configuration_errors_before_any_work(kw: dict[str, Any], message: str) -> None:
    built: list[str] = []

    def backend(query: str, n: int) -> list[dict[str, Any]]:
        built.append(query)
        return []

    with pytest.raises(ConfigError) as info:
        build_providers(settings(**kw), http_client=None, ddgs_backend=backend)
    assert str(info.value).startswith(message)
    assert "\n" not in str(info.value)
    assert built == []


async def test_build_providers_in_order(tmp_path: Path) -> None:
    local = FakeProvider("local")
    async with httpx.AsyncClient() as client:
        providers = build_providers(
            settings(
                search_providers=("tavily", "searxng", "ddgs"),
                searxng_url="http://localhost:8888",
                tavily_api_key="tvly-x",
                corpus_dirs=(tmp_path,),
            ),
            http_client=client,
            local_provider=local,
            ddgs_backend=lambda q, n: [],
        )
    assert [p.name for p in providers] == ["tavily", "searxng", "ddgs", "local"]
    assert providers[-1] is local
    assert all(isinstance(p, SearchProvider) for p in providers)


def test_local_requested_without_a_provider_object_is_a_programming_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="local_provider"):
        build_providers(settings(corpus_dirs=(tmp_path,)), http_client=None)


async def test_corpus_only_run_makes_no_outbound_request(tmp_path: Path) -> None:
    note = tmp_path / "notes.md"
    note.write_text("Heat pumps work in cold climates.", encoding="utf-8")
    local = FakeProvider(
        "local",
        {
            "heat pumps": [
                SearchHit(
                    "notes", str(note), "Heat pumps work", "local", text="Heat pumps work in cold climates."
                )
            ]
        },
    )

    def ddgs_backend(query: str, n: int) -> list[dict[str, Any]]:
        raise AssertionError("ddgs was asked during a corpus-only run")

    client, seen = forbidden_client()
    async with client:
        providers = build_providers(
            settings(corpus_dirs=(tmp_path,)),
            http_client=client,
            local_provider=local,
            ddgs_backend=ddgs_backend,
        )
        results = await search_all(providers, ["heat pumps"], max_results=5)
        async with Fetcher(http_client=client, resolver=_no_dns) as fetcher:
            reads = [
                await fetcher.read_source(h, queries=["heat pumps"], token_budget=200)
                for h in results.hits["heat pumps"]
            ]
    assert [p.name for p in providers] == ["local"]
    assert seen == []
    assert reads[0].read and reads[0].source.text == "Heat pumps work in cold climates."
    assert reads[0].source.key == str(note.resolve())


async def _no_dns(host: str) -> list[str]:
    raise AssertionError(f"DNS lookup for {host} during a corpus-only run")


# --------------------------------------------------------------------------- merging and failures


def test_hit_key() -> None:
    assert hit_key(web_hit("https://WWW.x.com/a/?utm_source=1#f", "ddgs")) == "https://www.x.com/a"
    assert hit_key(web_hit("javascript:alert(1)", "ddgs")) is None
    assert hit_key(web_hit("relative/path", "ddgs")) is None
    assert hit_key(web_hit("", "ddgs")) is None


def test_local_hits_are_keyed_by_resolved_path(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    a = SearchHit("a", str(tmp_path / "sub" / ".." / "a.md"), "", "local")
    b = SearchHit("a", str(tmp_path / "a.md"), "", "local")
    assert hit_key(a) == hit_key(b) == str((tmp_path / "a.md").resolve())
    assert len(merge_hits([[a], [b]])) == 1


def test_merge_dedupes_by_normalised_url_keeping_best_rank() -> None:
    ddgs = [
        web_hit("https://a.com/1", "ddgs", snippet=""),
        web_hit("https://b.com/2?utm_source=ddg", "ddgs"),
        web_hit("https://c.com/3", "ddgs"),
    ]
    searx = [
        web_hit("https://B.com/2/", "searxng"),
        web_hit("https://a.com/1#top", "searxng", snippet="from searx"),
        web_hit("javascript:bad()", "searxng"),
        web_hit("https://d.com/4", "searxng"),
    ]
    merged = merge_hits([ddgs, searx])
    assert [hit_key(h) for h in merged] == [
        "https://a.com/1",
        "https://b.com/2",
        "https://c.com/3",
        "https://d.com/4",
    ]
    assert (
        merged[0].provider == "ddgs" and merged[0].snippet == "from searx"
    )  # kept best rank, filled the gap
    assert merged[1].provider == "searxng"  # b.com is rank 0 there and rank 1 in ddgs: best rank wins


def test_merge_interleaves_by_rank() -> None:
    first = [web_hit("https://a.com/1", "p1"), web_hit("https://a.com/2", "p1")]
    second = [web_hit("https://b.com/1", "p2"), web_hit("https://a.com/2", "p2")]
    merged = merge_hits([first, second])
    assert [h.location for h in merged] == ["https://a.com/1", "https://b.com/1", "https://a.com/2"]
    assert merged[2].provider == "p1"


async def test_search_all_runs_every_pair_and_merges_per_query() -> None:
    p1 = FakeProvider(
        "p1", {"q1": [web_hit("https://x.com/a", "p1")], "q2": [web_hit("https://y.com/b", "p1")]}
    )
    p2 = FakeProvider("p2", {"q1": [web_hit("https://X.com/a/?utm_medium=z", "p2")]})
    results = await search_all([p1, p2], ["q1", "q2", "q1"], max_results=4)
    assert sorted(p1.calls) == [("q1", 4), ("q2", 4)]
    assert sorted(p2.calls) == [("q1", 4), ("q2", 4)]
    assert [h.location for h in results.hits["q1"]] == ["https://x.com/a"]
    assert [h.location for h in results.hits["q2"]] == ["https://y.com/b"]
    assert results.failures == ()


async def test_one_failing_provider_is_recorded_and_the_others_used() -> None:
    good = FakeProvider("ddgs", {"q": [web_hit("https://x.com/a", "ddgs")]})
    bad = FakeProvider("searxng", error=ProviderError("searxng", "HTTP 503"))
    crashing = FakeProvider("tavily", error=KeyError("results"))
    reported: list[ProviderFailure] = []
    results = await search_all([good, bad, crashing], ["q"], max_results=3, on_failure=reported.append)
    assert [h.location for h in results.hits["q"]] == ["https://x.com/a"]
    assert set(results.failures) == {
        ProviderFailure("searxng", "q", "HTTP 503"),
        ProviderFailure("tavily", "q", "KeyError: 'results'"),
    }
    assert set(reported) == set(results.failures)


async def test_async_failure_callback_and_a_broken_callback() -> None:
    seen: list[str] = []

    async def report(failure: ProviderFailure) -> None:
        seen.append(failure.provider)

    def broken(failure: ProviderFailure) -> None:
        raise RuntimeError("display crashed")

    good = FakeProvider("ddgs", {"q": [web_hit("https://x.com/a", "ddgs")]})
    bad = FakeProvider("searxng", error=ProviderError("searxng", "timed out"))
    await search_all([good, bad], ["q"], max_results=3, on_failure=report)
    assert seen == ["searxng"]
    results = await search_all([good, bad], ["q"], max_results=3, on_failure=broken)
    assert len(results.failures) == 1


async def test_every_provider_failing_is_a_clear_error() -> None:
    a = FakeProvider("ddgs", error=ProviderError("ddgs", "rate limited"))
    b = FakeProvider("tavily", error=ProviderError("tavily", "not authorised (HTTP 401)"))
    with pytest.raises(SearchError) as info:
        await search_all([a, b], ["q1", "q2"], max_results=3)
    message = str(info.value)
    assert message.startswith("every search provider failed: ")
    assert "ddgs (2 of 2 queries): rate limited" in message
    assert "tavily (2 of 2 queries): not authorised (HTTP 401)" in message


async def test_partial_failure_across_queries_is_not_fatal() -> None:
    flaky = FakeProvider("ddgs", {"q2": [web_hit("https://x.com/a", "ddgs")]})
    original = flaky.search

    async def search(query: str, *, max_results: int) -> list[SearchHit]:
        if query == "q1":
            raise ProviderError("ddgs", "timed out")
        return await original(query, max_results=max_results)

    flaky.search = search  # type: ignore[method-assign]
    results = await search_all([flaky], ["q1", "q2"], max_results=3)
    assert results.hits["q1"] == ()
    assert len(results.hits["q2"]) == 1
    assert results.failures == (ProviderFailure("ddgs", "q1", "timed out"),)


async def test_no_queries_or_no_providers() -> None:
    assert (await search_all([], ["q"], max_results=3)).hits == {"q": ()}
    assert (await search_all([FakeProvider("p")], [], max_results=3)).hits == {}


async def test_registry_end_to_end_with_fake_endpoints(local_server: LocalServer) -> None:
    """ddgs (seam), searxng and tavily (local fake APIs) together, merged and de-duplicated."""

    def ddgs_backend(query: str, n: int) -> list[dict[str, Any]]:
        return [{"title": "Overview", "href": "https://www.example.org/overview", "body": "ddg snippet"}]

    async with httpx.AsyncClient() as client:
        providers = build_providers(
            settings(
                search_providers=("ddgs", "searxng", "tavily"),
                searxng_url=local_server.url("/searxng"),
                tavily_api_key=TAVILY_KEY,
            ),
            http_client=client,
            ddgs_backend=ddgs_backend,
            tavily_base_url=local_server.url("/tavily"),
        )
        results = await search_all(providers, ["heat pumps"], max_results=5)
    keys = [hit_key(h) for h in results.hits["heat pumps"]]
    assert len(keys) == len(set(keys))
    assert "https://www.example.org/overview" in keys  # ddgs and tavily (with #section) merged into one
    assert keys[0] == "https://www.example.org/overview"
    assert results.hits["heat pumps"][0].provider == "ddgs"
    assert "https://blog.example.net/post" in keys
    assert results.failures == ()
