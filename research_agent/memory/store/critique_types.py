"""The critique as the program holds it: frozen dataclasses built only from validated content.

:class:`Critique` is what memory reads and writes; its file form is checked against the
shipped JSON Schema by :func:`research_agent.memory.store.schema.validate_critique` before a
Critique is built from it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ...ids import format_utc, parse_zoned_time
from ...measures import CritiqueFacts
from ...record.lessons import WithheldLesson, probability
from ...shapes import Plain, plain
from .derived import derived_values, scores_digest
from .schema import (
    DIMENSIONS,
    FIELD_ORDER,
    NOT_A_TIME,
    OPTIONAL_FIELDS,
    SCHEMA_VERSION,
    InvalidCritique,
    fail_reason,
    is_pass,
    mean_of,
    ramp_reason,
    shown_value,
    validate_critique,
)

__all__ = [
    "Scores", "CritiqueUsage", "SkepticFlag", "LessonUse", "ProposedLesson", "WithheldLesson", "Critique",
    "GEOGRAPHY_TAG", "WHOLE_RUN_REASONS", "tag_applies",
]  # fmt: skip


@dataclass(frozen=True)
class Scores(Plain):
    """The five dimension scores, integers 1-5; ``geographic_balance`` None: not applicable."""

    source_diversity: int
    claim_support: int
    coverage: int
    geographic_balance: int | None
    actionability: int

    def get(self, dimension: str) -> int | None:
        """The score of ``dimension``, or None when it does not apply to the question."""
        value = getattr(self, dimension)
        return None if value is None else int(value)

    def applies(self, dimension: str) -> bool:
        return getattr(self, dimension) is not None

    @property
    def mean(self) -> float:
        return mean_of(self.as_dict())

    @property
    def passed(self) -> bool:
        return is_pass(self.as_dict())

    @property
    def digest(self) -> str:
        """A short hash of the scores (:func:`.derived.scores_digest`): any score edit changes it."""
        return scores_digest(tuple(self.as_dict().values()))


@dataclass(frozen=True)
class CritiqueUsage(Plain):
    """What the critique itself cost: every model call it made. ``cost_usd`` None: price unknown."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    retries: int = 0
    cost_usd: float | None = None

    @classmethod
    def from_usage(cls, usage: Any) -> CritiqueUsage:
        """From an ``llm.Usage`` (a cost that is missing, negative or not finite becomes None)."""
        cost = getattr(usage, "cost_usd", None)
        if isinstance(cost, bool) or not isinstance(cost, int | float) or not 0 <= cost < math.inf:
            cost = None
        return cls(
            prompt_tokens=int(usage.prompt_tokens),
            completion_tokens=int(usage.completion_tokens),
            calls=int(usage.calls),
            retries=int(usage.retries),
            cost_usd=None if cost is None else round(float(cost), 6),
        )

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class SkepticFlag:
    """One notable skeptic finding of the run: its lens and a short sanitized detail."""

    type: str
    detail: str


@dataclass(frozen=True)
class LessonUse:
    """A lesson a run was given: its stable ``key`` and ``stage`` (None in version-1 files,
    which stored the text only), its text, and ``p``: the probability with which its trial
    draw would have withheld it (None when not recorded)."""

    text: str
    key: str | None = None
    stage: str | None = None
    p: float | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"key": self.key or "", "stage": self.stage or "", "text": self.text}
        return out if self.p is None else {**out, "p": self.p}


@dataclass(frozen=True)
class ProposedLesson(Plain):
    """A lesson the critic proposed: quarantined, it reaches no prompt unless a person approves it."""

    stage: str
    text: str


