"""The whole pipeline with a scripted model and an in-memory search provider."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from research_agent.config import MODES
from research_agent.errors import InputError
from research_agent.memory.lessons.select import LessonSelection
from research_agent.pipeline import research
from research_agent.sources import SearchHit
from tests.support.pipeline import DOCS, QUERY, DocsProvider, citations, script, settings_for, source_entries
from tests.support.research_responder import ResearchResponder


class EmptyProvider:
    name = "local"

    async def search(self, query: str, *, max_results: int) -> list[SearchHit]:
        return []


async def test_standard_run_writes_a_cited_report_and_run_record(tmp_path, scripted_model):
    script(scripted_model, ResearchResponder())
    provider = DocsProvider(tmp_path)
    result = await research(
        QUERY, settings=settings_for(tmp_path), model=scripted_model, providers=[provider],
        lessons=lambda domain: LessonSelection.none(domain),
    )
    report = result.report_path.read_text(encoding="utf-8")
    assert report == result.report_markdown
    for heading in ("## Executive Summary", "## Key Findings", "## Adversarial Analysis",
                    "## Limitations & Gaps", "## Sources"):
        assert heading in report
    assert report.startswith(f"---\nid: {result.id}\nquery: ")  # a copied report still finds its run
    cited, entries = citations(report), source_entries(report)
    assert cited and cited == set(entries), "every [n] resolves and no entry is unused"
    corpus_files = {f"<{Path(p).as_uri()}>" for p, _, _ in provider.paths.values()}  # every source a link
    assert all(any(entry.endswith(f) for f in corpus_files) for entry in entries.values())
    record = yaml.safe_load(result.run_record_path.read_text())
    assert record["id"] == result.id and record["gate_decision"] == "full_report"
    assert record["cited_count"] == len(entries)
    assert set(record["usage"]) == {"decompose", "relevance", "draft", "skeptic"}
    assert result.iterations[-1].decision == "proceed" and len(result.iterations) == 1
    assert len(provider.calls) == MODES["standard"].sub_queries
    # one file is one source, however many sub-queries found it; all scored in one batched call
    (relevance,) = scripted_model.calls("relevance")
    assert all(title in relevance.user for title, _ in DOCS.values())


async def test_quick_mode_skips_the_skeptic(tmp_path, scripted_model):
    script(scripted_model, ResearchResponder(), skeptics=0)
    result = await research(
        QUERY, settings=settings_for(tmp_path, "quick"), model=scripted_model, providers=[DocsProvider(tmp_path)],
        lessons=lambda domain: LessonSelection.none(domain),
    )
    assert "skipped in quick mode" in result.report_markdown
    assert not scripted_model.calls("skeptic")


async def test_nothing_found_gives_an_honest_short_report_after_three_plans(tmp_path, scripted_model):
    script(scripted_model, ResearchResponder(), plans=3, sources=0, drafts=0, skeptics=0)
    result = await research(
        QUERY, settings=settings_for(tmp_path), model=scripted_model, providers=[EmptyProvider()],
        lessons=lambda domain: LessonSelection.none(domain),
    )
    assert result.gate_decision == "insufficient_data"
    assert "# Not enough data" in result.report_markdown
    assert [i.decision for i in result.iterations] == ["replan", "replan", "give_up"]
    assert "does not offer one" in result.report_markdown
    assert "## Sources\n" not in result.report_markdown


async def test_empty_and_oversized_queries_are_refused(tmp_path):
    for bad in ("", "   \n", "x" * 2001):
        with pytest.raises(InputError):
            await research(bad, settings=settings_for(tmp_path), model=object(), providers=[])
    assert not (tmp_path / "reports").exists()


async def test_the_review_approves_a_report_the_pipeline_produced(tmp_path, scripted_model):
    from research_agent.review.review import review_draft

    script(scripted_model, ResearchResponder())
    result = await research(
        QUERY, settings=settings_for(tmp_path), model=scripted_model, providers=[DocsProvider(tmp_path)],
        lessons=lambda domain: LessonSelection.none(domain),
    )
    review = review_draft(result.report_markdown, target_words=MODES["standard"].target_words)
    assert review.approved, [i.as_dict() for i in review.issues]
    assert review.critical_count == 0
