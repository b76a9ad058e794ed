"""What a learning A/B holds: each question's pair of runs, and the paired differences.

Frozen and plain, so that the CLI, the ``ab-<stamp>.yaml`` file and (later) the MCP
server show the same thing. ``as_dict`` gives the file's and ``--json``'s shape: every
measure carries ``baseline``, ``adaptive`` (the arms' means), ``delta`` (signed so that
positive means better: adaptive minus baseline, negated for lower-is-better measures),
``interval`` (the 90% paired interval of ``delta``, null with fewer than 2 pairs) and
``n`` (the pairs that measure counts).

A pair is *incomplete* when one of its arms has no critique (it failed or ran out of time)
or ran without being able to read its memory (``lessons: unavailable``): it is kept, with
the reason, and left out of every measure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ...measures import CritiqueFacts
from ...shapes import Plain
from ..store.critique_types import Scores
from .intervals import Difference

__all__ = [
    "ARMS",
    "FACT_MEASURES",
    "ArmUsage",
    "ArmResult",
    "AbPair",
    "AbFailure",
    "Measure",
    "AbResult",
    "fact_value",
]

ARMS = ("baseline", "adaptive")

# (path in the critique's facts block, which way is better)
FACT_MEASURES: tuple[tuple[str, Literal["higher", "lower"]], ...] = (
    ("citations.weakly_supported_share", "lower"),
    ("unanswered", "lower"),
    ("sites.distinct", "higher"),
)


def fact_value(facts: CritiqueFacts, path: str) -> float:
    """The number at ``path`` (e.g. ``sites.distinct``) in a facts block."""
    value: Any = facts
    for part in path.split("."):
        value = getattr(value, part)
    return float(value)


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


@dataclass(frozen=True)
class ArmUsage:
    """What one arm spent: the run's tokens, its critique's, the calls, and the cost
    (None when a price was unknown: never shown as $0)."""

    run_tokens: int = 0
    critique_tokens: int = 0
    calls: int = 0
    cost_usd: float | None = 0.0

    @property
    def tokens(self) -> int:
        return self.run_tokens + self.critique_tokens

    def __add__(self, other: ArmUsage) -> ArmUsage:
        cost = None if self.cost_usd is None or other.cost_usd is None else self.cost_usd + other.cost_usd
        return ArmUsage(
            self.run_tokens + other.run_tokens,
            self.critique_tokens + other.critique_tokens,
            self.calls + other.calls,
            cost,
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "tokens": self.tokens,
            "run_tokens": self.run_tokens,
            "critique_tokens": self.critique_tokens,
            "calls": self.calls,
            "cost_usd": None if self.cost_usd is None else round(self.cost_usd, 6),
        }


@dataclass(frozen=True)
class ArmResult:
    """One arm's run of one question and its critique. ``lessons``: the keys of the lessons
    the run was given (empty: it ran as a baseline), ``lessons_reason``: why. Without a
    critique (``critique_error`` says why) ``scores`` and ``mean_score`` are None.
    ``lessons_available``: False when the run could not read its memory."""

    run_id: str  # the critique is critique-<run_id>.yaml
    lessons: tuple[str, ...]
    lessons_reason: str
    scores: Scores | None
    mean_score: float | None
    facts: CritiqueFacts | None
    usage: ArmUsage
    suspect: str | None = None  # why its critique looks degenerate: the pair is left out of the measures
    critique_error: str = ""
    lessons_available: bool = True

    @property
    def critiqued(self) -> bool:
        return self.scores is not None and self.mean_score is not None

    def as_dict(self) -> dict[str, Any]:
        facts = (
            None if self.facts is None else {p: _round(fact_value(self.facts, p)) for p, _ in FACT_MEASURES}
        )
        data = {
            "run_id": self.run_id,
            "lessons": list(self.lessons),
            "lessons_reason": self.lessons_reason,
            **({} if self.lessons_available else {"lessons_available": False}),
            "scores": None if self.scores is None else self.scores.as_dict(),
            "mean_score": _round(self.mean_score),
            "facts": facts,
            **({"critique_error": self.critique_error} if self.critique_error else {}),
            "usage": self.usage.as_dict(),
        }
        if self.suspect:
            data["suspect"] = self.suspect
        return data


@dataclass(frozen=True)
class AbPair:
    """Question number ``index`` (1-based, in the file's order), run by both arms; ``first``
    names the arm that ran first (they alternate from question to question)."""

    index: int
    question: str
    first: str
    baseline: ArmResult
    adaptive: ArmResult

    @property
    def incomplete(self) -> str:
        """Why the pair cannot be measured ("" when it can): an arm without a critique, or
        an arm that could not read its memory (it was not randomly without lessons)."""
        reasons = []
        for arm in ARMS:
            result: ArmResult = getattr(self, arm)
            if not result.critiqued:
                reasons.append(f"the {arm} critique failed: {result.critique_error or 'no critique'}")
            if not result.lessons_available:
                reasons.append(f"the {arm} run could not read its memory ({result.lessons_reason})")
        return "; ".join(reasons)

    @property
    def complete(self) -> bool:
        return not self.incomplete

    @property
    def measurable(self) -> bool:
        """Complete, and neither arm's critique is suspect: only such pairs enter the measures."""
        return self.complete and not (self.baseline.suspect or self.adaptive.suspect)

    def as_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "question": self.question,
            "first": self.first,
            "complete": self.complete,
            **({"incomplete": self.incomplete} if self.incomplete else {}),
            "baseline": self.baseline.as_dict(),
            "adaptive": self.adaptive.as_dict(),
        }


