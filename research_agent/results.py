"""What a finished run returns: frozen results, and how its sources are summarised."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .llm import Usage
from .sanitize import sanitize
from .sources import ScoredSource, Source

__all__ = ["SourceSummary", "Iteration", "ResearchResult", "summarize_sources"]


@dataclass(frozen=True)
class SourceSummary:
    """One source as the result and the run record describe it."""

    n: int | None  # its number in the report's Sources list; None when not cited
    title: str
    location: str
    site: str
    provider: str
    score: int | None
    reason: str
    status: str  # kept | dropped | unscored
    snippet_only: bool

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class Iteration:
    """One pass through plan -> sources -> draft -> review, and what was decided."""

    plan: int
    revision: int
    sub_queries: tuple[str, ...]
    gate: str
    sources_scored: int
    sources_kept: int
    viability: int | None
    critical: int
    warnings: int
    decision: str  # replan | revise | proceed | give_up
    reason: str
    tokens: int

    def as_dict(self) -> dict[str, Any]:
        data = dict(self.__dict__)
        data["sub_queries"] = list(self.sub_queries)
        return data


@dataclass(frozen=True)
class ResearchResult:
    """Everything a finished run produced. Written to disk before it is returned."""

    id: str
    query: str
    mode: str
    domain: str
    gate_decision: str
    report_markdown: str
    report_path: Path
    run_record_path: Path
    sources: tuple[SourceSummary, ...]
    usage: Mapping[str, Usage]
    cost_usd: float | None  # None: the price of a model used is unknown (never reported as $0)
    timings: Mapping[str, float]
    iterations: tuple[Iteration, ...]
    final_decision: str
    stop_reason: str
    adaptive: bool
    lessons_applied: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    record: Mapping[str, Any] = field(default_factory=dict, repr=False)

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
            "warnings": list(self.warnings),
        }


def summarize_sources(
    scored: Iterable[ScoredSource], kept_keys: set[str], cited: Sequence[Source]
) -> tuple[SourceSummary, ...]:
    """Every scored source, numbered as the report cites it, cited ones first."""
    number = {s.key: n for n, s in enumerate(cited, start=1)}
    items = []
    for item in scored:
        src = item.source
        status = "unscored" if item.score is None else ("kept" if src.key in kept_keys else "dropped")
        items.append(
            SourceSummary(
                n=number.get(src.key),
                title=sanitize(src.title, max_chars=200, single_line=True),
                location=src.location,
                site=src.site,
                provider=src.provider,
                score=item.score,
                reason=sanitize(item.reason, max_chars=300, single_line=True),
                status=status,
                snippet_only=src.snippet_only,
            )
        )
    items.sort(key=lambda s: (s.n is None, s.n or 0, -(s.score or 0)))
    return tuple(items)
