"""A lesson, and what memory gives one run: frozen results shared by selection, building,
settling and rendering."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field, replace
from typing import Any

from ...record.lessons import LeftOut, WithheldLesson
from ...shapes import Plain, shape
from ..store.schema import PERSON_KINDS, STAGES, key_kind

__all__ = ["Lesson", "LessonSelection", "MAX_LESSONS", "ORIGINS", "KEPT_WORDS"]

MAX_LESSONS = 5  # per stage
KEPT_WORDS = "kept for its undecided trial (retention removed the critiques behind it)"
ORIGINS = ("built", *PERSON_KINDS)  # research-agent built it; a person wrote it (user) or approved it


@dataclass(frozen=True)
class Lesson(Plain):
    """One lesson: its stable ``key``, the ``stage`` it is written for, the ``target`` (fact
    or dimension) it should move, its text, and the critiques behind it (newest first).

    A built lesson's text comes from a template; a person's (``user:``, ``approved:``) is
    their own words from the trusted ``lessons.yaml``, with no critiques behind it. ``p``: in a
    run's selection, the probability with which its trial draw would have withheld it. ``kept``: a
    built lesson kept for its undecided trial after retention removed the critiques that built it
    (:mod:`.build.kept`): its text as the ledger recorded it when run ``critique_ids[0]`` was first
    given it.
    """

    key: str
    stage: str
    target: str
    text: str
    critique_ids: tuple[str, ...]
    p: float | None = field(default=None, compare=False, metadata=shape(optional=True))
    kept: bool = field(default=False, metadata=shape(optional=True))

    @property
    def origin(self) -> str:
        """``built`` (research-agent wrote it from critiques), ``user`` or ``approved``."""
        kind = key_kind(self.key)
        return kind if kind in PERSON_KINDS else "built"


@dataclass(frozen=True)
class LessonSelection:
    """What memory gives one run, and why.

    ``lessons``: the lessons the run is given (none for a baseline run).
    ``withheld``: the lessons it was eligible for and did not get, each with why (``trial``:
    withheld on its own at random; a baseline run: ``--no-lessons``, a control run, a
    suspended domain; retired lessons), so that effects can compare.
    ``trial_seed``: the seed of the run's trial draw (:mod:`.trials`), recorded.
    ``available``: False when the run could not read its memory and went without lessons.
    ``considered``: ids of the eligible critiques the lessons were drawn from.
    ``excluded``: ``(critique file or lesson key, reason)`` for every critique file not
    drawn from and every lesson not given (contradicted, retired, over the cap).
    ``offered``: every planning lesson the first decompose prompt listed, of every domain, as
    ``(domain, lesson)`` (domain ``any``: a person's lesson for every domain), set when the offer
    is settled (:meth:`.offer.LessonOffer.settle`); only the run's own domain's can be applied.
    """

    domain: str
    lessons: tuple[Lesson, ...]
    adaptive: bool
    reason: str
    considered: tuple[str, ...] = ()
    excluded: tuple[tuple[str, str], ...] = ()
    warnings: tuple[str, ...] = ()
    withheld: tuple[WithheldLesson, ...] = ()
    available: bool = True
    trial_seed: int | None = None
    offered: tuple[tuple[str, Lesson], ...] = ()

    @classmethod
    def none(cls, domain: str = "", reason: str = "lessons disabled") -> LessonSelection:
        """A selection with no lessons, for runs that use no memory."""
        return cls(domain=domain, lessons=(), adaptive=False, reason=reason)

    @property
    def withheld_keys(self) -> tuple[str, ...]:
        """The keys of the lessons the run was eligible for and did not get."""
        return tuple(w.key for w in self.withheld)

    def for_stage(self, stage: str) -> tuple[Lesson, ...]:
        """The lessons meant for ``stage`` (decompose or relevance)."""
        if stage not in STAGES:
            raise ValueError(f"unknown stage {stage!r}")
        return tuple(lesson for lesson in self.lessons if lesson.stage == stage)

    def for_sites(self, sites: Collection[str]) -> LessonSelection:
        """This selection where only ``sites`` (those of the sources being judged) may be named: a
        site lesson about any other site is neither given nor withheld (it could not have been
        given), and is listed in ``excluded``."""
        def off(key: str) -> bool:
            return key_kind(key) in ("site:kept", "site:dropped") and key.split(":", 2)[2] not in sites

        dropped = [lesson.key for lesson in self.lessons if off(lesson.key)]
        dropped += [w.key for w in self.withheld if off(w.key)]
        if not dropped:
            return self
        lessons = tuple(lesson for lesson in self.lessons if not off(lesson.key))
        return replace(
            self,
            lessons=lessons,
            adaptive=self.adaptive and bool(lessons),
            withheld=tuple(w for w in self.withheld if not off(w.key)),
            excluded=(*self.excluded, *((key, "its site was not among this run's sources") for key in dropped)),
        )

    def as_record(self) -> dict[str, Any]:
        """The run record's ``lessons:`` block."""
        return {
            "adaptive": self.adaptive,
            "reason": self.reason,
            "applied": [lesson.as_dict() for lesson in self.lessons],
            "excluded": [LeftOut(name, why).as_dict() for name, why in self.excluded],
            "withheld": [w.as_dict() for w in self.withheld],
            **({} if self.available else {"available": False}),
            **({} if self.trial_seed is None else {"trial_seed": self.trial_seed}),
            **self._offered_record(),
        }

    def _offered_record(self) -> dict[str, Any]:
        """What the first decompose prompt listed, and the other domains it came from (nothing: it listed none)."""
        if not self.offered:
            return {}
        others = [d for d in dict.fromkeys(domain for domain, _ in self.offered) if d not in (self.domain, "any")]
        return {
            "offered": [{"domain": domain, "key": lesson.key, "text": lesson.text} for domain, lesson in self.offered],
            "offered_other_domains": others,
        }
