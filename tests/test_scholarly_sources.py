"""Scholarly results as sources: one work found by several providers is one source, its open full
text is read behind the same guards as any page (the abstract standing in when it cannot be), and
a run over them cites the works as researchers do, in the report, the run record and the HTML."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
import yaml

from research_agent.export import report_page
from research_agent.fetch import Fetcher
from research_agent.fetch.reading import work_source
from research_agent.memory.critique.site_names import site_name, source_sites
from research_agent.memory.lessons.build.judging import usable_site
from research_agent.memory.lessons.types import LessonSelection
from research_agent.pipeline import research
from research_agent.record import SourceSummary
from research_agent.search.registry import search_all
from research_agent.search.scholarly.build import scholarly_provider
from research_agent.sources import SearchHit, Work
from tests.support import http_server
from tests.support.pipeline import QUERY, source_entries
from tests.support.research_responder import ResearchResponder
from tests.support.responder_model import ResponderModel
from tests.support.scholarly import ScholarlyApis

local_server = http_server.local_server  # the fixture

ALL = ("openalex", "arxiv", "pubmed", "semanticscholar", "wikipedia")
VLDB = "https://doi.org/10.5555/vldb.2021.0042"
PREPRINT = "https://arxiv.org/abs/2403.01234"
PUBLISHED = "https://doi.org/10.5555/sigmod.2023.555"
REGISTRY = "https://doi.org/10.5555/jcde.2023.117"


async def _no_wait(seconds: float) -> None:
    return None


def providers(apis: ScholarlyApis, client: httpx.AsyncClient, names=ALL, **changes):
    settings = apis.settings(**changes)
    return [scholarly_provider(name, settings, client, sleep=_no_wait) for name in names]


async def test_a_work_found_by_several_providers_is_one_hit_completed_from_each(local_server) -> None:
    apis = ScholarlyApis(local_server)
    async with httpx.AsyncClient() as client:
        results = await search_all(providers(apis, client), [QUERY], max_results=5)
    hits = {h.location: h for h in results.hits[QUERY]}
    assert [h.location for h in results.hits[QUERY]].count(VLDB) == 1  # OpenAlex, PubMed and Semantic Scholar
    vldb = hits[VLDB].work
    assert vldb.identifiers == {"doi": "10.5555/vldb.2021.0042", "pmid": "38000002", "openalex": "W4200000001",
                                "s2": "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c"}  # fmt: skip
    # The preprint: OpenAlex has no abstract for it, arXiv has; merged, it has one and arXiv's PDF.
    preprint = hits[PREPRINT]
    assert preprint.text.startswith("Dead tuples accumulate") and preprint.work.full_text_url.endswith("arxiv-2403.01234v2.pdf")
    # Semantic Scholar knows the published paper only by its arXiv id; arXiv gave its DOI: one work, at its DOI.
    assert PUBLISHED in hits and "https://arxiv.org/abs/2210.04567" not in hits
    assert set(hits) == {VLDB, PREPRINT, PUBLISHED, REGISTRY, apis.server.url("/wiki/Multiversion_concurrency_control"),
                         apis.server.url("/wiki/PostgreSQL")}  # fmt: skip


def hit_of(apis: ScholarlyApis, work: Work, location: str) -> SearchHit:
    return SearchHit(work.title, location, work.abstract, "openalex", text=work.abstract, work=work)


ABSTRACT = "PostgreSQL keeps dead tuples after updates until VACUUM reclaims their space."


@pytest.mark.parametrize(("path", "expected", "failure"), [
    ("/fulltext/vacuum-scheduling.pdf", "count-triggered VACUUM reclaimed dead tuples within minutes", None),
    ("/pmc/PMC10000001/", "index bloat from dead tuples doubled the time of the nightly report", None),
    ("/private/arxiv-2210.04567v1.pdf", None, "robots"),  # robots.txt disallows it: the abstract stands
    ("/status/404", None, "http_404"),
])  # fmt: skip
async def test_the_full_text_is_read_behind_the_fetchers_guards_else_the_abstract(
    local_server, path: str, expected: str | None, failure: str | None
) -> None:
    apis = ScholarlyApis(local_server)
    work = Work("Reclaiming dead tuples", ("Ana Lima",), 2021, "PVLDB", ABSTRACT, apis.server.url(path), doi="10.5555/x")
    async with Fetcher(allow_private=True) as fetcher:
        read = await fetcher.read_source(hit_of(apis, work, work.link), queries=("dead tuples VACUUM",), token_budget=400)
    source = read.source
    assert source.text.startswith(ABSTRACT)  # the abstract first, whatever else was read
    assert source.location == "https://doi.org/10.5555/x" and source.work == work and not source.snippet_only
    assert source.site == "doi:10.5555/x"
    if expected:
        assert expected in source.text and read.failure is None
    else:
        assert source.text == ABSTRACT and read.failure.reason == failure


async def test_private_full_text_addresses_stay_refused_without_allow_private(local_server) -> None:
    apis = ScholarlyApis(local_server)
    work = Work("W", abstract=ABSTRACT, full_text_url=apis.server.url("/fulltext/vacuum-scheduling.pdf"), doi="10.5555/x")
    async with Fetcher() as fetcher:
        read = await fetcher.read_source(hit_of(apis, work, work.link), queries=("q",), token_budget=400)
    assert read.source.text == ABSTRACT and read.failure.reason == "private_address"
    assert apis.server.requests == []


def test_scholarly_sites_count_each_work_and_teach_no_site_lesson() -> None:
    paper = SourceSummary(1, "t", VLDB, "doi:10.5555/vldb.2021.0042", "openalex", 5, "", "kept", False,
                          identifiers=(("doi", "10.5555/vldb.2021.0042"), ("openalex", "W1")))  # fmt: skip
    assert site_name(paper) == "scholarly/doi-10.5555-vldb.2021.0042"
    assert not usable_site(site_name(paper))
    assert usable_site("wikipedia.org")  # an encyclopedia article counts under its web site, as pages do
    url = "https://en.wikipedia.org/wiki/MVCC"
    article = work_source(SearchHit("MVCC", url, "", "wikipedia", work=Work("MVCC", abstract="a", page_url=url)), (), 100)
    assert article.site == "wikipedia.org" and source_sites([article]) == {"wikipedia.org"}


async def test_a_run_over_the_scholarly_providers_cites_works_as_researchers_do(local_server, tmp_path: Path) -> None:
    apis = ScholarlyApis(local_server)
    settings = apis.settings(reports_dir=tmp_path / "reports", cache_dir=tmp_path / "cache", context_path=None)
    async with httpx.AsyncClient() as client, Fetcher(allow_private=True) as reader:
        result = await research(
            QUERY, settings=settings, model=ResponderModel(ResearchResponder()), providers=providers(apis, client),
            reader=reader, lessons=lambda domain: LessonSelection.none(domain),
        )  # fmt: skip
    entries = source_entries(result.report_markdown)
    lines = {line.rsplit(" \u2014 ", 1)[1]: line.rsplit(" \u2014 ", 1)[0] for line in entries.values()}
    assert lines[f"<{VLDB}>"] == (
        "Ana Lima et al. (2021). Reclaiming dead tuples: vacuum scheduling in multiversion PostgreSQL databases. "
        "Proceedings of the VLDB Endowment."
    )
    assert lines[f"<{PREPRINT}>"] == "Dana Ode and Eli Park (2024). Autovacuum thresholds and table bloat in PostgreSQL. arXiv preprint arXiv:2403.01234."
    assert list(lines).count(f"<{VLDB}>") == 1
    record = yaml.safe_load(result.run_record_path.read_text(encoding="utf-8"))
    ids = {s["location"]: s.get("identifiers") for s in record["sources"]}
    assert ids[VLDB]["doi"] == "10.5555/vldb.2021.0042" and ids[PREPRINT] == {"arxiv": "2403.01234", "openalex": "W4390000002"}
    assert ids[apis.server.url("/wiki/PostgreSQL")] is None  # an encyclopedia article has no identifier
    assert [f["reason"] for f in record["fetch_failures"] if "/private/" in f["location"]] == ["robots"]
    page, _ = report_page(result.report_path, result.report_markdown, settings.reports_dir)
    assert f'href="{VLDB}"' in page.html and f'href="{PREPRINT}"' in page.html
    assert "Ana Lima et al. (2021)." in page.html and page.previews > 0
