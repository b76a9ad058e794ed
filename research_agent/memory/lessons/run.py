"""What memory gives a run that names its domain only in its first plan.

A run has no model round of its own to learn its domain: its first decompose call names it.
So lessons are chosen in two steps (:class:`RunLessons`): :meth:`~RunLessons.offer`, before
that call, gives the planning lessons of the domains that have some (:mod:`.offer`);
:meth:`~RunLessons.given`, after it, is the named domain's selection as the run was given it.

:class:`MemoryLessons` reads ``reports/meta``. It selects only the domains that have enough
eligible critiques, best-evidenced first, or planning lessons of the person's own (those
first; every domain when the person has planning lessons for every domain), and stops once
the planning prompt is full; the named domain is selected afterwards if it was not among
them. One random draw decides whether the run is a control run, for every domain: a
baseline run is offered nothing; one trial seed (recorded) decides which selected lessons
are withheld for their trials, in every domain alike (:mod:`.trials`), a person's lessons
as much as the tool's own.
:class:`FixedLessons` serves a caller's own ``domain -> selection`` function.

Memory never holds a run past its deadline: every wait on the index lasts at most the run's
``time_left()``. When the index stays locked (or its files cannot all be read) in that time,
or the user state folder that holds the index's key cannot be used, the run goes on
without lessons, with one warning, and is recorded as ``lessons: unavailable``: not
randomly withheld, so it is left out of both arms of every comparison.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Protocol, runtime_checkable

from ...domains import DOMAINS
from ...errors import StorageError
from ..store.index.summary import CritiqueIndex, IndexTrust, TimeLeft, open_index
from .offer import LessonOffer, offer_lessons
from .person import PersonLessons
from .select import SelectionRules, candidate_domains, check_ttl, select_in
from .setting import RunSetting
from .trials import DEFAULT_TRIAL_PROBABILITY, new_seed
from .types import MAX_LESSONS, LessonSelection

__all__ = ["RunLessons", "MemoryLessons", "FixedLessons", "LessonsFn"]

LessonsFn = Callable[[str], LessonSelection]  # domain -> the lessons a run in it gets
Opener = Callable[..., CritiqueIndex]  # open_index, or a test's stand-in


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
    """Lessons from the critiques in ``meta_dir`` (see the module docstring).

    ``state_dir``: the user state folder, where the trust of the person's ``lessons.yaml`` and
    the key that lets the on-disk index be used are kept (None: no person's lessons, the index
    built in memory). ``time_left``: seconds the run may still wait (None: no deadline).
    ``opener``: what opens the index (:func:`open_index`).
    """

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
        state_dir: Path | None = None,
        time_left: TimeLeft | None = None,
        opener: Opener = open_index,
    ) -> None:
        check_ttl(ttl_days)
        self.meta_dir = Path(meta_dir)
        self.rules = SelectionRules(
            now, ttl_days, limit, min_critiques, control_fraction, force_control, max_lessons,
            trial_probability, setting,
        )  # fmt: skip
        self._person = PersonLessons.read(self.meta_dir, state_dir) if state_dir is not None else PersonLessons()
        self._seed = rng.random()  # the one draw: every domain's selection sees the same
        self.trial_seed = new_seed(rng)
        self._selected: dict[str, LessonSelection] = {}
        self._explained: set[str] = set()  # domains whose selection lists the files left out
        self._offer = LessonOffer({})
        self._trust = IndexTrust(state_dir) if state_dir is not None else None
        self._time_left = time_left
        self._opener = opener
        self._unavailable = ""  # why memory could not be read, once it could not

    def _rng(self) -> random.Random:
        return random.Random(self._seed)

    def _control(self) -> bool:
        rules = self.rules
        return rules.force_control or (rules.control_fraction > 0 and self._rng().random() < rules.control_fraction)

    def offer(self) -> LessonOffer:
        if self._control():
            return self._offer  # a baseline run is offered nothing; given() says why
        own, any_keys = self._person.planning_domains()
        try:
            with self._open() as index:
                candidates = candidate_domains(index, self.rules)
                extra = [d for d in DOMAINS if d not in candidates and (any_keys or d in own)]
                order = sorted([*candidates, *extra], key=lambda d: d not in own)  # the person's domains first
                # a domain offered only for the person's lessons has no critiques to explain until it is named
                selections = (self._select(index, d, explain=d in candidates or d in own) for d in order)
                self._offer = offer_lessons(selections, any_keys=any_keys)
        except StorageError as exc:
            self._offer, self._unavailable = LessonOffer({}), str(exc)
        return self._offer

    def given(self, domain: str) -> LessonSelection:
        if not self._unavailable and domain not in self._explained:
            offered = self._selected.get(domain)
            try:
                with self._open() as index:
                    fresh = self._select(index, domain)
            except StorageError as exc:
                self._unavailable = str(exc)
            else:
                if offered is not None:  # what the prompt was offered stands; only the explanation is new
                    self._selected[domain] = replace(offered, excluded=fresh.excluded)
        if self._unavailable:
            return self._without_memory(domain)
        return self._offer.settle(self._selected[domain])

    def _open(self) -> CritiqueIndex:
        return self._opener(self.meta_dir, trust=self._trust, time_left=self._time_left)

    def _without_memory(self, domain: str) -> LessonSelection:
        """The selection of a run that could not read its memory: no lessons, one warning."""
        return LessonSelection(
            domain, (), False, f"no lessons: memory could not be read in time ({self._unavailable})",
            warnings=(f"this run goes on without lessons: {self._unavailable}",), available=False,
        )  # fmt: skip

    def _select(self, index: CritiqueIndex, domain: str, *, explain: bool = True) -> LessonSelection:
        self._selected[domain] = select_in(
            index, domain, self.rules, self._rng(), seed=self.trial_seed, explain=explain, person=self._person
        )
        if explain:
            self._explained.add(domain)
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
