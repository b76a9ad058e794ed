"""One run's row of the trial ledger, and the decisions recorded beside the rows.

A :class:`TrialRow` is what a lesson's trial needs of one run, in a few hundred bytes: its
domain and normalized question, its *kind* (:data:`KINDS`), whether a person gave or edited
its plan, which lessons it was given or withheld (and why, at which trial probability), the
critique's scores, mean, pass and review verdict, whether the critique is suspect, the
measured facts that lessons target, the ground-truth :class:`Grade` of an eval run, a hash of its
scores, and, where its scores changed after they were first recorded, how (:class:`Edit`). It is
made from a critique (:func:`row_from_critique`) or, for a run graded but never critiqued, from
its run record (:func:`row_from_record`: lessons from the record, scores null).

A row is kept as a JSON object (:meth:`TrialRow.as_json`, :func:`row_from_json`); reading one back
checks every field, so a row that does not hold what this module writes is refused. The events
beside the rows are :mod:`.events`'.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from ....ids import is_run_id
from ....record.lessons import probability
from ....shapes import Plain
from ..critique_types import WHOLE_RUN_REASONS, Critique
from ..derived import scores_digest
from ..index.rows import question_key
from ..schema import DIMENSIONS, LESSON_KEY, WITHHELD_REASONS
from ..targets import PERSON_TARGET, TARGETS

__all__ = [
    "KINDS", "EDIT_KINDS", "Grade", "Edit", "Use", "TrialRow", "row_from_critique", "row_from_record", "row_from_json",
    "kind_of", "scores_digest", "excluded_lessons", "text_field", "number_field", "count_field", "optional_field",
]  # fmt: skip

# ordinary: any run that is none of the others; control: a whole-run draw sent it without lessons
# (a control run, or a suspended domain's); no_lessons: the person turned lessons off; ab: an arm
# of ``memory ab``.
KINDS = ("ordinary", "control", "no_lessons", "ab")
EDIT_KINDS = ("hand", "critique")  # how a run's scores came to change after they were first recorded
_FACTS = tuple(name for name in TARGETS if name.startswith("facts."))
_MAX_TEXT = 200
_WHY = 80  # an excluded lesson's reason, as kept
_MAX_EXCLUDED = 20


def text_field(value: Any, what: str, *, limit: int = _MAX_TEXT) -> str:
    if not isinstance(value, str) or len(value) > limit:
        raise ValueError(f"{what}: not a string of at most {limit} characters")
    return value


def number_field(value: Any, what: str, *, low: float = -1e7, high: float = 1e7) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{what}: not a finite number")
    if not low <= value <= high:
        raise ValueError(f"{what}: out of range")
    return float(value)


def count_field(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 1_000_000:
        raise ValueError(f"{what}: not a count")
    return int(value)


def optional_field(value: Any, read: Any, what: str) -> Any:
    return None if value is None else read(value, what)  # a field that may be null


@dataclass(frozen=True)
class Grade(Plain):
    """A run's grade against ground truth, given by an eval (``research-agent eval``): the world
    and eval it belongs to, the question, the share of the question's facts the report found (None:
    a question the pages cannot answer, which has none), the share of its citations that support what
    they are cited for (None: it cited nothing), its unsupported and stale claims, how many facts
    the question has (0: not recorded) and whether the report declined to answer."""

    world: str
    eval_id: str
    question_id: str
    fact_recall: float | None
    cited_precision: float | None
    unsupported: int
    stale: int
    checkpoints: int = 0
    declined: bool = False

    def __post_init__(self) -> None:
        for name in ("world", "eval_id", "question_id"):
            text_field(getattr(self, name), f"grade {name}")
        for name in ("fact_recall", "cited_precision"):
            optional_field(getattr(self, name), lambda v, w: number_field(v, w, low=0.0, high=1.0), f"grade {name}")
        for name in ("unsupported", "stale", "checkpoints"):
            count_field(getattr(self, name), f"grade {name}")
        if not isinstance(self.declined, bool):
            raise ValueError("grade declined: not true or false")

    @classmethod
    def from_dict(cls, data: Any) -> Grade:
        """From :meth:`as_dict`'s form (``checkpoints`` and ``declined`` may be absent: rows written
        before they were kept); ValueError for anything else."""
        fields = set(cls.__dataclass_fields__)
        if not isinstance(data, Mapping) or not fields - {"checkpoints", "declined"} <= set(data) <= fields:
            raise ValueError("grade: not a grade")
        recall, cited = data["fact_recall"], data["cited_precision"]
        return cls(
            data["world"], data["eval_id"], data["question_id"],
            None if recall is None else float(number_field(recall, "fact_recall")),
            None if cited is None else float(number_field(cited, "cited_precision")), data["unsupported"], data["stale"],
            data.get("checkpoints", 0), data.get("declined", False),
        )  # fmt: skip


@dataclass(frozen=True)
class Edit:
    """How a run's scores came to differ from those the ledger first recorded for it: ``was``, those
    first scores; ``at``: when the ledger took the change (seconds since the epoch); ``how``:
    ``hand`` (its critique file was edited: the critique's own time unchanged) or ``critique`` (a
    critique with a later time replaced it). Only the scores, and what follows from them, change
    (:mod:`.record` says why)."""

    was: tuple[int | None, ...]
    at: float
    how: str

    def as_json(self) -> dict[str, Any]:
        return {"was": list(self.was), "at": self.at, "how": self.how}


def _edit(value: Any) -> Edit | None:
    if value is None:
        return None
    if not isinstance(value, Mapping) or set(value) != {"was", "at", "how"} or value["how"] not in EDIT_KINDS:
        raise ValueError("row: bad edit")
    was = _scores(value["was"])
    if was is None:
        raise ValueError("row: bad edit")
    return Edit(was, number_field(value["at"], "edit at", low=0, high=1e11), value["how"])


@dataclass(frozen=True)
class Use:
    """A lesson ``key`` the run was given (``applied``) or eligible for and did not get
    (``withheld``, for ``reason``), and ``p``: the probability its trial draw withheld it with."""

    key: str
    arm: str
    reason: str = ""
    p: float | None = None

    def as_list(self) -> list[Any]:
        return [self.key, self.arm[0], self.reason, self.p]  # "a" applied, "w" withheld


def _use(item: Any) -> Use:
    if not isinstance(item, list) or len(item) != 4:
        raise ValueError("use: not [key, arm, reason, p]")
    key, arm, reason, p = item
    if not isinstance(key, str) or not LESSON_KEY.match(key) or arm not in ("a", "w"):
        raise ValueError("use: bad key or arm")
    if arm == "w" and reason not in WITHHELD_REASONS or arm == "a" and reason != "":
        raise ValueError("use: bad reason")
    if p is not None and probability(p) is None:
        raise ValueError("use: p is not a probability")
    return Use(key, "applied" if arm == "a" else "withheld", reason, None if p is None else float(p))


@dataclass(frozen=True)
class TrialRow:
    """One run as its lessons' trials see it (see the module docstring). ``created``: when its
    outcome was recorded (seconds since the epoch; None for a row from a run record alone)."""

    run: str
    domain: str
    question: str
    model: str
    kind: str = "ordinary"
    plan_by_person: bool = False
    adaptive: bool = False
    available: bool = True
    uses: tuple[Use, ...] = ()
    scores: tuple[int | None, ...] | None = None
    mean: float | None = None
    passed: bool | None = None
    review: str = ""
    suspect: str = ""
    facts: Mapping[str, float] = field(default_factory=dict)
    created: float | None = None
    grade: Grade | None = None
    digest: str = ""
    excluded: tuple[tuple[str, str], ...] = ()  # lessons left out of the run's selection, and why (from its record)
    edit: Edit | None = None  # its scores differ from those first recorded: how (see :class:`Edit`)

    @cached_property
    def stamp(self) -> str:
        """The run's start time as a sortable stamp: the one its id ends with (what
        :func:`~..files.stamp_of` writes)."""
        return self.run.rsplit("_", 1)[-1]

    @property
    def measured(self) -> bool:
        """Whether the run's outcome may count in a comparison: critiqued, not suspect, its memory
        was readable, and not an arm of ``memory ab``."""
        return self.mean is not None and not self.suspect and self.available and self.kind != "ab"

    @property
    def whole_run_baseline(self) -> bool:  # a control run, or a suspended domain's
        return self.kind == "control"

    def value(self, target: str) -> float | None:
        """The value of ``target`` in this run (None where it does not apply or was not critiqued)."""
        if target == PERSON_TARGET:
            return self.mean
        if target.startswith("scores.") and self.scores is not None:
            value = self.scores[DIMENSIONS.index(target.removeprefix("scores."))]
            return None if value is None else float(value)
        return self.facts.get(target)

    @cached_property
    def given_keys(self) -> frozenset[str]:
        """The keys the run was given."""
        return frozenset(use.key for use in self.uses if use.arm == "applied")

    def with_outcome_of(self, newer: TrialRow) -> TrialRow:
        """``newer`` keeping this row's grade where it has none (a critique after the grade)."""
        return newer if newer.grade is not None or self.grade is None else replace(newer, grade=self.grade)

    def as_json(self) -> dict[str, Any]:
        return {
            "run": self.run, "domain": self.domain, "q": self.question, "model": self.model, "kind": self.kind,
            "plan_by_person": self.plan_by_person, "adaptive": self.adaptive, "available": self.available,
            "uses": [use.as_list() for use in self.uses], "scores": None if self.scores is None else list(self.scores),
            "mean": self.mean, "pass": self.passed, "review": self.review, "suspect": self.suspect,
            "facts": dict(self.facts), "created": self.created,
            "grade": None if self.grade is None else self.grade.as_dict(), "digest": self.digest,
            "excluded": [list(pair) for pair in self.excluded],
            "edit": None if self.edit is None else self.edit.as_json(),
        }  # fmt: skip


