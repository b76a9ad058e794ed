"""Each lesson's effect: its target in the runs given it against the runs eligible and withheld.

For every lesson key (per domain) the runs *with* it are the critiques whose run was given it
(``lessons_applied``); the runs *without* it are the runs that were eligible for it and did
not get it (``lessons_withheld``), whatever the reason: its own trial (withheld at random on
its own), a whole-run control, ``--no-lessons``, a suspended domain, or its retirement.
Because trials withhold each lesson independently, the two arms differ, on average, only in
that lesson, whatever else was given beside it. Runs that are suspect, or whose memory could
not be read, are in neither arm (the index has no use rows for them).

The estimate: when at least :data:`MIN_PAIRED_QUESTIONS` normalized questions ran in both
arms, the difference is *paired* over those questions (each question's mean with, minus its
mean without, with a paired t interval); otherwise it is Welch's over all runs
(``method`` says which). The target (:mod:`..store.targets`) is averaged in each arm (a run
where it does not apply is left out), the interval is 90%, and the sign is turned so that
positive always means better. ``interval`` is None while there are too few values.

``confounded_with``: the other keys that were never apart from this one in its evidence (in
every one of its runs, given when it was given and withheld when it was withheld). Their
effects cannot be told apart from its own; it is empty once trials have separated them.

A person's lesson (``user:``, ``approved:``) is measured only with its entry at hand
(``person``: its stage and target, from the trusted ``lessons.yaml``); without one it is left
out, since nothing else may say what it is for.

Status: ``measuring`` while either arm has fewer than :data:`MIN_RUNS` runs; ``retired`` when
both have at least that many and the whole interval lies below zero; ``no-effect`` when at
least :data:`NO_EFFECT_RUNS` runs (both arms together) leave an interval that contains zero
(it is kept, but ranks after every ``active`` lesson for a slot); else ``active``.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..store.files import FUTURE_SLACK, stamp_of
from ..store.index.summary import CritiqueIndex
from ..store.schema import LESSON_KEY, STAGES
from ..store.targets import TARGETS, is_person_key, stage_of, target_of
from .intervals import Difference, Moments, paired_difference, welch_difference

__all__ = [
    "MIN_RUNS",
    "NO_EFFECT_RUNS",
    "MIN_PAIRED_QUESTIONS",
    "STATUSES",
    "LessonEffect",
    "Arms",
    "effect_of",
    "effects_in",
]

MIN_RUNS = 5
NO_EFFECT_RUNS = 30
MIN_PAIRED_QUESTIONS = 5
STATUSES = ("measuring", "active", "no-effect", "retired")


@dataclass(frozen=True)
class LessonEffect:
    """One lesson key's measured effect in one domain (see the module docstring)."""

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
    interval: tuple[float, float] | None
    status: str
    method: str = "welch"  # paired | welch
    paired_questions: int = 0
    confounded_with: tuple[str, ...] = ()

    @property
    def retired(self) -> bool:
        return self.status == "retired"

    def as_dict(self) -> dict[str, Any]:
        """The ``memory effects --json`` object (numbers rounded to 4 places)."""
        diff = Difference(self.mean_with, self.mean_without, self.delta, self.interval, 0, 0).as_dict()
        return {
            "key": self.key,
            "stage": self.stage,
            "target": self.target,
            "text": self.text,
            "domain": self.domain,
            "applied_runs": self.applied_runs,
            "baseline_runs": self.baseline_runs,
            "mean_with": diff["mean_with"],
            "mean_without": diff["mean_without"],
            "delta": diff["delta"],
            "interval": diff["interval"],
            "method": self.method,
            "paired_questions": self.paired_questions,
            "confounded_with": list(self.confounded_with),
            "status": self.status,
        }

    def numbers(self) -> str:
        """The effect in words, e.g. for the run record's ``excluded`` list."""
        label = TARGETS[self.target].label
        interval = "none" if self.interval is None else f"[{self.interval[0]:+.3g}, {self.interval[1]:+.3g}]"
        return (
            f"{label} {_num(self.mean_with)} with it over {self.applied_runs} run(s), {_num(self.mean_without)} "
            f"without over {self.baseline_runs}; delta {_num(self.delta, signed=True)} "
            f"(90% interval {interval}, {self.method}; positive means better)"
        )


def _num(value: float | None, *, signed: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:+.3g}" if signed else f"{value:.3g}"


