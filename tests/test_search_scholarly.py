"""The scholarly providers against recorded replies on 127.0.0.1: what each reads from a reply, and
how each takes an empty, a malformed, a rate-limited, an oversized and a slow one."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from research_agent.search.base import ProviderError
from research_agent.search.scholarly.polite import parse_xml
from tests.support import http_server, scholarly
from tests.support.scholarly import PROVIDER_ROUTE, PROVIDERS, QUERY, FakeTime, ScholarlyApis, provider

local_server = http_server.local_server  # the fixtures
client = scholarly.client


@pytest.fixture
def apis(local_server: http_server.LocalServer) -> ScholarlyApis:
    return ScholarlyApis(local_server)


def query_of(apis: ScholarlyApis, route: str) -> dict[str, list[str]]:
    path = {"openalex": "/openalex/works", "arxiv": "/arxiv/query", "esearch": "/pubmed/esearch.fcgi",
            "efetch": "/pubmed/efetch.fcgi", "s2": "/s2/paper/search"}[route]  # fmt: skip
    request = next(r for r in apis.server.requests if r.path.startswith(path))
    return parse_qs(urlsplit(request.path).query)


# --- what each provider reads ------------------------------------------------------------------


async def test_openalex_rebuilds_the_abstract_and_links_the_doi(apis, client) -> None:
    hits = await provider(apis, client, "openalex", mailto="me@example.org").search(QUERY, max_results=5)
    first, preprint = hits
    assert first.location == "https://doi.org/10.5555/vldb.2021.0042"
    assert first.text.startswith("PostgreSQL keeps dead tuples after updates and deletes until VACUUM reclaims their space.")
    assert first.text.endswith("cut table bloat by 38%.")
    assert first.work.citation == (
        "Ana Lima et al. (2021). Reclaiming dead tuples: vacuum scheduling in multiversion PostgreSQL databases. "
        "Proceedings of the VLDB Endowment."
    )
    assert first.work.full_text_url == apis.server.url("/fulltext/vacuum-scheduling.pdf")
    assert first.work.identifiers == {"doi": "10.5555/vldb.2021.0042", "openalex": "W4200000001"}
    # arXiv's own DOI is read as the arXiv id: the preprint links to its abstract page
    assert preprint.location == "https://arxiv.org/abs/2403.01234"
    assert preprint.work.doi == "" and preprint.work.arxiv == "2403.01234" and preprint.text == ""
    sent = query_of(apis, "openalex")
    assert sent["mailto"] == ["me@example.org"] and sent["search"] == [QUERY] and "api_key" not in sent


async def test_arxiv_reads_the_atom_feed(apis, client) -> None:
    preprint, published = await provider(apis, client, "arxiv").search(QUERY, max_results=4)
    assert query_of(apis, "arxiv")["search_query"] == ["all:vacuum AND all:reclaim AND all:dead AND all:tuples AND all:postgresql"]
    assert preprint.location == "https://arxiv.org/abs/2403.01234"
    assert preprint.work.citation == (
        "Dana Ode and Eli Park (2024). Autovacuum thresholds and table bloat in PostgreSQL. arXiv preprint arXiv:2403.01234."
    )
    assert preprint.work.full_text_url == apis.server.url("/fulltext/arxiv-2403.01234v2.pdf")
    assert preprint.text.startswith("Dead tuples accumulate in PostgreSQL tables under steady update traffic until VACUUM reclaims them.")
    # A published preprint links to its DOI and keeps its arXiv id; its venue is the journal reference.
    assert published.location == "https://doi.org/10.5555/sigmod.2023.555"
    assert published.work.identifiers == {"doi": "10.5555/sigmod.2023.555", "arxiv": "2210.04567"}
    assert published.work.venue == "Proc. ACM Manag. Data 1(2), 2023"


async def test_pubmed_searches_then_fetches_in_relevance_order(apis, client) -> None:
    hits = await provider(apis, client, "pubmed", ncbi_api_key="k-ncbi", mailto="me@example.org").search(QUERY, max_results=2)
    assert [h.work.pmid for h in hits] == ["38000002", "38000001"]  # esearch's order, not efetch's
    vldb, registry = hits
    assert vldb.work.year == 2022 and vldb.location == "https://doi.org/10.5555/vldb.2021.0042"  # MedlineDate "2022 Nov-Dec"
    assert registry.work.authors == ("Helena Gomez", "Ken Ito", "Registry Infrastructure Group")
    assert registry.work.title == "Keeping a clinical registry fast: VACUUM, dead tuples and index bloat in PostgreSQL."
    assert registry.text.startswith("OBJECTIVE: To measure how dead tuples") and "METHODS: We replayed" in registry.text
    assert registry.work.full_text_url == apis.server.url("/pmc/PMC10000001/")
    assert registry.work.identifiers == {"doi": "10.5555/jcde.2023.117", "pmid": "38000001", "pmcid": "PMC10000001"}
    assert query_of(apis, "efetch")["id"] == ["38000002,38000001"]
    for route in ("esearch", "efetch"):
        sent = query_of(apis, route)
        assert sent["api_key"] == ["k-ncbi"] and sent["tool"] == ["research-agent"] and sent["email"] == ["me@example.org"]


async def test_semantic_scholar_sends_its_key_as_a_header(apis, client) -> None:
    hits = await provider(apis, client, "semanticscholar", semanticscholar_api_key="s2-key").search(QUERY, max_results=5)
    assert [h.location for h in hits] == ["https://doi.org/10.5555/vldb.2021.0042", "https://arxiv.org/abs/2210.04567"]
    assert hits[0].work.s2 == "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c" and hits[1].text == ""
    request = next(r for r in apis.server.requests if r.path.startswith("/s2/"))
    assert request.headers["x-api-key"] == "s2-key"
    assert "api_key" not in request.path and "s2-key" not in repr(provider(apis, client, "semanticscholar"))


async def test_wikipedia_reads_intro_extracts_in_search_order(apis, client) -> None:
    hits = await provider(apis, client, "wikipedia").search(QUERY, max_results=5)
    assert [h.title for h in hits] == ["Multiversion concurrency control", "PostgreSQL"]
    assert hits[0].location == apis.server.url("/wiki/Multiversion_concurrency_control")
    assert hits[0].work.citation == "Multiversion concurrency control. Wikipedia."
    assert hits[0].work.identifiers == {} and hits[0].text.startswith("Multiversion concurrency control (MVCC)")


# --- empty, malformed, oversized, slow, rate limited -----------------------------------------


@pytest.mark.parametrize("name", PROVIDERS)
async def test_an_empty_reply_is_no_results(apis, client, name: str) -> None:
    apis.mode[PROVIDER_ROUTE[name]] = "empty"
    assert await provider(apis, client, name).search(QUERY, max_results=5) == []


MALFORMED = {
    "openalex": "answered with invalid JSON",
    "arxiv": "answered with invalid XML",
    "pubmed": "answered with invalid JSON",
    "semanticscholar": "answer's 'data' is not a list",
    "wikipedia": "answer's 'query.pages' is not a list",
}


@pytest.mark.parametrize("name", PROVIDERS)
async def test_a_malformed_reply_fails_the_provider_in_one_line(apis, client, name: str) -> None:
    apis.mode[PROVIDER_ROUTE[name]] = "malformed"
    with pytest.raises(ProviderError) as info:
        await provider(apis, client, name).search(QUERY, max_results=5)
    assert info.value.reason == MALFORMED[name]


async def test_a_malformed_efetch_after_a_good_esearch_fails_pubmed(apis, client) -> None:
    apis.mode["efetch"] = "malformed"
    with pytest.raises(ProviderError, match="answered with invalid XML"):
        await provider(apis, client, "pubmed").search(QUERY, max_results=5)


@pytest.mark.parametrize(("name", "reason"), [
    ("arxiv", "answered with an error: max_results must be non-negative"),
    ("wikipedia", 'answered with an error: The "gsrsearch" parameter must be set.'),
])  # fmt: skip
async def test_an_error_reply_is_named(apis, client, name: str, reason: str) -> None:
    apis.mode[PROVIDER_ROUTE[name]] = "error"
    with pytest.raises(ProviderError) as info:
        await provider(apis, client, name).search(QUERY, max_results=5)
    assert info.value.reason == reason


@pytest.mark.parametrize("name", PROVIDERS)
async def test_an_oversized_reply_fails_at_the_cap(apis, client, name: str) -> None:
    apis.mode[PROVIDER_ROUTE[name]] = "huge"
    apis.huge_bytes = 64 * 1024
    with pytest.raises(ProviderError) as info:
        await provider(apis, client, name, search_reply_max_bytes=8192).search(QUERY, max_results=5)
    assert info.value.reason == "answered with more than 8,192 bytes (the reply cap)"


@pytest.mark.parametrize("name", PROVIDERS)
async def test_a_slow_reply_fails_at_the_request_limit(apis, client, name: str) -> None:
    apis.mode[PROVIDER_ROUTE[name]] = "slow"  # the server answers only once the test releases it
    try:
        with pytest.raises(ProviderError) as info:
            await provider(apis, client, name, fetch_timeout=1.0).search(QUERY, max_results=5)
    finally:
        apis.release.set()
    assert info.value.reason == "timed out after 1s"


@pytest.mark.parametrize("name", PROVIDERS)
async def test_a_429_is_waited_out_as_retry_after_asks_then_answered(apis, client, name: str) -> None:
    route = PROVIDER_ROUTE[name]
    apis.mode[route], apis.retry_after = "429", "7"
    time = FakeTime()
    hits = await provider(apis, client, name, time).search(QUERY, max_results=5)
    assert hits, "the second try answered"
    assert apis.requests_to(route) == 2
    assert time.waits[0] == 7.0  # the first wait is the one Retry-After asked for


async def test_a_retry_after_past_the_request_limit_rests_the_provider(apis, client) -> None:
    apis.mode["openalex"], apis.retry_after = "429", "45"
    time = FakeTime()
    openalex = provider(apis, client, "openalex", time, fetch_timeout=20.0)
    with pytest.raises(ProviderError, match=r"rate limited \(HTTP 429; it asks to wait 45s\)"):
        await openalex.search(QUERY, max_results=5)
    time.now += 10  # another sub-query, ten seconds later: refused without asking the API again
    with pytest.raises(ProviderError, match="rate limited: resting 35s more"):
        await openalex.search(QUERY, max_results=5)
    assert apis.requests_to("openalex") == 1 and time.waits == []
    time.now += 36  # once it has passed, the API is asked again
    assert await openalex.search(QUERY, max_results=5)


# --- pace -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "changes", "interval"), [
    ("arxiv", {}, 3.0),
    ("semanticscholar", {}, 3.0),
    ("semanticscholar", {"semanticscholar_api_key": "k"}, 1.0),
    ("pubmed", {}, 0.343),
    ("pubmed", {"ncbi_api_key": "k"}, 0.11),
    ("openalex", {}, 0.1),
])  # fmt: skip
async def test_requests_keep_the_apis_published_pace(apis, client, name: str, changes: dict, interval: float) -> None:
    time = FakeTime()
    searcher = provider(apis, client, name, time, **changes)
    await searcher.search(QUERY, max_results=5)
    await searcher.search(QUERY, max_results=5)
    requests = 4 if name == "pubmed" else 2  # esearch then efetch, twice
    assert time.waits == [interval] * (requests - 1)


def test_xml_that_declares_entities_is_refused_before_parsing() -> None:
    bomb = b'<?xml version="1.0"?><!DOCTYPE f [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;">]><feed>&b;</feed>'
    with pytest.raises(ProviderError, match="declares entities"):
        parse_xml("arxiv", bomb)


async def test_a_key_never_reaches_a_failure_reason(apis) -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError(f"cannot reach {request.url}", request=request)

    async with httpx.AsyncClient(transport=httpx.MockTransport(refuse)) as client:
        with pytest.raises(ProviderError) as info:
            await provider(apis, client, "pubmed", ncbi_api_key="secret-ncbi-key").search(QUERY, max_results=2)
    assert "cannot reach" in info.value.reason and "api_key=***" in info.value.reason
    assert "secret-ncbi-key" not in info.value.reason