@dataclass(frozen=True)
class Critique:
    """One critique of one report; field order is the file's order."""

    id: str
    query: str
    query_domain: str
    mode: str
    timestamp: str
    model_version: str
    report_path: str
    scores: Scores
    mean_score: float
    overall_pass: bool
    weaknesses: tuple[str, ...] = ()
    suggestions: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    skeptic_flags: tuple[SkepticFlag, ...] = ()
    gate_decision: str = "full_report"
    source_count: int = 0
    dropped_count: int = 0
    adaptive: bool = False
    lessons_applied: tuple[LessonUse, ...] = ()
    lessons_withheld: tuple[WithheldLesson, ...] = ()  # eligible lessons it did not get, and why
    facts: CritiqueFacts | None = None  # None only in files written before facts existed
    usage: CritiqueUsage | None = None
    schema_version: int = field(default=SCHEMA_VERSION)
    lessons_available: bool = True  # False: the run went without lessons because its memory was unreadable
    suspect: str | None = None  # why the critic's answer looks degenerate; such a critique teaches nothing
    proposed_lessons: tuple[ProposedLesson, ...] = ()
    review: str | None = None  # "rejected": the report was published rejected; the critique then never passes
    held_out: str | None = None  # the eval (--holdout) whose measured half the run was: it builds no lesson
    run_kind: str = ""  # "ab": an arm of `memory ab`, in no lesson's arms
    plan_by_person: bool = False  # a person gave or edited the run's plan: it counts for judging lessons only
    # What loading left out of a file written by an earlier version (``memory validate`` shows it).
    load_notes: tuple[str, ...] = field(default=(), compare=False)
    # Derived values the file said otherwise and that were recomputed: a person's hand edits (:mod:`.derived`).
    edits: tuple[str, ...] = field(default=(), compare=False)

    @property
    def teaches(self) -> bool:
        """Whether the critique may make or feed a lesson and count in effects and suspension:
        not suspect (:attr:`suspect_reason`; the one condition every use of a critique as
        evidence goes through)."""
        return self.suspect_reason is None

    @property
    def measurable(self) -> bool:
        """Whether the run counts in a lesson's effect: it teaches, and its run could read its
        memory (a run whose lessons were unavailable is in neither arm of any effect)."""
        return self.teaches and self.lessons_available

    @property
    def whole_run_baseline(self) -> bool:
        """Whether the run went without lessons by a whole-run draw (a control run, or a run of a
        suspended domain): the baseline the adaptive runs are compared with."""
        return not self.adaptive and any(w.reason in WHOLE_RUN_REASONS for w in self.lessons_withheld)

    @property
    def fail_reason(self) -> str | None:
        """Why the critique does not pass, in words (None when it passes)."""
        return fail_reason(self.scores.as_dict(), self.review) if not self.overall_pass else None

    def given_keys(self) -> frozenset[str]:
        """The keys of the lessons the run was given."""
        return frozenset(lesson.key for lesson in self.lessons_applied if lesson.key)

    @property
    def suspect_reason(self) -> str | None:
        """Why this critique teaches nothing: its ``suspect`` mark, or, in a file written
        before the mark existed, scores that are a ramp (:func:`.schema.ramp_reason`)."""
        return self.suspect or ramp_reason(self.scores.as_dict())

    @property
    def created_at(self) -> datetime:
        """When the critique was made (its ``timestamp``), in UTC."""
        when = parse_zoned_time(self.timestamp)
        if when is None:
            raise InvalidCritique(f"timestamp: {shown_value(self.timestamp)} {NOT_A_TIME}")
        return when

    def as_dict(self) -> dict[str, Any]:
        """The file's content: plain types, keys in schema order."""
        values = {
            "schema_version": self.schema_version,
            "id": self.id,
            "query": self.query,
            "query_domain": self.query_domain,
            "mode": self.mode,
            "timestamp": self.timestamp,
            "model_version": self.model_version,
            "report_path": self.report_path,
            "scores": self.scores.as_dict(),
            "mean_score": self.mean_score,
            "overall_pass": self.overall_pass,
            "weaknesses": list(self.weaknesses),
            "suggestions": list(self.suggestions),
            "tags": list(self.tags),
            "skeptic_flags": plain(self.skeptic_flags),
            "gate_decision": self.gate_decision,
            "source_count": self.source_count,
            "dropped_count": self.dropped_count,
            "adaptive": self.adaptive,
            "lessons_applied": self._lessons_as_written(),
            "lessons_withheld": self._withheld_as_written(),
            "lessons": None if self.lessons_available else "unavailable",
            "suspect": self.suspect,
            "review": self.review,
            "held_out": self.held_out,
            "run_kind": self.run_kind or None,
            "plan_by_person": self.plan_by_person or None,
            "proposed_lessons": plain(self.proposed_lessons),
            "facts": plain(self.facts),
        }
        if self.usage is not None:
            values["usage"] = self.usage.as_dict()
        data = {k: values[k] for k in FIELD_ORDER}
        data.update((k, values[k]) for k in OPTIONAL_FIELDS if values.get(k))  # written only when present
        return data

    def _withheld_as_written(self) -> list[Any]:
        if self.schema_version < 3:  # version 2 held bare keys
            return [w.key for w in self.lessons_withheld]
        return [w.as_dict() for w in self.lessons_withheld]

    def _lessons_as_written(self) -> list[Any]:
        if self.schema_version == 1:
            return [lesson.text for lesson in self.lessons_applied]
        return [lesson.as_dict() for lesson in self.lessons_applied]

    @classmethod
    def from_dict(cls, data: Any) -> Critique:
        """Build from file content; raise InvalidCritique listing each problem."""
        problems = validate_critique(data)
        if problems:
            raise InvalidCritique("; ".join(problems))
        return cls._from_valid(data)

    @classmethod
    def _from_valid(cls, data: Mapping[str, Any]) -> Critique:
        """Build from content that already passed :func:`validate_critique`; what an earlier
        version wrote and this one no longer trusts is left out and noted (:func:`_settled`)."""
        facts = None if data.get("facts") is None else CritiqueFacts.from_valid(data["facts"])
        scores = Scores(**{d: _score(data["scores"][d]) for d in DIMENSIONS})  # type: ignore[arg-type]  # None only where valid
        facts, tags, notes = _settled(facts, scores, tuple(data["tags"]))
        derived = derived_values(data)
        return cls(
            id=data["id"],
            query=data["query"],
            query_domain=data["query_domain"],
            mode=data["mode"],
            timestamp=format_utc(parse_zoned_time(data["timestamp"])),  # type: ignore[arg-type]  # validated: it parses
            model_version=data["model_version"],
            report_path=data["report_path"],
            scores=scores,
            mean_score=derived.mean_score,
            overall_pass=derived.overall_pass,
            weaknesses=tuple(data["weaknesses"]),
            suggestions=tuple(data["suggestions"]),
            tags=tags,
            skeptic_flags=tuple(SkepticFlag(f["type"], f["detail"]) for f in data["skeptic_flags"]),
            gate_decision=data["gate_decision"],
            source_count=derived.source_count,
            dropped_count=derived.dropped_count,
            adaptive=bool(data["adaptive"]),
            lessons_applied=tuple(_lesson_use(item) for item in data["lessons_applied"]),
            lessons_withheld=tuple(WithheldLesson.from_item(w) for w in data.get("lessons_withheld", ())),
            facts=facts,
            usage=_usage_from(data.get("usage")),
            schema_version=int(data["schema_version"]),
            lessons_available=data.get("lessons") != "unavailable",
            suspect=data.get("suspect"),
            review=data.get("review"),
            held_out=data.get("held_out"),
            run_kind=data.get("run_kind") or "",
            plan_by_person=bool(data.get("plan_by_person", False)),
            proposed_lessons=tuple(ProposedLesson(p["stage"], p["text"]) for p in data.get("proposed_lessons", ())),
            load_notes=notes,
            edits=derived.edits,
        )


