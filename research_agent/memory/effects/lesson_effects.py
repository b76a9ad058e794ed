"""Each lesson's effect: the runs given it against the runs that withheld it by its own trial draw.

For every lesson key (per domain) the runs *with* it are the critiques whose run was given it
(``lessons_applied``): only adaptive runs, never controls. The runs *without* it are the runs
that were eligible for it and withheld it by its **own** trial draw (``lessons_withheld`` with
reason ``trial``), nothing else: a whole-run control, ``--no-lessons``, a suspended domain and
a retired lesson withhold every lesson at once (or on no draw at all), so counted as "without"
they would make the other lessons' presence differ between the two arms and lend this lesson
their effects (:func:`~..store.index.rows.in_trial`). Because each lesson's draw is independent
of every other's, the other lessons are then given equally often, on average, in both arms.
The whole-run controls serve one comparison only: adaptive runs against baseline runs, which
suspends a domain (:mod:`.stats`). Runs that are suspect, or whose memory could not be read,
are in neither arm (the index has no use rows for them).

Every lesson is measured twice: on its own *target* (:mod:`..store.targets`; a run where it
does not apply is left out) and on the critique's *mean score*, whatever its target (once,
for a lesson whose target is the mean score). Each measure is estimated by
:func:`.estimate.estimate`: paired by question wherever both arms share questions, only between
runs drawn at the same trial probability, and adjusted for the other lessons given beside it
(:func:`covariates_of`: they are balanced between the arms, so this removes their noise, not a
bias). Its interval is the always-valid one of
:mod:`.sequential`, the error budget ``ALPHA`` shared between the two measures
(:data:`SCORE_SHARE` of it to the mean score, the rest to the target), so that a lesson that
does nothing is retired or called helpful, at any of the looks ever taken, in at most
``ALPHA`` of histories.
Signs are turned so that positive always means better.

Status (:func:`status_of`), once both arms have :data:`MIN_RUNS` runs: ``retired`` when either
measure's interval lies wholly below zero (harm to the mean score retires a lesson whatever its
target says); ``helpful`` when one lies wholly above zero and neither below; else ``active``,
and ``no-effect`` from :data:`NO_EFFECT_RUNS` runs (both arms together) on: whatever it does is
too small to see (kept, but ranked after the others for a slot). Before that, ``measuring``.
``decided_after``: the runs (both arms) at which the evidence first reached the current
decision, when it is one (:func:`effects_in` with ``detail``).

``confounded_with``: the other keys that were never apart from this one in its evidence (in
every one of its runs, given when it was given and withheld when it was withheld). Their
effects cannot be told apart from its own; it is empty once trials have separated them.

A person's lesson (``user:``, ``approved:``) is measured only with its entry at hand
(``person``: its stage and target, from the trusted ``lessons.yaml``); without one it is left
out, since nothing else may say what it is for.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from ..store.files import FUTURE_SLACK, stamp_of
from ..store.index.rows import in_trial
from ..store.index.summary import CritiqueIndex
from ..store.schema import LESSON_KEY, STAGES
from ..store.targets import PERSON_TARGET, TARGETS, is_person_key, stage_of, target_of
from .estimate import Arms, Cell, Tally, estimate
from .sequential import ALPHA, radius, variance_floor

__all__ = [
    "MIN_RUNS",
    "NO_EFFECT_RUNS",
    "SCORE_SHARE",
    "STATUSES",
    "DECIDED",
    "Measured",
    "LessonEffect",
    "Arms",
    "covariates_of",
    "effect_of",
    "status_of",
    "effects_in",
]

MIN_RUNS = 5  # runs in each arm before any decision
NO_EFFECT_RUNS = 40  # runs in both arms together from which an undecided lesson has no effect worth seeing
SCORE_SHARE = 0.75  # of the error budget, what the mean-score check gets (the measure every lesson shares)
MAX_COVARIATES = 6  # other lessons a lesson's effect is adjusted for, at most
STATUSES = ("measuring", "active", "helpful", "no-effect", "retired")
DECIDED = ("helpful", "retired")


@dataclass(frozen=True)
class Measured:
    """One measure of one lesson: a target's means in each arm and the signed difference with
    its always-valid interval (None while it cannot be estimated)."""

    target: str
    n_with: int
    n_without: int
    mean_with: float | None
    mean_without: float | None
    delta: float | None
    interval: tuple[float, float] | None
    paired_questions: int = 0

    @property
    def verdict(self) -> str | None:
        """``better`` or ``worse`` when both arms are big enough and the interval excludes zero."""
        if self.interval is None or min(self.n_with, self.n_without) < MIN_RUNS:
            return None
        return "better" if self.interval[0] > 0 else "worse" if self.interval[1] < 0 else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "mean_with": _round(self.mean_with),
            "mean_without": _round(self.mean_without),
            "delta": _round(self.delta),
            "interval": None if self.interval is None else [_round(v) for v in self.interval],
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


@dataclass(frozen=True)
class LessonEffect:
    """One lesson key's measured effect in one domain (see the module docstring): the numbers
    of its own target at the top level, its mean-score check in ``score`` (None when its target
    is the mean score)."""

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
    method: str = "unpaired"  # paired | unpaired
    paired_questions: int = 0
    confounded_with: tuple[str, ...] = ()
    score: Measured | None = None
    decided_on: str = ""  # the target whose interval decided it ('' while undecided)
    decided_after: int | None = None  # runs (both arms) when the evidence first reached the decision

    @property
    def retired(self) -> bool:
        return self.status == "retired"

    def as_dict(self) -> dict[str, Any]:
        """The ``memory effects --json`` object (numbers rounded to 4 places)."""
        own = Measured(self.target, 0, 0, self.mean_with, self.mean_without, self.delta, self.interval).as_dict()
        return {
            "key": self.key,
            "stage": self.stage,
            "target": self.target,
            "text": self.text,
            "domain": self.domain,
            "applied_runs": self.applied_runs,
            "baseline_runs": self.baseline_runs,
            "mean_with": own["mean_with"],
            "mean_without": own["mean_without"],
            "delta": own["delta"],
            "interval": own["interval"],
            "method": self.method,
            "paired_questions": self.paired_questions,
            "confounded_with": list(self.confounded_with),
            "status": self.status,
            "score": None if self.score is None else self.score.as_dict(),
            "decided_on": self.decided_on or None,
            "decided_after": self.decided_after,
        }

    def numbers(self) -> str:
        """The effect in words, e.g. for the run record's ``excluded`` list."""
        label = TARGETS[self.target].label
        words = (
            f"{label} {_num(self.mean_with)} with it over {self.applied_runs} run(s), {_num(self.mean_without)} "
            f"without over {self.baseline_runs}; delta {_num(self.delta, signed=True)} "
            f"(always-valid interval {_span(self.interval)}; positive means better)"
        )
        if self.score is not None:
            words += f"; mean score delta {_num(self.score.delta, signed=True)} {_span(self.score.interval)}"
        return words


