"""What a lesson's trial reads from the trial ledger, and decisions that stay made.

* :func:`use_rows` turns the ledger's rows into the uses that enter lessons' arms: the run was
  given the lesson by a trial draw (``p`` above 0; a lesson given by no draw, as in a ``memory ab``
  arm or with trials off, has no "without" arm to be compared with), or withheld it by its own
  trial draw; never a run of ``memory ab`` (on either side), a suspect critique, a run that
  could not read its memory, or a run not critiqued; a run whose plan a person gave or edited
  counts for judging lessons only. Runs before a person reinstated the lesson belong to its
  earlier trial and count no more.
* :func:`trial_runs` counts the runs of the lesson's domain since its trial began (its first run
  in the ledger, or its reinstatement): "run N" anywhere means the Nth run of the domain.
* :func:`settled` applies the decision recorded in the ledger: a ``retired`` lesson stays retired
  (until a person reinstates it) whatever later numbers say; a ``helpful`` one stays helpful
  unless harm retires it. A decision the numbers reach for the first time comes back as a
  :class:`~..store.trials.TrialEvent` to record, naming the run at which the evidence first
  reached it (replayed oldest first), the measure that decided it and its numbers.
* :func:`runs_to_decide` estimates how many more runs of the domain a decision needs at the
  current spread, were the current estimate the truth.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from ..store.files import FUTURE_SLACK, stamp_of
from ..store.index.rows import in_trial
from ..store.targets import is_person_key, stage_of, target_of
from ..store.trials import TrialEvent, TrialLedger, TrialState, trial_states
from ..store.trials.rows import TrialRow
from .estimate import Estimate
from .sequential import radius

__all__ = [
    "Row", "Look", "use_rows", "look_at", "confounded", "covariates_of", "trial_runs", "settled", "runs_to_decide",
    "MAX_MORE_RUNS", "MAX_COVARIATES",
]  # fmt: skip

# domain, key, run id, arm, question, value, mean score, reason, trial probability, run time
Row = tuple[str, str, str, str, str, "float | None", "float | None", str, "float | None", str]
MAX_COVARIATES = 6  # other lessons a lesson's effect is adjusted for, at most
MAX_MORE_RUNS = 10_000  # beyond this, "more than" is all that is said


def _counts(row: TrialRow, key: str, arm: str, reason: str, p: float | None, stage: str) -> bool:
    if not in_trial(arm, reason) or (arm == "applied" and p == 0):
        return False
    return not (row.plan_by_person and stage == "decompose")


def use_rows(
    ledger: TrialLedger, *, domain: str | None, future: str, latest: float, states: Mapping[tuple[str, str], TrialState],
    person: Mapping[str, tuple[str, str]], stages: Mapping[str, str],
) -> list[Row]:  # fmt: skip
    """Every use that enters a lesson's arms (see the module docstring), oldest run first; rows
    dated after ``future`` (run time) or ``latest`` (critique time) are left out. ``person``: a
    person's lesson's ``(stage, target)``; ``stages``: every built key's stage."""
    out: list[Row] = []
    targets: dict[str, str] = {}
    for row in ledger.ordered(domain):
        if not row.measured or row.stamp > future or (row.created or 0.0) > latest:
            continue
        for use in row.uses:
            entry = person.get(use.key)
            stage = entry[0] if entry is not None else stages.get(use.key, "")
            if not _counts(row, use.key, use.arm, use.reason, use.p, stage):
                continue
            if row.stamp <= states.get((row.domain, use.key), TrialState()).since:
                continue  # the lesson's earlier trial, before a person reinstated it
            target = entry[1] if entry is not None else targets.get(use.key) or targets.setdefault(use.key, target_of(use.key))
            out.append((row.domain, use.key, row.run, use.arm, row.question, row.value(target), row.mean,
                        use.reason, use.p, row.stamp))  # fmt: skip
    return out


def confounded(key: str, runs: Mapping[str, str], arms_by_run: Mapping[str, Mapping[str, str]]) -> list[str]:
    """The other keys in the same arm as ``key`` in every one of its ``runs`` (run -> arm)."""
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


@dataclass(frozen=True)
class Look:
    """What one look at the ledger reads: the uses that enter arms, each run's arms, each key's trial."""

    rows: list[Row]
    arms_by_run: dict[str, dict[str, str]]
    states: Mapping[tuple[str, str], TrialState]
    untried: set[tuple[str, str]]  # (domain, key) given by no trial draw (trials off): shown, in no arm