@dataclass
class Arms:
    """One key's measured values, per arm and per normalized question."""

    with_: dict[str, list[float]]
    without: dict[str, list[float]]

    @classmethod
    def empty(cls) -> Arms:
        return cls(defaultdict(list), defaultdict(list))

    @classmethod
    def of(cls, with_: Sequence[float], without: Sequence[float]) -> Arms:
        """Values with no question known: each run its own question (never paired)."""
        arms = cls.empty()
        for i, value in enumerate(with_):
            arms.with_[f"w{i}"].append(value)
        for i, value in enumerate(without):
            arms.without[f"o{i}"].append(value)
        return arms

    def add(self, arm: str, question: str, value: float) -> None:
        (self.with_ if arm == "applied" else self.without)[question].append(value)

    def difference(self) -> tuple[Difference, str, int]:
        """The difference (with - without), the method, and the questions paired."""
        both = [q for q in self.with_ if q in self.without]
        n_with = sum(len(v) for v in self.with_.values())
        n_without = sum(len(v) for v in self.without.values())
        if len(both) >= MIN_PAIRED_QUESTIONS:
            pairs = [(statistics.fmean(self.with_[q]), statistics.fmean(self.without[q])) for q in both]
            paired = paired_difference(pairs)
            diff = Difference(paired.mean_with, paired.mean_without, paired.delta, paired.interval, n_with, n_without)
            return diff, "paired", len(both)
        values_with = [v for vs in self.with_.values() for v in vs]
        values_without = [v for vs in self.without.values() for v in vs]
        return welch_difference(Moments.of(values_with), Moments.of(values_without)), "welch", 0


def _status(diff: Difference) -> str:
    if diff.n_with < MIN_RUNS or diff.n_without < MIN_RUNS:
        return "measuring"
    if diff.interval is not None and diff.interval[1] < 0:
        return "retired"
    enough = diff.n_with + diff.n_without >= NO_EFFECT_RUNS
    if enough and diff.interval is not None and diff.interval[0] <= 0 <= diff.interval[1]:
        return "no-effect"
    return "active"


def effect_of(
    key: str,
    domain: str,
    arms: Arms,
    *,
    text: str = "",
    confounded_with: Sequence[str] = (),
    entry: tuple[str, str] | None = None,
) -> LessonEffect:
    """The effect of ``key`` from its target's values with and without it; ``entry``: the
    ``(stage, target)`` of a person's lesson, from its entry."""
    stage, target = entry if entry is not None else (stage_of(key), target_of(key))
    diff, method, questions = arms.difference()
    if TARGETS[target].lower_is_better:
        diff = diff.flipped()
    return LessonEffect(
        key, stage, target, text, domain, diff.n_with, diff.n_without,
        diff.mean_with, diff.mean_without, diff.delta, diff.interval, _status(diff),
        method, questions, tuple(confounded_with),
    )  # fmt: skip


Row = tuple[str, str, str, str, str, "float | None"]  # domain, key, file, arm, question, value


def _confounded(key: str, runs: Mapping[str, str], arms_by_run: Mapping[str, Mapping[str, str]]) -> list[str]:
    """The other keys in the same arm as ``key`` in every one of its ``runs`` (file -> arm)."""
    together: set[str] | None = None
    for name, arm in runs.items():
        same = {other for other, other_arm in arms_by_run[name].items() if other_arm == arm and other != key}
        together = same if together is None else together & same
        if not together:
            return []
    return sorted(together or ())


def effects_in(
    index: CritiqueIndex,
    *,
    now: datetime,
    domain: str | None = None,
    keys: Iterable[str] | None = None,
    detail: bool = False,
    texts: Mapping[tuple[str, str], str] | None = None,
    person: Mapping[str, tuple[str, str]] | None = None,
) -> tuple[LessonEffect, ...]:
    """The effect of every lesson key (or of ``keys``) in ``domain`` (or every domain).

    ``detail``: also find ``confounded_with`` (reads every key's uses, not only ``keys``'s).
    ``texts``: ``(domain, key) -> text`` to show with each effect (the text the lesson has when
    it is built now; never text read from a critique).
    ``person``: ``key -> (stage, target)`` of a person's lessons (see the module docstring).
    """
    person = person or {}
    latest = now + FUTURE_SLACK
    window = {"domain": domain, "future": stamp_of(latest), "latest": latest.timestamp()}
    wanted = None if keys is None else sorted(k for k in set(keys) if LESSON_KEY.match(k))
    targets = {key: target for key, (_, target) in person.items()}
    rows: list[Row] = index.uses(None if detail else wanted, **window, targets=targets)  # type: ignore[arg-type]
    arms: dict[tuple[str, str], Arms] = {}
    runs: dict[tuple[str, str], dict[str, str]] = defaultdict(dict)
    arms_by_run: dict[str, dict[str, str]] = defaultdict(dict)
    chosen = None if wanted is None else set(wanted)
    for row_domain, key, name, arm, question, value in rows:
        if detail:
            arms_by_run[name][key] = arm
        if value is None or not LESSON_KEY.match(key) or (chosen is not None and key not in chosen):
            continue
        if is_person_key(key) and key not in person:
            continue
        found = arms.get((row_domain, key))
        if found is None:
            found = arms[(row_domain, key)] = Arms.empty()
        found.add(arm, question, float(value))
        runs[(row_domain, key)][name] = arm
    effects = [
        effect_of(
            key, where, measured,
            text=(texts or {}).get((where, key), ""),
            confounded_with=_confounded(key, runs[(where, key)], arms_by_run) if detail else (),
            entry=person.get(key),
        )  # fmt: skip
        for (where, key), measured in arms.items()
    ]
    return tuple(sorted(effects, key=lambda e: (e.domain, STAGES.index(e.stage), e.key)))
