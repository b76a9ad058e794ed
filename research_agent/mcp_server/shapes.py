"""What the tools return: one frozen dataclass per tool's answer, and the converters that fill them.

A tool's structured content is :func:`~research_agent.shapes.plain` of its answer, and its
output schema is derived from the same dataclass (:mod:`.payloads`). The parts of an answer
that the core already holds are the core's own dataclasses (a stage's ``Usage``, the critique's
``Scheduled``, a ``Lesson``, an ``Issue``, a ``LessonEffect``, a ``Proposal``, a ``FailedCritique``),
so each shape is declared once. Each converter reads the same objects the CLI prints from
(``ResearchResult``, ``Review``, ``LessonSelection``, ``Critique``), so a tool's answer and the
CLI's ``--json`` agree. An unknown price is ``cost_usd: null``, never 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..llm import Usage
from ..memory.critique.schedule import Scheduled
from ..memory.effects.lesson_effects import LessonEffect
from ..memory.effects.stats import not_collapse
from ..memory.lessons.select import LessonSelection
from ..memory.lessons.types import Lesson
from ..memory.store.critique_types import Critique
from ..memory.store.failures import FailedCritique
from ..memory.store.person.proposals import Proposal
from ..record.lessons import LeftOut
from ..results import ResearchResult
from ..review.issues import Issue
from ..review.review import Review
from ..shapes import plain, shape

__all__ = [
    "ResearchOutput",
    "ReviewOutput",
    "LessonsOutput",
    "MemoryListOutput",
    "MemoryShowOutput",
    "EffectsOutput",
    "ProposalsOutput",
    "CritiqueSummary",
    "FailedOut",
    "research_output",
    "review_output",
    "lessons_output",
    "critique_summary",
]


@dataclass(frozen=True)
class CitedSource:
    """A source the report cites, by its number in the report."""

    n: int
    title: str
    location: str


@dataclass(frozen=True)
class ResearchOutput:
    """A finished research run: the report, where it was written, and what the run did."""

    id: str
    short_id: str
    report_markdown: str
    report_path: str
    run_record_path: str
    query: str
    mode: str
    domain: str
    gate_decision: str
    final_decision: str
    stop_reason: str
    sources: tuple[CitedSource, ...]
    lessons_applied: tuple[str, ...]
    adaptive: bool
    usage: Mapping[str, Usage]  # tokens and calls per stage; cost_usd null when a price is unknown
    total_tokens: int
    cost_usd: float | None = field(metadata=shape(digits=6))
    warnings: tuple[str, ...]
    critique: Scheduled  # skipped, started (pid), not_started, done (path) or failed (error)


@dataclass(frozen=True)
class ReviewOutput:
    """The lint review of a report: approved or rejected, and every issue found."""

    verdict: Literal["approved", "rejected"]
    approved: bool
    critical: int
    warnings: int
    issues: tuple[Issue, ...]


@dataclass(frozen=True)
class LessonsOutput:
    """The lessons a run of the question would get now, and why; every file left out and why."""

    domain: str
    adaptive: bool
    reason: str
    applied: tuple[Lesson, ...]
    excluded: tuple[LeftOut, ...]
    warnings: tuple[str, ...]
    note: str


@dataclass(frozen=True)
class CritiqueSummary:
    """One stored critique in a list: its run's ids, when, what, and its verdict."""

    id: str
    short_id: str
    timestamp: str
    query: str
    domain: str
    mode: str
    mean_score: float
    overall_pass: bool
    adaptive: bool


@dataclass(frozen=True)
class FailedOut:
    """A run whose critique failed: why and when (``memory retry`` completes it), and its short id."""

    failed: FailedCritique = field(metadata=shape(flatten=True))
    short_id: str


@dataclass(frozen=True)
class MemoryListOutput:
    """Stored critiques, newest first; runs whose critique failed; files that failed validation."""

    critiques: tuple[CritiqueSummary, ...]
    failed: tuple[FailedOut, ...]
    invalid: tuple[LeftOut, ...]


@dataclass(frozen=True)
class MemoryShowOutput:
    """One stored critique, as its file holds it, and its run's short id."""

    critique: Mapping[str, Any]
    short_id: str


@dataclass(frozen=True)
class EffectsOutput:
    """Every lesson key's effect: with and without it, the difference (positive is better)."""

    effects: tuple[LessonEffect, ...]


@dataclass(frozen=True)
class ProposalsOutput:
    """The undecided proposals, and how a person decides them (never through a tool)."""

    proposals: tuple[Proposal, ...]
    note: str


def research_output(result: ResearchResult, scheduled: Scheduled, short_id: str) -> dict[str, Any]:
    """The research tool's answer (the CLI's ``--json`` summary, plus the report itself)."""
    return plain(ResearchOutput(
        id=result.id, short_id=short_id, report_markdown=result.report_markdown,
        report_path=str(result.report_path), run_record_path=str(result.run_record_path), query=result.query,
        mode=result.mode, domain=result.domain, gate_decision=result.gate_decision,
        final_decision=result.final_decision, stop_reason=result.stop_reason,
        sources=tuple(CitedSource(s.n, s.title, s.location) for s in result.sources if s.n is not None),
        lessons_applied=result.lessons_applied, adaptive=result.adaptive, usage=result.usage,
        total_tokens=result.total_usage.tokens, cost_usd=result.cost_usd, warnings=result.warnings,
        critique=scheduled,
    ))  # fmt: skip


def review_output(review: Review) -> dict[str, Any]:
    """The review_report tool's answer: the verdict, the counts and the issues."""
    return plain(ReviewOutput(
        verdict="approved" if review.approved else "rejected", approved=review.approved,
        critical=review.critical_count, warnings=review.warning_count, issues=review.issues,
    ))  # fmt: skip


def lessons_output(selection: LessonSelection, note: str) -> dict[str, Any]:
    """The memory_lessons tool's answer (what ``memory lessons --json`` prints of the selection)."""
    return plain(LessonsOutput(
        domain=selection.domain, adaptive=selection.adaptive, reason=selection.reason, applied=selection.lessons,
        excluded=tuple(LeftOut(name, why) for name, why in selection.excluded),
        warnings=not_collapse(selection.warnings), note=note,
    ))  # fmt: skip


def critique_summary(critique: Critique, short_id: str) -> CritiqueSummary:
    """One line of ``memory list``."""
    return CritiqueSummary(
        id=critique.id, short_id=short_id, timestamp=critique.timestamp, query=critique.query,
        domain=critique.query_domain, mode=critique.mode, mean_score=critique.mean_score,
        overall_pass=critique.overall_pass, adaptive=critique.adaptive,
    )  # fmt: skip
