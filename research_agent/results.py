"""What a finished run returns: the frozen result, and how its sources are summarised."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .ids import iso_date
from .llm import Usage
from .record import Iteration, SourceSummary
from .record.parts import SourceStatus
from .sources import ScoredSource, Source
from .text.sanitize import sanitize

if TYPE_CHECKING:
    from .memory.lessons.select import LessonSelection
    from .record import RunRecord
    from .run.writing import Written
    from .stages.gate import Gate

__all__ = ["SourceSummary", "Iteration", "ResearchResult", "Briefing", "Outcome", "summarize_sources"]


@dataclass(frozen=True)
class Briefing:
    """What the run knows before it plans: the question's domain and the lessons it gets."""

    domain: str
    lessons: LessonSelection
    decompose_lessons: str = ""  # the decompose prompt's lessons block; empty when the run is not adaptive
    relevance_lessons: str = ""  # the relevance prompt's lessons block (judging lessons only)
    lessons_markdown: str = ""  # the report's Lessons Applied section
    plan_by_person: bool = False  # a person gave or edited the first plan (:mod:`research_agent.plans`)


@dataclass(frozen=True)
class Outcome:
    """Where the plan/write/review loop ended: the last gate, the last written draft
    (None when no plan found enough to write from), the plans made, and why it stopped
    (``deadline``: the run's deadline passed in ``deadline_stage`` after a draft existed)."""

    gate: Gate
    written: Written | None
    plans: int
    stop_reason: str
    deadline_stage: str = ""


@dataclass(frozen=True)
class ResearchResult:
    """Everything a finished run produced. Written to disk before it is returned.

    ``run_record`` is the typed run record; most other attributes read from it, and
    ``record`` is that record as the plain data of its file.
    """

    run_record: RunRecord
    report_markdown: str
    report_path: Path
    run_record_path: Path
    timings: Mapping[str, float]  # seconds per stage, writing the files included

    @property
    def id(self) -> str:
        return self.run_record.id

    @property
    def query(self) -> str:
        return self.run_record.query

    @property
    def mode(self) -> str:
        return self.run_record.mode

    @property
    def domain(self) -> str:
        return self.run_record.domain

    @property
    def gate_decision(self) -> str:
        return self.run_record.gate_decision

    @property
    def sources(self) -> tuple[SourceSummary, ...]:
        return self.run_record.sources

    @property
    def final_decision(self) -> str:
        return self.run_record.final_decision

    @property
    def stop_reason(self) -> str:
        return self.run_record.stop_reason

    @property
    def warnings(self) -> tuple[str, ...]:
        return self.run_record.warnings

    @property
    def usage(self) -> Mapping[str, Usage]:
        return self.run_record.usage

    @property
    def cost_usd(self) -> float | None:
        """None: the price of a model used is unknown (never reported as $0)."""
        return self.run_record.cost_usd

    @property
    def iterations(self) -> tuple[Iteration, ...]:
        return self.run_record.iterations

    @property
    def adaptive(self) -> bool:
        return self.run_record.lessons.adaptive

    @property
    def lessons_applied(self) -> tuple[str, ...]:
        return tuple(lesson.text for lesson in self.run_record.lessons.applied)

    @property
    def record(self) -> dict[str, Any]:
        """The run record as written to ``run_record_path``."""
        return self.run_record.as_dict()

    @property
    def total_usage(self) -> Usage:
        total = Usage()
        for usage in self.usage.values():
            total = total + usage
        return total

    def summary(self) -> dict[str, Any]:
        """The JSON object ``run --json`` prints."""
        return {
            "id": self.id,
            "report_path": str(self.report_path),
            "run_record_path": str(self.run_record_path),
            "query": self.query,
            "mode": self.mode,
            "domain": self.domain,
            "gate_decision": self.gate_decision,
            "sources": [
                {"id": s.n, "title": s.title, "location": s.location, "score": s.score}
                for s in self.sources
                if s.n is not None
            ],
            "usage": {stage: u.as_dict() for stage, u in self.usage.items()},
            "cost_usd": None if self.cost_usd is None else round(self.cost_usd, 6),
            "timings": {k: round(v, 3) for k, v in self.timings.items()},
            "iterations": len(self.iterations),
            "final_decision": self.final_decision,
            "stop_reason": self.stop_reason,
            "adaptive": self.adaptive,
            "plan_by_person": self.run_record.plan_by_person,
            "warnings": list(self.warnings),
        }


def summarize_sources(
    scored: Iterable[ScoredSource], kept_keys: set[str], cited: Sequence[Source], sub_queries: Sequence[str] = (),
    site_of: Callable[[Source], str] | None = None,
) -> tuple[SourceSummary, ...]:
    """Every scored source, numbered as the report cites it, cited ones first; each with the
    1-based indices (in ``sub_queries``) of the sub-queries that found it, and its date, and the
    site it counts under (``site_of``, the gate's rule; default: its own ``site``)."""
    number = {s.key: n for n, s in enumerate(cited, start=1)}
    index = {query: i for i, query in enumerate(sub_queries, start=1)}
    items = []
    for item in scored:
        src = item.source
        status: SourceStatus = "unscored" if item.score is None else ("kept" if src.key in kept_keys else "dropped")
        items.append(
            SourceSummary(
                n=number.get(src.key),
                title=sanitize(src.title, max_chars=200, single_line=True),
                location=src.location,
                site=site_of(src) if site_of is not None else src.site,
                provider=src.provider,
                score=item.score,
                reason=sanitize(item.reason, max_chars=300, single_line=True),
                status=status,
                snippet_only=src.snippet_only,
                published=iso_date(src.published),
                sub_queries=tuple(sorted({index[q] for q in src.sub_queries if q in index})),
                identifiers=tuple(src.work.identifiers.items()) if src.work is not None else (),
            )
        )
    items.sort(key=lambda s: (s.n is None, s.n or 0, -(s.score or 0)))
    return tuple(items)