def _num(value: float | None, *, signed: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:+.3g}" if signed else f"{value:.3g}"


def _span(interval: tuple[float, float] | None) -> str:
    return "none" if interval is None else f"[{interval[0]:+.3g}, {interval[1]:+.3g}]"


def _measured(cells: Mapping[Cell, tuple[Tally, Tally]], target: str, alpha: float) -> Measured:
    """One measure from its cells, turned so that positive means better."""
    spec = TARGETS[target]
    n_with, n_without = sum(w.n for w, _ in cells.values()), sum(o.n for _, o in cells.values())
    mean_with = math.fsum(w.sums[-1] for w, _ in cells.values() if w.n) / n_with if n_with else None
    mean_without = math.fsum(o.sums[-1] for _, o in cells.values() if o.n) / n_without if n_without else None
    found = estimate(cells, floor=variance_floor(spec.step))
    if found is None:
        delta = None if mean_with is None or mean_without is None else mean_with - mean_without
        interval, paired = None, 0
    else:
        half = radius(found, alpha=alpha)
        delta, interval, paired = found.delta, (found.delta - half, found.delta + half), found.paired_questions
    if spec.lower_is_better and delta is not None:
        delta = -delta
        interval = None if interval is None else (-interval[1], -interval[0])
    return Measured(target, n_with, n_without, mean_with, mean_without, delta, interval, paired)