def _scores(value: Any) -> tuple[int | None, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list) or len(value) != len(DIMENSIONS):
        raise ValueError("scores: not one per dimension")
    for score in value:
        if score is not None and (isinstance(score, bool) or score not in (1, 2, 3, 4, 5)):
            raise ValueError("scores: not 1-5")
    return tuple(value)


def row_from_json(data: Any) -> TrialRow:
    """The row :meth:`TrialRow.as_json` wrote; ValueError for anything else."""
    if not isinstance(data, Mapping):
        raise ValueError("row: not an object")
    run = data.get("run")
    if not is_run_id(run) or data.get("kind") not in KINDS:
        raise ValueError("row: bad run id or kind")
    facts = data.get("facts")
    if not isinstance(facts, Mapping) or not set(facts) <= set(_FACTS):
        raise ValueError("row: bad facts")
    uses = data.get("uses")
    if not isinstance(uses, list) or len(uses) > 100:
        raise ValueError("row: bad uses")
    flags: tuple[Any, Any, Any] = (data.get("plan_by_person"), data.get("adaptive"), data.get("available"))
    if not all(isinstance(flag, bool) for flag in flags) or data.get("pass") not in (None, True, False):
        raise ValueError("row: bad flags")
    if data.get("review") not in ("", "rejected"):
        raise ValueError("row: bad review")
    return TrialRow(
        run, text_field(data.get("domain"), "domain", limit=40), text_field(data.get("q"), "q", limit=40),
        text_field(data.get("model"), "model"), data["kind"], *flags, tuple(_use(item) for item in uses),
        _scores(data.get("scores")), optional_field(data.get("mean"), number_field, "mean"), data.get("pass"), data["review"],
        text_field(data.get("suspect"), "suspect"), {k: number_field(v, k) for k, v in facts.items()},
        optional_field(data.get("created"), lambda v, w: number_field(v, w, low=0, high=1e11), "created"),
        None if data.get("grade") is None else Grade.from_dict(data["grade"]), text_field(data.get("digest"), "digest", limit=32),
        _excluded_from(data.get("excluded", [])), _edit(data.get("edit")),
    )  # fmt: skip


