"""The mode presets: how much work one run does (``--quick``, ``--standard``, ``--deep``)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Mode", "MODES"]


@dataclass(frozen=True)
class Mode:
    """A preset for how much work one run does."""

    name: str
    sub_queries: int  # how many sub-queries decompose asks for
    results_per_query: int  # search hits asked of each provider per sub-query
    sources_scored: int  # at most this many sources are fetched and scored
    target_words: int  # report length the writer aims for
    skeptic_lenses: tuple[str, ...]  # empty: no skeptic pass
    source_tokens: int  # passage budget per source: what the writer reads of each source
    relevance_tokens: int  # passage budget per source for relevance: its best-matching passages
    cited_tokens: int  # budget for the passages the skeptic reads: those the draft cites
    keep_score: int  # relevance score a source needs to survive
    full_min_sources: int  # gate: kept sources for a full report
    full_min_sites: int  # gate: distinct sites for a full report
    short_min_sources: int  # gate: kept sources for a short report
    # cited sentences checked against their passages in the skeptic's call (research_agent.claims):
    # "all" of them, "sample" (every lexically weak one plus a seeded sample, up to Settings.claim_tokens)
    # or "none" (the lexical check only)
    claim_check: str = "sample"

    @property
    def skeptic(self) -> bool:
        return bool(self.skeptic_lenses)

    @property
    def critiqued(self) -> bool:
        """Whether a run of this mode is critiqued once its report is written: quick skips the critique."""
        return self.name != "quick"


MODES: dict[str, Mode] = {
    "quick": Mode(
        name="quick",
        sub_queries=3,
        results_per_query=4,
        sources_scored=6,
        target_words=600,
        skeptic_lenses=(),
        source_tokens=350,
        relevance_tokens=150,
        cited_tokens=1000,
        keep_score=3,
        full_min_sources=3,
        full_min_sites=2,
        short_min_sources=1,
        claim_check="none",
    ),
    "standard": Mode(
        name="standard",
        sub_queries=4,
        results_per_query=6,
        sources_scored=12,
        target_words=1200,
        skeptic_lenses=("evidence", "counterarguments", "scope"),
        source_tokens=450,
        relevance_tokens=150,
        cited_tokens=1000,
        keep_score=3,
        full_min_sources=4,
        full_min_sites=2,
        short_min_sources=2,
    ),
    "deep": Mode(
        name="deep",
        sub_queries=6,
        results_per_query=8,
        sources_scored=20,
        target_words=2500,
        skeptic_lenses=("evidence", "counterarguments", "scope", "recency", "bias"),
        source_tokens=600,
        relevance_tokens=200,
        cited_tokens=1800,
        keep_score=3,
        full_min_sources=6,
        full_min_sites=3,
        short_min_sources=3,
        claim_check="all",
    ),
}