def status_of(own: Measured, score: Measured | None, runs: tuple[int, int]) -> tuple[str, str]:
    """The status from the measures (see the module docstring), and the target that decided it."""
    measures = [own] if score is None else [own, score]
    for verdict, status in (("worse", "retired"), ("better", "helpful")):
        decided = next((m for m in measures if m.verdict == verdict), None)
        if decided is not None:
            return status, decided.target
    if min(runs) < MIN_RUNS:
        return "measuring", ""
    return ("no-effect" if sum(runs) >= NO_EFFECT_RUNS else "active"), ""


def effect_of(
    key: str,
    domain: str,
    arms: Arms,
    *,
    text: str = "",
    confounded_with: Sequence[str] = (),
    entry: tuple[str, str] | None = None,
    alpha: float = ALPHA,
) -> LessonEffect:
    """The effect of ``key`` from its runs with and without it; ``entry``: the ``(stage,
    target)`` of a person's lesson, from its entry."""
    stage, target = entry if entry is not None else (stage_of(key), target_of(key))
    alone = target == PERSON_TARGET
    own = _measured(arms.target, target, alpha if alone else alpha * (1 - SCORE_SHARE))
    score = None if alone else _measured(arms.score, PERSON_TARGET, alpha * SCORE_SHARE)
    runs = arms.runs()
    status, decided_on = status_of(own, score, runs)
    return LessonEffect(
        key, stage, target, text, domain, runs[0], runs[1], own.mean_with, own.mean_without, own.delta,
        own.interval, status, "paired" if own.paired_questions else "unpaired", own.paired_questions,
        tuple(confounded_with), score, decided_on,
    )  # fmt: skip


# domain, key, file, arm, question, value, mean score, reason, trial probability, run time
Row = tuple[str, str, str, str, str, "float | None", "float | None", str, "float | None", str]


def _confounded(key: str, runs: Mapping[str, str], arms_by_run: Mapping[str, Mapping[str, str]]) -> list[str]:
    """The other keys in the same arm as ``key`` in every one of its ``runs`` (file -> arm)."""
    together: set[str] | None = None
    for name, arm in runs.items():
        same = {other for other, other_arm in arms_by_run[name].items() if other_arm == arm and other != key}
        together = same if together is None else together & same
        if not together:
            return []
    return sorted(together or ())


def covariates_of(key: str, runs: Iterable[str], given_by_run: Mapping[str, Collection[str]]) -> tuple[str, ...]:
    """The other lessons to adjust ``key``'s effect for: those given in some of its ``runs`` but not
    in all, at most :data:`MAX_COVARIATES`, the most often given first (ties by key)."""
    counts: dict[str, int] = defaultdict(int)
    names = list(runs)
    for name in names:
        for other in given_by_run.get(name, ()):
            if other != key:
                counts[other] += 1
    varying = [other for other, count in counts.items() if count < len(names)]
    return tuple(sorted(varying, key=lambda other: (-counts[other], other))[:MAX_COVARIATES])


def _arms(rows: Sequence[Row], covariates: tuple[str, ...], given_by_run: Mapping[str, Collection[str]]) -> Arms:
    arms = Arms(covariates)
    for _, _, name, arm, question, value, score, _, p, _ in rows:
        arms.add(arm, question, value, score=score, p=p, others=given_by_run.get(name, ()))
    return arms