def look_at(ledger: TrialLedger, now: datetime, domain: str | None, person: Mapping[str, tuple[str, str]]) -> Look:
    latest = now + FUTURE_SLACK
    states = trial_states(ledger.events)
    keys = {use.key for row in ledger.ordered(domain) for use in row.uses}
    stages = {key: stage_of(key) for key in keys if not is_person_key(key)}
    rows = use_rows(ledger, domain=domain, future=stamp_of(latest), latest=latest.timestamp(), states=states,
                    person=person, stages=stages)  # fmt: skip
    arms_by_run: dict[str, dict[str, str]] = defaultdict(dict)
    for row in rows:
        arms_by_run[row[2]][row[1]] = row[3]
    untried = {(run.domain, use.key) for run in ledger.ordered(domain) if run.measured
               for use in run.uses if use.arm == "applied" and use.p == 0}  # fmt: skip
    return Look(rows, arms_by_run, states, untried)


def trial_runs(ledger: TrialLedger, domain: str, key: str, since: str) -> tuple[int, dict[str, int]]:
    """Runs of ``domain`` since ``key``'s trial began (its first run after ``since`` that was
    eligible for it), and every run's number in the domain."""
    numbers = ledger.numbers(domain)
    first = next(
        (numbers[row.run] for row in ledger.ordered(domain) if row.stamp > since and any(u.key == key for u in row.uses)),
        None,
    )
    return (0 if first is None else len(numbers) - first + 1), numbers


def _event(effect: Any, run: str, number: int | None, when: str) -> TrialEvent:
    """The decision ``effect`` (a LessonEffect) reached, with the numbers of the measure that decided it."""
    measured = effect.score if effect.decided_on == "mean_score" and effect.score is not None else None
    delta = measured.delta if measured is not None else effect.delta
    interval = measured.interval if measured is not None else effect.interval
    n_with = measured.n_with if measured is not None else effect.applied_runs
    n_without = measured.n_without if measured is not None else effect.baseline_runs
    return TrialEvent(
        effect.status, effect.domain, effect.key, when, run, number, effect.decided_on,
        None if delta is None else round(delta, 4), None if interval is None else (round(interval[0], 4), round(interval[1], 4)),
        n_with, n_without,
    )  # fmt: skip


def settled(
    effect: Any, state: TrialState, reached: tuple[str, int | None] | None, *, now: datetime
) -> tuple[Any, TrialEvent | None]:
    """``effect`` (a LessonEffect) with the decision recorded in ``state`` applied, and the event to record when the
    numbers reach a decision for the first time (``reached``: the run at which the evidence first
    reached it, and its number in the domain; None: not replayed)."""
    recorded = state.decision
    if recorded is not None and (recorded.event == "retired" or effect.status != "retired"):
        return replace(
            effect, status=recorded.event, decided_on=recorded.measure, decided_after=recorded.number,
            decided_at=recorded.at, more_runs=None,
        ), None  # fmt: skip
    if effect.status not in ("retired", "helpful"):
        return effect, None
    run, number = reached if reached is not None else ("", None)
    when = now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    event = _event(effect, run, number, when)
    return replace(effect, decided_after=number, decided_at=when, more_runs=None), event


def runs_to_decide(found: Estimate | None, alpha: float, share: float, lower_is_better: bool = False) -> int | None:
    """More runs of the domain until the always-valid interval around ``found``'s delta would
    exclude zero, were that delta the truth and the spread stay as it is; ``share``: the runs in
    both arms per run of the domain so far. None when it cannot be told (no estimate, a delta of
    zero, or more than :data:`MAX_MORE_RUNS`)."""
    del lower_is_better  # the sign does not change the distance to zero
    if found is None or found.delta == 0 or share <= 0 or found.n_with < 1 or found.n_without < 1:
        return None
    n = found.n_with + found.n_without
    spread = found.variance / (1 / found.n_with + 1 / found.n_without)  # one run's variance
    if radius(found, alpha=alpha) < abs(found.delta):
        return 0

    def decided(extra: int) -> bool:
        scale = (n + extra * share) / n
        w, o = found.n_with * scale, found.n_without * scale
        grown = Estimate(found.delta, spread * (1 / w + 1 / o), found.df * scale, math.ceil(w), math.ceil(o), 0)
        return radius(grown, alpha=alpha) < abs(found.delta)

    high = 1
    while not decided(high):
        high *= 2
        if high > MAX_MORE_RUNS:
            return None
    low = high // 2
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if decided(middle) else (middle, high)
    return high
