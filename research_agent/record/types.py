"""The run record's types: frozen, built once per run, the same when read back.

Every count has one meaning, and is derived from ``sources`` (one source is one URL or
one file, however many entries name it):

* ``kept_count``: sources that passed the relevance gate;
* ``dropped_count``: sources scored below the gate's bar;
* ``unscored_count``: sources whose score could not be read;
* ``cited_count``: sources listed in the report's Sources section;
* ``cited_site_count``: distinct sites among the cited sources.

The counts are written into the file for its readers, and recomputed on reading. What
cannot be recomputed is recorded as the run saw it: ``found_count`` (distinct sources the
searches found), ``capped_by_user`` (the user's own source limit cut that list),
``sub_query_counts`` (per sub-query: sources found and read), each source's sub-queries
and date, ``citation_support`` (measured against the text the writer received), the sub-queries
dropped as no search queries, the tool's own ``review`` verdict, the writer's answers cut short,
and each checked claim's verdict (``claim_check``); older records read them as None, False, 0 or empty.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..claims import ClaimCheck
from ..llm import Usage
from ..measures import CitationFacts
from ..shapes import Plain, plain, shape
from ..stages.gate import GATE_DECISIONS, GateDecision
from ..stages.skeptic import SkepticReport
from .lessons import AppliedLesson, LessonsRecord, WithheldLesson
from .parts import (
    RUN_RECORD_VERSION,
    CorpusRecord,
    DroppedSubQuery,
    FetchFailure,
    Iteration,
    IterationDecision,
    SourceStatus,
    SourceSummary,
    SubQueryCount,
)

__all__ = [
    "GATE_DECISIONS", "RUN_RECORD_VERSION", "SourceStatus", "IterationDecision", "SourceSummary", "SubQueryCount",
    "Iteration", "AppliedLesson", "LessonsRecord", "WithheldLesson", "CorpusRecord", "FetchFailure", "DroppedSubQuery",
    "ReviewOutcome", "RunRecord",
]  # fmt: skip


@dataclass(frozen=True)
class ReviewOutcome(Plain):
    """How the published report stands with the tool's own review: ``approved`` or
    ``rejected`` (critical issues still open after the last revision, ``open_critical``
    of them, claims marked [Disputed] not counted), and the first of their reasons. ``words``:
    its words of prose as the lint counts them (None: not recorded)."""

    status: Literal["approved", "rejected"]
    open_critical: int = 0
    reasons: tuple[str, ...] = ()
    words: int | None = field(default=None, metadata=shape(optional=True))

    @property
    def rejected(self) -> bool:
        return self.status == "rejected"


@dataclass(frozen=True)
class RunRecord:
    """Everything one run did, as stored in its run record (see the module docstring)."""

    id: str
    query: str
    mode: str
    model: str
    report_path: str
    gate_decision: GateDecision
    domain: str = ""
    started: str = ""  # UTC, ISO 8601 with microseconds
    finished: str = ""
    fast_model: str = ""
    gate_reason: str = ""
    sub_queries: tuple[str, ...] = ()
    dropped_sub_queries: tuple[DroppedSubQuery, ...] = ()
    sub_query_counts: tuple[SubQueryCount, ...] | None = None  # None: not recorded (an older record)
    sources: tuple[SourceSummary, ...] = ()
    found_count: int | None = None  # None: not recorded (an older record)
    capped_by_user: bool = False
    citations_removed: int = 0  # citations to no source, taken out of the final report
    citation_support: CitationFacts | None = None  # None: not measured (an older record)
    skeptic: SkepticReport = SkepticReport((), None)
    claim_check: ClaimCheck | None = None  # None: the run reached no draft, or an older record
    iterations: tuple[Iteration, ...] = ()
    final_decision: str = ""
    stop_reason: str = ""  # why the loop stopped; "deadline": the best draft was published at --timeout
    draft_cut: str = ""  # why the published draft was cut short: a key of stages.writing.draft_text.CUT_NOTES
    cut_answers: int = 0  # writer answers (drafts and revisions) cut short in the run
    controls_dropped: int = 0  # control characters, escape sequences, bidi marks taken out of model answers
    review: ReviewOutcome | None = None  # None: no draft was reviewed (the run gave up), or an older record
    lessons: LessonsRecord = LessonsRecord()
    plan_by_person: bool = False  # a person gave or edited the plan: it counts for judging lessons only
    provider_failures: tuple[str, ...] = ()
    fetch_failures: tuple[FetchFailure, ...] = ()
    corpus: tuple[CorpusRecord, ...] = ()
    fetch_stats: Mapping[str, Any] = field(default_factory=dict)
    usage: Mapping[str, Usage] = field(default_factory=dict)
    cost_usd: float | None = None  # None: the price of a model used is unknown (never $0)
    timings: Mapping[str, float] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    @property
    def kept_sources(self) -> tuple[SourceSummary, ...]:
        """The kept sources, one entry per source (the first that names it)."""
        return tuple(_by_status(self.sources)[0].values())

    @property
    def kept_count(self) -> int:
        return len(_by_status(self.sources)[0])

    @property
    def dropped_count(self) -> int:
        return len(_by_status(self.sources)[1])

    @property
    def unscored_count(self) -> int:
        return len(_by_status(self.sources)[2])

    @property
    def considered_count(self) -> int:
        """Distinct sources examined, whatever their verdict."""
        return len({s.key for s in self.sources})

    @property
    def cited_count(self) -> int:
        return len({s.n for s in self.sources if s.n is not None})

    @property
    def cited_site_count(self) -> int:
        return len({s.site for s in self.sources if s.n is not None})

    def as_dict(self) -> dict[str, Any]:
        """The record as plain data, in the file's field order."""
        return {
            "schema_version": RUN_RECORD_VERSION,
            **{k: getattr(self, k) for k in _HEAD},
            "sub_queries": list(self.sub_queries),
            "dropped_sub_queries": [d.as_dict() for d in self.dropped_sub_queries],
            "sub_query_counts": None if self.sub_query_counts is None else [c.as_dict() for c in self.sub_query_counts],
            "sources": [s.as_dict() for s in self.sources],
            **{k: getattr(self, k) for k in _COUNTS},
            "found_count": self.found_count,
            "capped_by_user": self.capped_by_user,
            "citations_removed": self.citations_removed,
            "citation_support": plain(self.citation_support),
            "skeptic": _skeptic_dict(self.skeptic),
            "claim_check": None if self.claim_check is None else self.claim_check.as_dict(),
            "iterations": [i.as_dict() for i in self.iterations],
            **{k: getattr(self, k) for k in _ENDING},
            "review": None if self.review is None else self.review.as_dict(),
            "lessons": self.lessons.as_dict(),
            **({"plan_by_person": True} if self.plan_by_person else {}),
            "provider_failures": list(self.provider_failures),
            "fetch_failures": plain(self.fetch_failures),
            "corpus": [c.as_dict() for c in self.corpus],
            "fetch_stats": dict(self.fetch_stats),
            "usage": {stage: u.as_dict() for stage, u in self.usage.items()},
            "cost_usd": None if self.cost_usd is None else round(self.cost_usd, 6),
            "timings": {k: round(v, 3) for k, v in self.timings.items()},
            "warnings": list(self.warnings),
        }


_HEAD = ("id", "query", "mode", "domain", "started", "finished", "model", "fast_model", "report_path",
         "gate_decision", "gate_reason")  # fmt: skip
_COUNTS = ("kept_count", "dropped_count", "unscored_count", "cited_count", "cited_site_count")
_ENDING = ("final_decision", "stop_reason", "draft_cut", "cut_answers", "controls_dropped")


def _by_status(sources: Iterable[SourceSummary]) -> tuple[dict[str, SourceSummary], set[str], set[str]]:
    """(kept: key -> first entry, dropped keys, unscored keys); a kept source is only kept."""
    kept: dict[str, SourceSummary] = {}
    dropped: set[str] = set()
    unscored: set[str] = set()
    for source in sources:
        if source.status == "kept":
            kept.setdefault(source.key, source)
        elif source.status == "unscored":
            unscored.add(source.key)
        else:
            dropped.add(source.key)
    return kept, dropped - set(kept), unscored - set(kept)


def _skeptic_dict(skeptic: SkepticReport) -> dict[str, Any]:
    return {"viability": skeptic.viability, "viability_note": skeptic.viability_note,
            "unavailable": skeptic.unavailable, "findings": [f.as_dict() for f in skeptic.findings]}  # fmt: skip
