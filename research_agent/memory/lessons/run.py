"""What memory gives a run that names its domain only in its first plan.

A run has no model round of its own to learn its domain: its first decompose call names it.
So lessons are chosen in two steps (:class:`RunLessons`): :meth:`~RunLessons.offer`, before
that call, gives the planning lessons of the domains that have some (:mod:`.offer`);
:meth:`~RunLessons.given`, after it, is the named domain's selection as the run was given it.

:class:`MemoryLessons` reads ``reports/meta``. It selects only the domains that have enough
eligible critiques, best-evidenced first, and stops once the planning prompt is full; the
named domain is selected afterwards if it was not among them. One random draw decides
whether the run is a control run, for every domain: a baseline run is offered nothing; one
trial seed (recorded) decides which selected lessons are withheld for their trials, in every
domain alike (:mod:`.trials`).
:class:`FixedLessons` serves a caller's own ``domain -> selection`` function.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Protocol, runtime_checkable

from ...domains import DOMAINS
from ..store.index import CritiqueIndex, open_index
from .offer import LessonOffer, offer_lessons
from .select import SelectionRules, candidate_domains, check_ttl, select_in
from .setting import RunSetting
from .trials import DEFAULT_TRIAL_PROBABILITY, new_seed
from .types import MAX_LESSONS, LessonSelection

__all__ = ["RunLessons", "MemoryLessons", "FixedLessons", "LessonsFn"]

LessonsFn = Callable[[str], LessonSelection]  # domain -> the lessons a run in it gets


@runtime_checkable
class RunLessons(Protocol):
    """The lessons of one run: offered before its first plan, given once the plan names the domain."""

    def offer(self) -> LessonOffer:
        """The planning lessons the first decompose prompt lists, per domain."""
        ...

    def given(self, domain: str) -> LessonSelection:
        """What the run in ``domain`` is given (after :meth:`offer`)."""
        ...


class MemoryLessons:
    """Lessons from the critiques in ``meta_dir`` (see the module docstring)."""

    def __init__(
        self,
        meta_dir: Path,
        *,
        now: datetime,
        rng: random.Random,
        ttl_days: float = 30,
        control_fraction: float = 0.2,
        force_control: bool = False,
        limit: int = 10,
        min_critiques: int = 3,
        max_lessons: int = MAX_LESSONS,
        trial_probability: float = DEFAULT_TRIAL_PROBABILITY,
        setting: RunSetting | None = None,
    ) -> None:
        check_ttl(ttl_days)
        self.meta_dir = Path(meta_dir)
        self.rules = SelectionRules(
            now, ttl_days, limit, min_critiques, control_fraction, force_control, max_lessons,
            trial_probability, setting,
        )  # fmt: skip
        self._seed = rng.random()  # the one draw: every domain's selection sees the same
        self.trial_seed = new_seed(rng)
        self._selected: dict[str, LessonSelection] = {}
        self._offer = LessonOffer({})

    def _rng(self) -> random.Random:
        return random.Random(self._seed)

    def _control(self) -> bool:
        rules = self.rules
        return rules.force_control or (rules.control_fraction > 0 and self._rng().random() < rules.control_fraction)

    def offer(self) -> LessonOffer:
        if self._control():
            return self._offer  # a baseline run is offered nothing; given() says why
        with open_index(self.meta_dir) as index:
            candidates = candidate_domains(index, self.rules)
            selections = (self._select(index, domain) for domain in candidates)
            self._offer = offer_lessons(selections)
        return self._offer

    def given(self, domain: str) -> LessonSelection:
        if domain not in self._selected:
            with open_index(self.meta_dir) as index:
                self._select(index, domain)
        return self._offer.settle(self._selected[domain])

    def _select(self, index: CritiqueIndex, domain: str) -> LessonSelection:
        self._selected[domain] = select_in(index, domain, self.rules, self._rng(), seed=self.trial_seed)
        return self._selected[domain]


class FixedLessons:
    """Lessons from a caller's ``domain -> selection`` function (a test, a library user)."""

    def __init__(self, select: LessonsFn) -> None:
        self._select = select
        self._offer = LessonOffer({})

    def offer(self) -> LessonOffer:
        selections = sorted((self._select(d) for d in DOMAINS), key=lambda s: -len(s.considered))
        self._offer = offer_lessons(selections)
        return self._offer

    def given(self, domain: str) -> LessonSelection:
        return self._offer.settle(self._select(domain))