@dataclass(frozen=True)
class AbFailure(Plain):
    """A question whose pair could not be finished, and why (the A/B went on without it)."""

    index: int
    question: str
    error: str


@dataclass(frozen=True)
class Measure:
    """One measure over the pairs: ``difference`` is already signed so that positive is better."""

    name: str
    better: Literal["higher", "lower"]
    difference: Difference

    @property
    def n(self) -> int:
        return self.difference.n_with

    def as_dict(self) -> dict[str, Any]:
        d = self.difference
        return {
            "baseline": _round(d.mean_without),
            "adaptive": _round(d.mean_with),
            "delta": _round(d.delta),
            "interval": None if d.interval is None else [_round(v) for v in d.interval],
            "n": self.n,
            "better": self.better,
        }


@dataclass(frozen=True)
class AbResult:
    """A whole A/B: its pairs, the questions that failed, and the measures over the pairs.

    ``complete`` is False when the A/B stopped early (Ctrl-C, SIGTERM or an error): ``pairs``
    then holds the pairs finished before it stopped, out of ``questions`` asked. Pairs that
    finished without being measurable (:attr:`AbPair.incomplete`) and questions that failed
    are what :attr:`failed_count` counts; the measures are over the complete pairs only.
    """

    id: str
    started: str
    questions_file: str
    mode: str
    model: str
    questions: int
    complete: bool
    pairs: tuple[AbPair, ...]
    failed: tuple[AbFailure, ...]
    overall: Measure
    dimensions: tuple[Measure, ...]
    facts: tuple[Measure, ...]
    baseline_usage: ArmUsage
    adaptive_usage: ArmUsage

    @property
    def adaptive_pairs(self) -> int:
        """Complete pairs whose adaptive arm was actually given lessons."""
        return sum(1 for pair in self.pairs if pair.complete and pair.adaptive.lessons)

    @property
    def complete_pairs(self) -> int:
        """Pairs with both arms run and critiqued: the pairs the measures count."""
        return sum(1 for pair in self.pairs if pair.complete)

    @property
    def failed_count(self) -> int:
        """Questions without a complete pair: pairs kept as incomplete, and questions that failed."""
        return len(self.pairs) - self.complete_pairs + len(self.failed)

    def summary(self) -> str:
        """One line: e.g. "9 of 10 pairs complete; 1 failed"."""
        line = f"{self.complete_pairs} of {self.questions} pairs complete"
        if self.failed_count:
            line += f"; {self.failed_count} failed"
        if not self.complete:
            line += f"; stopped early after {len(self.pairs) + len(self.failed)} question(s)"
        return line

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "started": self.started,
            "questions_file": self.questions_file,
            "mode": self.mode,
            "model": self.model,
            "questions": self.questions,
            "complete": self.complete,
            "complete_pairs": self.complete_pairs,
            "failed_count": self.failed_count,
            "overall": {self.overall.name: self.overall.as_dict()},
            "dimensions": {m.name: m.as_dict() for m in self.dimensions},
            "facts": {m.name: m.as_dict() for m in self.facts},
            "usage": {"baseline": self.baseline_usage.as_dict(), "adaptive": self.adaptive_usage.as_dict()},
            "pairs": [pair.as_dict() for pair in self.pairs],
            "failed": [failure.as_dict() for failure in self.failed],
        }
