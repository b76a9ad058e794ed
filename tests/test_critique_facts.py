"""The facts block, computed exactly from scripted runs: counts, sites (corpus folders and web
hosts), sub-queries, the user's cap, recency and citation support, in the critique file."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest
import yaml

from research_agent.config import MODES, Settings
from research_agent.errors import InputError
from research_agent.measures import (
    CitationFacts,
    RecencyFacts,
    SiteCounts,
    SiteFacts,
    SourceCounts,
    SubQueryFacts,
    WeakPair,
)
from research_agent.memory.critique.facts import compute_facts
from research_agent.memory.critique.judgement import critique_run
from research_agent.memory.lessons.select import LessonSelection
from research_agent.memory.store.files import load_critique
from research_agent.memory.store.names import corpus_id
from research_agent.pipeline import research
from research_agent.record import read_run_record
from research_agent.sources import SearchHit
from tests.conftest import ScriptedModel
from tests.support.answers import as_markdown, scored_each
from tests.support.critique import ANSWER
from tests.support.memory import NOW

QUERY = "How does PostgreSQL VACUUM reclaim space?"
CORPUS = {
    "guides/vacuum/reclaim.md": "# Reclaiming space\n\nVACUUM reclaims storage held by dead tuples and makes it reusable.\n",
    "guides/vacuum/full.md": "# VACUUM FULL\n\nVACUUM FULL rewrites the whole table and returns freed storage to the system.\n",
    "internals/mvcc.md": "# Multiversion\n\nMultiversion concurrency control writes a new row version on every update.\n",
    "overview.md": "# Overview\n\nThe internals chapter explains multiversion control in general terms.\n",
    "recipes/bread.md": "# Sourdough\n\nSourdough bread needs a lively starter and a long, cool proof.\n",
}
SUB_QUERIES = ["vacuum storage", "multiversion row version", "sourdough starter"]
# The scripted drafts here are a few sentences: a target they meet keeps the length check out of
# these runs (a draft far under the mode's target would be revised).
QUICK = replace(MODES["quick"], target_words=60)
pytestmark = pytest.mark.own_mode  # the reports say "quick" but were linted at 60 words
UNSUPPORTED = "Autovacuum thresholds in Norway were lowered to 50 percent during 2021 by Oracle"


def _sources_in(prompt: str) -> dict[str, int]:
    """Source number by the last part of its location (a file name or a page path), from a draft prompt."""
    lines = re.finditer(r"^\[(\d+)\] .*? \u2014 (\S+)", prompt, re.M)
    return {m.group(2).rsplit("/", 1)[-1]: int(m.group(1)) for m in lines}


def _draft(request) -> dict:
    n = _sources_in(request.user)
    return {
        "title": "VACUUM",
        "executive_summary": f"VACUUM FULL rewrites the whole table and returns freed storage [{n['full.md']}].",
        "key_findings": [
            f"VACUUM reclaims storage held by dead tuples and makes it reusable [{n['reclaim.md']}].",
            f"Multiversion concurrency control writes a new row version on every update [{n['mvcc.md']}].",
        ],
        "sections": [{"heading": "Tuning", "body": f"{UNSUPPORTED} [{n['mvcc.md']}]."}],
        "limitations": [],
    }


_WINTER = (
    "Heat pump efficiency falls as outdoor air gets colder",
    "Defrost cycles cost some energy on humid freezing days",
    "Cold climate models keep most of their output well below zero",
    "Backup resistance heat covers the coldest hours",
    "Installers size units for the design temperature of the region",
    "Insulation decides how much heat a home needs in January",
    "Ground source systems see steadier temperatures than air source ones",
    "Owners notice higher bills during long cold snaps",
)


@scored_each
def _relevance(block: str) -> dict:
    score = 1 if "Sourdough" in block else 2 if "chapter explains" in block else 4
    return {"score": score, "reason": "scripted"}


def _corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    for name, text in CORPUS.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


async def _corpus_run(tmp_path: Path):
    """A quick run over the corpus: three sub-queries, five files found, three kept (the model
    is scripted up to the report)."""
    root = _corpus(tmp_path)
    model = ScriptedModel()
    model.enqueue("decompose", {"domain": "technology", "sub_queries": SUB_QUERIES})
    model.enqueue("relevance", _relevance)  # the five files in one batched call
    model.enqueue("draft", as_markdown(_draft))
    settings = Settings(
        mode=QUICK, reports_dir=tmp_path / "reports", cache_dir=tmp_path / "cache", context_path=None,
        corpus_dirs=(root,), search_providers=("local",),
    )  # fmt: skip
    result = await research(QUERY, settings=settings, model=model, lessons=LessonSelection.none, now=NOW)
    return result, model, settings


async def test_facts_of_a_scripted_corpus_run(tmp_path: Path) -> None:
    result, model, settings = await _corpus_run(tmp_path)
    model.enqueue("critique", ANSWER)
    critique = await critique_run(result.run_record_path, model, settings=settings, now=NOW)
    model.assert_done()

    facts = critique.facts
    assert facts.sources == SourceCounts(found=5, fetched=5, kept=3, dropped=2, unscored=0, cited=3)
    corpus = corpus_id(tmp_path / "corpus")  # a site is the first folder below the root, under the corpus's id
    assert facts.corpora == (corpus,)
    assert facts.sites == SiteFacts(
        distinct=2,
        top=f"{corpus}/guides",
        top_share=0.67,
        per_site=(
            SiteCounts(f"{corpus}/guides", kept=2, dropped=0, cited=2),
            SiteCounts(f"{corpus}/internals", kept=1, dropped=0, cited=1),
            SiteCounts(f"{corpus}/corpus", kept=0, dropped=1, cited=0),  # a file at the top: the corpus's name
            SiteCounts(f"{corpus}/recipes", kept=0, dropped=1, cited=0),
        ),
    )
    assert facts.sub_queries == (
        SubQueryFacts(1, "vacuum storage", found=2, kept=2, cited=2, fetched=2),
        SubQueryFacts(2, "multiversion row version", found=2, kept=1, cited=1, fetched=2),
        SubQueryFacts(3, "sourdough starter", found=1, kept=0, cited=0, fetched=1),
    )
    assert facts.unanswered == 1
    # sentences: summary 1, findings 2 and 3, the tuning section 4 (cites the MVCC page: weak)
    mvcc = next(s.n for s in result.sources if s.location.endswith("mvcc.md"))
    assert facts.citations == CitationFacts(4, 1, 0.25, (WeakPair(4, mvcc),))
    assert facts.recency == RecencyFacts()  # corpus files carry no date
    text = (result.run_record_path.parent / f"critique-{result.id}.yaml").read_text()
    assert "  unanswered: 1\n" in text and f"- site: {corpus}/guides\n" in text
    assert load_critique(result.run_record_path.parent / f"critique-{result.id}.yaml") == critique


class WebProvider:
    """Web hits with dates: three sub-queries, eight distinct pages (one found twice)."""

    name = "fake-web"
    HITS = [
        [("https://docs.energy.gov/a", "2024-03-01"), ("https://www.energy.gov/b", "2022-06-15"),
         ("https://blog.example.com/c", None)],
        [("https://news.example.org/d", "2025-11-01T08:00:00Z"), ("https://www.energy.gov/b", "2022-06-15")],
        [(f"https://forum.example.net/{i}", "2026-01-0{i}") for i in range(1, 5)],
    ]  # fmt: skip

    def __init__(self, sub_queries: list[str]) -> None:
        self.by_query = dict(zip(sub_queries, self.HITS, strict=True))

    async def search(self, query: str, *, max_results: int) -> list[SearchHit]:
        return [
            SearchHit(title=f"Page {url[-1]}", location=url, snippet=f"Heat pump efficiency page {url[-1]} in winter.",
                      provider=self.name, published=when)
            for url, when in self.by_query[query]
        ]  # fmt: skip


async def _web_run(tmp_path: Path, max_sources: int | None):
    sub_queries = ["heat pump efficiency", "heat pump cost", "heat pump noise"]
    model = ScriptedModel()
    model.enqueue("decompose", {"domain": "technology", "sub_queries": sub_queries})
    model.enqueue(  # every page in one batched call
        "relevance", scored_each(lambda block: {"score": 1 if "forum" in block else 3, "reason": "scripted"}),
    )

    def draft(request) -> dict:
        numbers = sorted(_sources_in(request.user).values())
        body = " ".join(f"{_WINTER[i % len(_WINTER)]} [{n}]." for i, n in enumerate(numbers))
        return {"title": "Heat pumps", "executive_summary": body, "key_findings": ["Efficiency drops in winter [1]."],
                "sections": [{"heading": "Notes", "body": "Winter efficiency matters [1]."}], "limitations": []}  # fmt: skip

    model.enqueue("draft", as_markdown(draft))
    settings = Settings(
        mode=QUICK, reports_dir=tmp_path / "reports", cache_dir=tmp_path / "cache", context_path=None,
        max_sources=max_sources,
    )  # fmt: skip
    result = await research(
        "How efficient are heat pumps in winter?", settings=settings, model=model,
        providers=[WebProvider(sub_queries)], reader=None, lessons=LessonSelection.none, now=NOW,
    )  # fmt: skip
    model.assert_done()
    record = read_run_record(result.run_record_path)
    report = result.report_path.read_text(encoding="utf-8")
    return compute_facts(record, report, now=NOW)


async def test_web_hosts_dates_and_a_list_cut_by_the_mode_not_the_user(tmp_path: Path) -> None:
    run = await _web_run(tmp_path, max_sources=None)
    facts = run.measured
    # eight found; the mode's own limit (quick: 6) cut the list: not the user's cap
    assert facts.sources == SourceCounts(found=8, fetched=6, kept=4, dropped=2, unscored=0, cited=4)
    assert facts.sites == SiteFacts(
        distinct=3,
        top="energy.gov",
        top_share=0.5,
        per_site=(
            SiteCounts("energy.gov", 2, 0, 2),  # docs. and www. are one registrable site
            SiteCounts("example.com", 1, 0, 1),
            SiteCounts("example.org", 1, 0, 1),
            SiteCounts("example.net", 0, 2, 0),
        ),
    )
    assert [(q.found, q.kept, q.cited) for q in facts.sub_queries] == [(3, 3, 3), (2, 2, 2), (4, 0, 0)]
    assert facts.unanswered == 1
    started = NOW.date()
    ages = sorted((started - date.fromisoformat(d)).days for d in ("2024-03-01", "2022-06-15", "2025-11-01"))
    assert facts.recency == RecencyFacts(dated=3, median_age_days=ages[1], oldest_year=2022, newest_year=2025)
    assert "few_sources" not in run.tags()


async def test_capped_by_user_only_when_the_users_own_cap_cut_the_list(tmp_path: Path) -> None:
    capped = await _web_run(tmp_path / "two", max_sources=2)
    assert capped.measured.sources.capped_by_user is True
    assert capped.measured.sources.kept == 2
    assert "few_sources" not in capped.tags()  # the user asked for two
    assert "capped by the user: yes" in capped.as_text()
    uncapped = replace(
        capped,
        measured=replace(capped.measured, sources=replace(capped.measured.sources, capped_by_user=False)),
    )
    assert "few_sources" in uncapped.tags()  # the same shortfall without the user's cap
    roomy = await _web_run(tmp_path / "twenty", max_sources=20)  # a cap that cut nothing
    assert roomy.measured.sources.capped_by_user is False
    assert (roomy.measured.sources.found, roomy.measured.sources.fetched) == (8, 8)


async def test_a_record_from_before_the_new_fields_still_reads_and_critiques(tmp_path: Path) -> None:
    """A schema_version 2 record written before the run measured its searches and citations."""
    result, model, settings = await _corpus_run(tmp_path)
    data = yaml.safe_load(result.run_record_path.read_text(encoding="utf-8"))
    for key in ("sub_query_counts", "found_count", "capped_by_user", "citation_support"):
        del data[key]
    for source in data["sources"]:
        del source["published"], source["sub_queries"]
    result.run_record_path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")

    record = read_run_record(result.run_record_path)
    assert (record.sub_query_counts, record.found_count, record.citation_support) == (None, None, None)
    assert record.capped_by_user is False and record.sources[0].sub_queries == ()
    model.enqueue("critique", ANSWER)
    critique = await critique_run(result.run_record_path, model, settings=settings, now=NOW)
    facts = critique.facts
    assert facts.sources == SourceCounts(found=5, fetched=5, kept=3, dropped=2, unscored=0, cited=3)
    assert (facts.sub_queries, facts.unanswered) == ((), 0)
    assert facts.citations == CitationFacts(4, 0, 0.0, ())  # counted, but the writer's texts are gone
    assert facts.sites.top == f"{corpus_id(tmp_path / 'corpus')}/guides"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["sources"][0].update(published="May 2024"), "does not match"),
        (lambda d: d["sources"][0].update(sub_queries=[0]), "less than the minimum of 1"),
        (lambda d: d.update(found_count=-1), "found_count: -1 is less than the minimum of 0"),
        (lambda d: d["citation_support"].update(weakly_supported_share=2), "greater than the maximum of 1"),
        (lambda d: d["sub_query_counts"][0].pop("found"), "'found' is a required property"),
    ],
)
async def test_bad_new_record_fields_are_refused(tmp_path: Path, change, message: str) -> None:
    result, _, _ = await _corpus_run(tmp_path)
    data = yaml.safe_load(result.run_record_path.read_text(encoding="utf-8"))
    change(data)
    result.run_record_path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    with pytest.raises(InputError, match=message):
        read_run_record(result.run_record_path)