def _decided_after(
    rows: Sequence[Row], found: LessonEffect, entry: tuple[str, str] | None, alpha: float, arms: Arms,
    given_by_run: Mapping[str, Collection[str]],
) -> int | None:  # fmt: skip
    """How many runs (both arms) the evidence first needed to reach ``found``'s decision,
    replaying ``rows`` (one key's, oldest first) into arms like ``arms``."""
    if found.status not in DECIDED:
        return None
    replay = Arms(arms.covariates)
    for _, key, name, arm, question, value, score, _, p, _ in rows:
        replay.add(arm, question, value, score=score, p=p, others=given_by_run.get(name, ()))
        runs = replay.runs()
        if min(runs) >= MIN_RUNS and effect_of(key, found.domain, replay, entry=entry, alpha=alpha).status == found.status:
            return sum(runs)
    return None


def _rows(
    index: CritiqueIndex, window: dict[str, Any], keys: list[str] | None, person: Mapping[str, tuple[str, str]]
) -> list[Row]:
    """The use rows that enter effects (their lesson's own trial), oldest first."""
    targets = {key: target for key, (_, target) in person.items()}
    rows = index.uses(keys, **window, targets=targets)
    return sorted((row for row in rows if in_trial(row[3], row[7])), key=lambda row: (row[9], row[2]))


def effects_in(
    index: CritiqueIndex,
    *,
    now: datetime,
    domain: str | None = None,
    keys: Iterable[str] | None = None,
    detail: bool = False,
    texts: Mapping[tuple[str, str], str] | None = None,
    person: Mapping[str, tuple[str, str]] | None = None,
    alpha: float = ALPHA,
) -> tuple[LessonEffect, ...]:
    """The effect of every lesson key (or of ``keys``) in ``domain`` (or every domain).

    ``detail``: also find ``confounded_with`` and ``decided_after``, and adjust for every other
    key (reads every key's uses, not only ``keys``'s).
    ``texts``: ``(domain, key) -> text`` to show with each effect (the text the lesson has when
    it is built now; never text read from a critique).
    ``person``: ``key -> (stage, target)`` of a person's lessons (see the module docstring).
    """
    person = person or {}
    latest = now + FUTURE_SLACK
    window = {"domain": domain, "future": stamp_of(latest), "latest": latest.timestamp()}
    wanted = None if keys is None else sorted(k for k in set(keys) if LESSON_KEY.match(k))
    rows = _rows(index, window, None if detail else wanted, person)
    chosen = None if wanted is None else set(wanted)
    by_key: dict[tuple[str, str], list[Row]] = defaultdict(list)
    arms_by_run: dict[str, dict[str, str]] = defaultdict(dict)
    for row in rows:
        row_domain, key, name, arm = row[:4]
        arms_by_run[name][key] = arm
        if not LESSON_KEY.match(key) or (chosen is not None and key not in chosen):
            continue
        if not is_person_key(key) or key in person:
            by_key[(row_domain, key)].append(row)
    given_by_run = {name: {k for k, arm in arms.items() if arm == "applied"} for name, arms in arms_by_run.items()}
    effects = []
    for (where, key), found in by_key.items():
        runs = {row[2]: row[3] for row in found}
        arms = _arms(found, covariates_of(key, runs, given_by_run), given_by_run)
        effect = effect_of(
            key, where, arms, text=(texts or {}).get((where, key), ""), entry=person.get(key), alpha=alpha,
            confounded_with=_confounded(key, runs, arms_by_run) if detail else (),
        )  # fmt: skip
        if detail:
            decided = _decided_after(found, effect, person.get(key), alpha, arms, given_by_run)
            effect = replace(effect, decided_after=decided)
        effects.append(effect)
    return tuple(sorted(effects, key=lambda e: (e.domain, STAGES.index(e.stage), e.key)))
