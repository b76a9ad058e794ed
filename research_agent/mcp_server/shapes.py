"""What the tools return: one TypedDict per tool (its MCP output schema), and the converters.

Each converter reads the same objects the CLI prints from (``ResearchResult``, ``Review``,
``LessonSelection``, ``Critique``), so a tool's answer and the CLI's ``--json`` agree. An
unknown price is ``cost_usd: null``, never 0.
"""

from __future__ import annotations

from typing import Any, Literal

from typing_extensions import TypedDict  # pydantic reads nested TypedDicts from here below Python 3.12

from ..memory.critique.schedule import Scheduled
from ..memory.effects.lesson_effects import LessonStatus
from ..memory.effects.stats import not_collapse
from ..memory.lessons.select import LessonSelection
from ..memory.store.critique_types import Critique
from ..results import ResearchResult
from ..review.review import Review

__all__ = [
    "ResearchOutput",
    "ReviewOutput",
    "LessonsOutput",
    "MemoryListOutput",
    "MemoryShowOutput",
    "EffectsOutput",
    "research_output",
    "review_output",
    "lessons_output",
    "critique_summary",
]


class SourceOut(TypedDict):
    """A source the report cites, by its number in the report."""

    n: int
    title: str
    location: str


class UsageOut(TypedDict):
    """Tokens and calls of one stage; cost_usd null when a price is unknown."""

    prompt_tokens: int
    completion_tokens: int
    calls: int
    retries: int
    cost_usd: float | None


class CritiqueState(TypedDict):
    """What became of the run's critique: skipped, started (pid), not_started, done (path) or failed."""

    state: str
    pid: int | None
    path: str | None
    error: str


class ResearchOutput(TypedDict):
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
    sources: list[SourceOut]
    lessons_applied: list[str]
    adaptive: bool
    usage: dict[str, UsageOut]
    total_tokens: int
    cost_usd: float | None
    warnings: list[str]
    critique: CritiqueState


class ReviewOutput(TypedDict):
    """The lint review of a report: approved or rejected, and every issue found."""

    verdict: str
    approved: bool
    critical: int
    warnings: int
    issues: list[dict[str, Any]]


class LessonOut(TypedDict):
    key: str
    stage: str
    target: str
    text: str
    critique_ids: list[str]


class ExcludedOut(TypedDict):
    file: str
    reason: str


class LessonsOutput(TypedDict):
    """The lessons a run of the question would get now, and why; every file left out and why."""

    domain: str
    adaptive: bool
    reason: str
    applied: list[LessonOut]
    excluded: list[ExcludedOut]
    warnings: list[str]
    note: str


class CritiqueSummary(TypedDict):
    id: str
    short_id: str
    timestamp: str
    query: str
    domain: str
    mode: str
    mean_score: float
    overall_pass: bool
    adaptive: bool


class FailedOut(TypedDict):
    """A run whose critique failed: why and when (``memory retry`` completes it)."""

    id: str
    short_id: str
    reason: str
    failed_at: str


class MemoryListOutput(TypedDict):
    """Stored critiques, newest first; runs whose critique failed; files that failed validation."""

    critiques: list[CritiqueSummary]
    failed: list[FailedOut]
    invalid: list[ExcludedOut]


class MemoryShowOutput(TypedDict):
    """One stored critique, as its file holds it, and its run's short id."""

    critique: dict[str, Any]
    short_id: str


class ScoreCheckOut(TypedDict):
    """A lesson measured on another target than its own (the mean score)."""

    target: str
    mean_with: float | None
    mean_without: float | None
    delta: float | None
    interval: list[float] | None


class EffectOut(TypedDict):
    """One lesson key's measured effect (what ``memory effects --json`` prints for it)."""

    key: str
    stage: str
    target: str
    text: str
    domain: str
    applied_runs: int
    baseline_runs: int
    mean_with: float | None
    mean_without: float | None
    delta: float | None
    interval: list[float] | None
    method: Literal["paired", "unpaired"]
    paired_questions: int
    confounded_with: list[str]
    status: LessonStatus
    score: ScoreCheckOut | None  # its mean-score check (None when its target is the mean score)
    decided_on: str | None  # the target whose interval decided it (helpful, retired)
    decided_after: int | None  # the run of its domain ("run N") at which the evidence first reached the decision
    decided_at: str | None  # when the decision was recorded in the trial ledger (UTC)
    trial_runs: int  # runs of its domain since its trial began
    more_runs: int | None  # about how many more runs of the domain a decision needs at the current spread
    reinstated: str | None  # when a person reinstated it, starting its current trial


class ProposalOut(TypedDict):
    """One lesson a critic proposed, quarantined: it reaches no prompt unless a person approves it."""

    key: str
    stage: str
    text: str
    critique_ids: list[str]
    domains: list[str]


class ProposalsOutput(TypedDict):
    """The undecided proposals, and how a person decides them (never through a tool)."""

    proposals: list[ProposalOut]
    note: str


class EffectsOutput(TypedDict):
    """Every lesson key's effect: with and without it, the difference (positive is better)."""

    effects: list[EffectOut]


def _scheduled(scheduled: Scheduled) -> CritiqueState:
    return {
        "state": scheduled.state,
        "pid": scheduled.pid,
        "path": None if scheduled.path is None else str(scheduled.path),
        "error": scheduled.error,
    }


def research_output(result: ResearchResult, scheduled: Scheduled, short_id: str) -> ResearchOutput:
    """The research tool's answer (the CLI's ``--json`` summary, plus the report itself)."""
    summary = result.summary()
    total = result.total_usage
    return {
        "id": result.id,
        "short_id": short_id,
        "report_markdown": result.report_markdown,
        "report_path": summary["report_path"],
        "run_record_path": summary["run_record_path"],
        "query": result.query,
        "mode": result.mode,
        "domain": result.domain,
        "gate_decision": result.gate_decision,
        "final_decision": result.final_decision,
        "stop_reason": result.stop_reason,
        "sources": [{"n": s["id"], "title": s["title"], "location": s["location"]} for s in summary["sources"]],
        "lessons_applied": list(result.lessons_applied),
        "adaptive": result.adaptive,
        "usage": summary["usage"],
        "total_tokens": total.prompt_tokens + total.completion_tokens,
        "cost_usd": summary["cost_usd"],
        "warnings": list(result.warnings),
        "critique": _scheduled(scheduled),
    }


def review_output(review: Review) -> ReviewOutput:
    """The review_report tool's answer: the verdict, the counts and the issues."""
    return {
        "verdict": "approved" if review.approved else "rejected",
        "approved": review.approved,
        "critical": review.critical_count,
        "warnings": review.warning_count,
        "issues": [issue.as_dict() for issue in review.issues],
    }


def lessons_output(selection: LessonSelection, note: str) -> LessonsOutput:
    """The memory_lessons tool's answer (what ``memory lessons --json`` prints)."""
    record = selection.as_record()
    return {
        "domain": selection.domain,
        "adaptive": selection.adaptive,
        "reason": selection.reason,
        "applied": record["applied"],
        "excluded": record["excluded"],
        "warnings": list(not_collapse(selection.warnings)),
        "note": note,
    }


def critique_summary(critique: Critique, short_id: str) -> CritiqueSummary:
    """One line of ``memory list``."""
    return {
        "id": critique.id,
        "short_id": short_id,
        "timestamp": critique.timestamp,
        "query": critique.query,
        "domain": critique.query_domain,
        "mode": critique.mode,
        "mean_score": critique.mean_score,
        "overall_pass": critique.overall_pass,
        "adaptive": critique.adaptive,
    }
