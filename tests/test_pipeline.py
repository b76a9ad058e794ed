"""The whole pipeline with a scripted model and an in-memory search provider."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from research_agent.config import MODES, Settings
from research_agent.errors import InputError
from research_agent.memory.lessons import LessonSelection
from research_agent.pipeline import research
from research_agent.sources import SearchHit
from tests.support.research_responder import ResearchResponder

DOCS = {
    "vacuum.md": (
        "VACUUM in PostgreSQL",
        "PostgreSQL VACUUM reclaims storage occupied by dead tuples left behind by updates and deletes. "
        "Plain VACUUM marks the space as reusable within the table file without returning it to the operating system. "
        "VACUUM FULL rewrites the whole table into a new file and returns the freed space to the operating system.",
    ),
    "autovacuum.md": (
        "The autovacuum daemon",
        "The autovacuum daemon runs VACUUM automatically when enough dead tuples accumulate in a table. "
        "Autovacuum thresholds are set per table and control how quickly PostgreSQL reclaims space from dead rows. "
        "Tuning autovacuum keeps table bloat low on busy PostgreSQL servers with frequent updates.",
    ),
    "mvcc.md": (
        "MVCC and dead tuples",
        "PostgreSQL uses multiversion concurrency control, so an update writes a new row version and leaves a dead tuple. "
        "Dead tuples are invisible to new transactions but still occupy space until VACUUM reclaims them. "
        "Long running transactions can prevent VACUUM from reclaiming space because old row versions stay visible.",
    ),
    "bloat.md": (
        "Table bloat",
        "Table bloat is space in PostgreSQL tables taken by dead tuples that VACUUM has not yet reclaimed. "
        "Monitoring bloat helps decide when VACUUM FULL or pg_repack is needed to reclaim space for the operating system. "
        "Regular VACUUM prevents bloat from growing on tables with steady update traffic.",
    ),
}
QUERY = "How does PostgreSQL VACUUM reclaim space from dead tuples?"


class DocsProvider:
    """A search provider over DOCS written to ``folder``; every query finds every doc."""

    name = "local"

    def __init__(self, folder: Path, docs: dict[str, tuple[str, str]] = DOCS) -> None:
        self.paths = {}
        self.calls: list[str] = []
        for name, (title, text) in docs.items():
            path = folder / name
            path.write_text(f"# {title}\n\n{text}\n", encoding="utf-8")
            self.paths[name] = (path, title, text)

    async def search(self, query: str, *, max_results: int) -> list[SearchHit]:
        self.calls.append(query)
        return [
            SearchHit(title=title, location=str(path), snippet=text[:100], provider="local", text=text)
            for path, title, text in list(self.paths.values())[:max_results]
        ]


class EmptyProvider:
    name = "local"

    async def search(self, query: str, *, max_results: int) -> list[SearchHit]:
        return []


def settings_for(tmp_path: Path, mode: str = "standard", **changes) -> Settings:
    return Settings(
        mode=MODES[mode],
        reports_dir=tmp_path / "reports",
        cache_dir=tmp_path / "cache",
        context_path=None,
        corpus_dirs=(tmp_path,),
        **changes,
    )


def script(model, responder: ResearchResponder, *, plans: int = 1, sources: int = len(DOCS), drafts: int = 1,
           skeptics: int = 1, revisions: int = 0, relevance_per_plan: list[int] | None = None) -> None:
    """Queue the calls a run should make, each answered by ``responder``."""

    def use(request):
        return responder.answer(request.stage, request.system, request.user)

    model.enqueue("classify", use)
    model.enqueue("decompose", use, times=plans)
    total_relevance = sum(relevance_per_plan) if relevance_per_plan is not None else sources
    model.enqueue("relevance", use, times=total_relevance)
    model.enqueue("draft", use, times=drafts)
    model.enqueue("skeptic", use, times=skeptics)
    model.enqueue("revise", use, times=revisions)


def citations(markdown: str) -> set[int]:
    body = markdown.split("## Sources", 1)[0]
    found = set()
    for match in re.finditer(r"\[(\d+(?:\s*,\s*\d+)*)\](?!\()", body):
        found.update(int(n) for n in match.group(1).split(","))
    return found


def source_entries(markdown: str) -> dict[int, str]:
    section = markdown.split("## Sources", 1)[1].split("\n## ", 1)[0]
    return {int(m.group(1)): m.group(2) for m in re.finditer(r"^(\d+)\. (.*)$", section, re.M)}


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
    assert report.startswith("---\nquery: ")
    cited, entries = citations(report), source_entries(report)
    assert cited and cited == set(entries), "every [n] resolves and no entry is unused"
    corpus_files = {str(p) for p, _, _ in provider.paths.values()}
    assert all(any(entry.endswith(f) for f in corpus_files) for entry in entries.values())
    record = yaml.safe_load(result.run_record_path.read_text())
    assert record["id"] == result.id and record["gate_decision"] == "full_report"
    assert record["cited_count"] == len(entries)
    assert set(record["usage"]) >= {"classify", "decompose", "relevance", "draft", "skeptic"}
    assert result.iterations[-1].decision == "proceed" and len(result.iterations) == 1
    assert len(provider.calls) == MODES["standard"].sub_queries
    # one file is one source, however many sub-queries found it
    assert len(scripted_model.calls("relevance")) == len(DOCS)


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