def _excluded_from(value: Any) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, list) or len(value) > 100:
        raise ValueError("row: bad excluded")
    out = []
    for item in value:
        if not isinstance(item, list) or len(item) != 2 or not LESSON_KEY.match(str(item[0])):
            raise ValueError("row: bad excluded")
        out.append((item[0], text_field(item[1], "excluded reason", limit=_WHY)))
    return tuple(out)


def excluded_lessons(excluded: Any) -> tuple[tuple[str, str], ...]:
    """The lessons (not critique files) a run record's ``excluded`` list names, each reason cut short."""
    return tuple((key, why[:_WHY]) for key, why in excluded if LESSON_KEY.match(key))[:_MAX_EXCLUDED]


def kind_of(adaptive: bool, withheld: Any, run_kind: str = "") -> str:
    """A run's kind (:data:`KINDS`) from its ``run_kind`` mark and the reasons it withheld lessons."""
    if run_kind == "ab":
        return "ab"
    reasons = {w.reason for w in withheld}
    if not adaptive and reasons & set(WHOLE_RUN_REASONS):
        return "control"
    return "no_lessons" if not adaptive and "no_lessons" in reasons else "ordinary"


def _uses(applied: Any, withheld: Any) -> tuple[Use, ...]:
    """Each key once (applied wins), as the index's use rows take them."""
    found: dict[str, Use] = {}
    for lesson in applied:
        if lesson.key and LESSON_KEY.match(lesson.key) and lesson.key not in found:
            found[lesson.key] = Use(lesson.key, "applied", "", probability(lesson.p))
    for lesson in withheld:
        if LESSON_KEY.match(lesson.key) and lesson.key not in found and lesson.reason in WITHHELD_REASONS:
            found[lesson.key] = Use(lesson.key, "withheld", lesson.reason, probability(lesson.p))
    return tuple(found.values())


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) and abs(value) <= 1e7 else None