GEOGRAPHY_TAG = "geographic_bias"
WHOLE_RUN_REASONS = ("control", "suspended")  # withheld by the draw that sets a whole run apart


def tag_applies(tag: str, geography: int | None) -> bool:
    """Whether ``tag`` may stand beside a geographic balance score of ``geography``: a
    ``geographic_bias`` tag means nothing where the balance does not apply (None), and the
    score, not the tag, speaks where it is 3 or more. The critique's writer and reader both ask."""
    return tag != GEOGRAPHY_TAG or (geography is not None and geography < 3)


def _settled(
    facts: CritiqueFacts | None, scores: Scores, tags: tuple[str, ...]
) -> tuple[CritiqueFacts | None, tuple[str, ...], tuple[str, ...]]:
    """What of a valid file is kept: ``per_site`` counts that do not add up (only an earlier
    version can have written them: version 3 refuses them) are ignored, and a geography tag
    beside a geographic balance of 3 or more is dropped (the score, not the tag, says it)."""
    notes = []
    problem = facts.per_site_problem() if facts is not None else None
    if facts is not None and problem is not None:
        facts = facts.without_per_site()
        notes.append(f"facts.sites.per_site ignored: {problem}")
    geography = scores.geographic_balance
    if GEOGRAPHY_TAG in tags and geography is not None and not tag_applies(GEOGRAPHY_TAG, geography):
        tags = tuple(t for t in tags if t != GEOGRAPHY_TAG)
        notes.append(f"tag {GEOGRAPHY_TAG} dropped: geographic balance scored {geography}")
    return facts, tags, tuple(notes)


def _score(value: Any) -> int | None:
    return None if value is None else int(value)


def _lesson_use(item: Any) -> LessonUse:
    if isinstance(item, str):  # version 1
        return LessonUse(item)
    return LessonUse(item["text"], key=item["key"], stage=item["stage"], p=probability(item.get("p")))


def _usage_from(data: Mapping[str, Any] | None) -> CritiqueUsage | None:
    if data is None:
        return None
    cost = data["cost_usd"]
    return CritiqueUsage(
        prompt_tokens=int(data["prompt_tokens"]),
        completion_tokens=int(data["completion_tokens"]),
        calls=int(data["calls"]),
        retries=int(data["retries"]),
        cost_usd=None if cost is None else float(cost),
    )
