"""The run record's ``lessons:`` block: what a run was given, what it was eligible for and did not
get (and why), the seed of its trial draw, and each lesson's trial probability ``p``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..shapes import Plain, shape

__all__ = ["AppliedLesson", "WithheldLesson", "LessonsRecord", "LeftOut", "probability"]


@dataclass(frozen=True)
class AppliedLesson:
    """A lesson a run was given: its text, the critiques behind it, and (since lessons have
    keys) its stable ``key``, the ``stage`` it was written for and the ``target`` it should move."""

    text: str
    critique_ids: tuple[str, ...] = ()
    key: str = ""
    stage: str = ""
    target: str = ""
    p: float | None = None  # the probability with which its trial draw would have withheld it


@dataclass(frozen=True)
class WithheldLesson(Plain):
    """A lesson a run was eligible for and did not get, and why (see
    ``research_agent.memory.store.schema.WITHHELD_REASONS``: trial, control, no_lessons,
    suspended, retired); ``p``: for ``trial``, the probability with which its draw withheld it
    (None when not recorded)."""

    key: str
    reason: str
    p: float | None = field(default=None, metadata=shape(optional=True))

    @classmethod
    def from_item(cls, item: Any, *, default_reason: str = "control") -> WithheldLesson:
        """From a record or critique item: ``{key, reason[, p]}``, or a bare key as written before
        reasons were kept (then a whole-run control: the only way a lesson was withheld)."""
        if isinstance(item, Mapping):
            return cls(str(item.get("key", "")), str(item.get("reason", default_reason)), probability(item.get("p")))
        return cls(str(item), default_reason)


@dataclass(frozen=True)
class LeftOut(Plain):
    """A critique file or a lesson key that was left out, and why: ``{file, reason}`` wherever it is
    written (a run record's ``lessons.excluded``, ``memory lessons``, ``memory stats``, the MCP tools)."""

    file: str
    reason: str


def probability(value: Any) -> float | None:
    """``value`` as a probability (a finite number from 0 to 1), or None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if 0 <= value <= 1 else None


def _seed(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class LessonsRecord:
    """The run record's ``lessons:`` block (the shape ``LessonSelection.as_record`` gives)."""

    adaptive: bool = False
    reason: str = ""
    applied: tuple[AppliedLesson, ...] = ()
    excluded: tuple[tuple[str, str], ...] = ()  # (critique file or lesson key, why it was not used)
    withheld: tuple[WithheldLesson, ...] = ()  # lessons it was eligible for and did not get, and why
    available: bool = True  # False: the run could not read its memory and went without lessons
    trial_seed: int | None = None  # the seed of the run's per-lesson trial draw
    # what the first decompose prompt listed, (domain, key, text), and the other domains it came from
    offered: tuple[tuple[str, str, str], ...] = ()
    offered_other_domains: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LessonsRecord:
        return cls(
            adaptive=bool(data.get("adaptive", False)),
            reason=str(data.get("reason", "")),
            applied=tuple(
                AppliedLesson(
                    str(a.get("text", "")),
                    tuple(a.get("critique_ids", ())),
                    key=str(a.get("key", "")),
                    stage=str(a.get("stage", "")),
                    target=str(a.get("target", "")),
                    p=probability(a.get("p")),
                )
                for a in data.get("applied", ())
            ),
            excluded=tuple((str(e.get("file", "")), str(e.get("reason", ""))) for e in data.get("excluded", ())),
            withheld=tuple(WithheldLesson.from_item(k) for k in data.get("withheld", ())),
            available=bool(data.get("available", True)),
            trial_seed=_seed(data.get("trial_seed")),
            offered=tuple((str(o.get("domain", "")), str(o.get("key", "")), str(o.get("text", "")))
                          for o in data.get("offered", ())),  # fmt: skip
            offered_other_domains=tuple(str(d) for d in data.get("offered_other_domains", ())),
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "adaptive": self.adaptive,
            "reason": self.reason,
            "applied": [
                {
                    "key": a.key, "stage": a.stage, "target": a.target, "text": a.text,
                    "critique_ids": list(a.critique_ids), **({} if a.p is None else {"p": a.p}),
                }
                for a in self.applied
            ],
            "excluded": [LeftOut(name, why).as_dict() for name, why in self.excluded],
            "withheld": [w.as_dict() for w in self.withheld],
            **({} if self.available else {"available": False}),
            **({} if self.trial_seed is None else {"trial_seed": self.trial_seed}),
            **({} if not self.offered else {
                "offered": [{"domain": d, "key": k, "text": t} for d, k, t in self.offered],
                "offered_other_domains": list(self.offered_other_domains),
            }),
        }