def row_from_critique(critique: Critique, excluded: tuple[tuple[str, str], ...] = ()) -> TrialRow:
    """The row of the run ``critique`` judged; ``excluded``: the lessons its selection left out,
    and why (:func:`excluded_lessons` of its run record, where it is at hand)."""
    facts = {name: v for name in _FACTS if (v := _finite(TARGETS[name].read(critique))) is not None}
    scores = tuple(critique.scores.get(d) for d in DIMENSIONS)
    suspect = critique.suspect_reason or ""
    review = critique.review or ""
    return TrialRow(
        critique.id, critique.query_domain, question_key(critique.query), critique.model_version[:_MAX_TEXT],
        kind_of(critique.adaptive, critique.lessons_withheld, critique.run_kind), critique.plan_by_person,
        critique.adaptive, critique.lessons_available, _uses(critique.lessons_applied, critique.lessons_withheld),
        scores, critique.mean_score, critique.overall_pass, review, suspect[:_MAX_TEXT], facts,
        critique.created_at.timestamp(), None, scores_digest(scores), excluded,
    )  # fmt: skip


def row_from_record(record: Any, grade: Grade | None = None) -> TrialRow:
    """The row of a run never critiqued, from its run record (``research_agent.record.RunRecord``):
    its lessons given and withheld, its scores null."""
    lessons = record.lessons
    adaptive = lessons.adaptive and any(a.key for a in lessons.applied)
    return TrialRow(
        record.id, record.domain[:40], question_key(record.query), record.model[:_MAX_TEXT],
        kind_of(adaptive, lessons.withheld), bool(getattr(record, "plan_by_person", False)), adaptive,
        lessons.available, _uses(lessons.applied, lessons.withheld), grade=grade,
        excluded=excluded_lessons(lessons.excluded),
    )  # fmt: skip
