"""Each lesson's effect: the runs given it against the runs that withheld it by its own trial draw.

The runs come from the trial ledger (:mod:`..store.trials`), which retention never deletes, so a
lesson's evidence is every run of its trial, not the window of critique files kept. For every
lesson key (per domain) the runs *with* it are the runs given it by its trial draw; the runs
*without* it are the runs that were eligible for it and withheld it by its **own** trial draw
(reason ``trial``), nothing else: a whole-run control, ``--no-lessons``, a suspended domain and a
retired lesson withhold every lesson at once (or on no draw at all), so counted as "without" they
would make the other lessons' presence differ between the two arms and lend this lesson their
effects. Runs of ``memory ab``, suspect critiques, runs that could not read their memory and, for
planning lessons, runs whose plan a person gave are in neither arm (:mod:`.decisions`). Because
each lesson's draw is independent of every other's, the other lessons are then given equally
often, on average, in both arms. The whole-run controls serve one comparison only: adaptive runs
against baseline runs, which suspends a domain (:mod:`.stats`).

Every lesson is measured twice: on its own *target* (:mod:`..store.targets`; a run where it does
not apply is left out) and on the critique's *mean score*, whatever its target (once, for a lesson
whose target is the mean score). Each measure is estimated by :func:`.estimate.estimate`: paired
by question wherever both arms share questions, only between runs drawn at the same trial
probability, and adjusted for the other lessons given beside it (:func:`.decisions.covariates_of`).
Its interval is the always-valid one of :mod:`.sequential`, the error budget ``ALPHA`` shared
between the two measures (:data:`SCORE_SHARE` of it to the mean score, the rest to the target), so
that a lesson that does nothing is retired or called helpful, at any of the looks ever taken, in
at most ``ALPHA`` of histories. Signs are turned so that positive always means better.

Status (:func:`status_of`), once both arms have :data:`MIN_RUNS` runs: ``retired`` when either
measure's interval lies wholly below zero (harm to the mean score retires a lesson whatever its
target says); ``helpful`` when one lies wholly above zero and neither below; else ``active``, and
``no-effect`` once :data:`NO_EFFECT_RUNS` runs of its domain have passed since its trial began:
whatever it does is too small to see (kept, but ranked after the others for a slot). Before that,
``measuring``. A decision is recorded in the ledger the first time a look reaches it, with the run
of the domain at which the evidence first did (``decided_after``: "run N" is the Nth run of the
domain) and the measure that decided it; later looks continue the same sequence and the decision
stays made (:func:`.decisions.settled`) until a person reinstates the lesson, which starts a new
trial. ``more_runs``: how many more runs of the domain an undecided lesson needs at the current
spread (:func:`.decisions.runs_to_decide`).

``confounded_with``: the other keys that were never apart from this one in its evidence. Their
effects cannot be told apart from its own; it is empty once trials have separated them.

A person's lesson (``user:``, ``approved:``) is measured only with its entry at hand
(``person``: its stage and target, from the trusted ``lessons.yaml``); without one it is left out.
"""

from __future__ import annotations

import contextlib
import math
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Literal, cast

from ...errors import StorageError
from ...shapes import Plain, shape
from ..store.schema import LESSON_KEY, STAGES
from ..store.targets import PERSON_TARGET, TARGETS, is_person_key, stage_of, target_of
from ..store.trials import TrialEvent, TrialLedger, TrialState
from .decisions import Look, Row, confounded, covariates_of, look_at, runs_to_decide, settled, trial_runs
from .estimate import Arms, Cell, Estimate, Tally, estimate
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
    "measure_cells",
    "decision_words",
    "status_of",
    "effects_in",
]

MIN_RUNS = 5  # runs in each arm before any decision
NO_EFFECT_RUNS = 40  # runs in both arms together from which an undecided lesson has no effect worth seeing
SCORE_SHARE = 0.75  # of the error budget, what the mean-score check gets (the measure every lesson shares)
LessonStatus = Literal["measuring", "active", "helpful", "no-effect", "retired"]
STATUSES: tuple[LessonStatus, ...] = ("measuring", "active", "helpful", "no-effect", "retired")
DECIDED: tuple[LessonStatus, ...] = ("helpful", "retired")
_FOUR = shape(digits=4)  # means, differences and intervals are written to 4 places
_NULL_IF_EMPTY = shape(none_if_empty=True)


@dataclass(frozen=True)
class Measured:
    """One measure of one lesson: a target's means in each arm and the signed difference with
    its always-valid interval (None while it cannot be estimated). Written (:func:`~research_agent.shapes.plain`)
    with each arm's runs and the questions paired first, numbers to 4 places."""

    n_with: int
    n_without: int
    paired_questions: int = field(default=0, kw_only=True)  # keyword-only: declared here for the key order
    target: str
    mean_with: float | None = field(metadata=_FOUR)
    mean_without: float | None = field(metadata=_FOUR)
    delta: float | None = field(metadata=_FOUR)
    interval: tuple[float, float] | None = field(metadata=_FOUR)
    # before signs were turned; never written
    found: Estimate | None = field(default=None, compare=False, repr=False, kw_only=True, metadata=shape(omit=True))

    @property
    def verdict(self) -> str | None:
        """``better`` or ``worse`` when both arms are big enough and the interval excludes zero."""
        if self.interval is None or min(self.n_with, self.n_without) < MIN_RUNS:
            return None
        return "better" if self.interval[0] > 0 else "worse" if self.interval[1] < 0 else None


@dataclass(frozen=True)
class LessonEffect(Plain):
    """One lesson key's measured effect in one domain (see the module docstring): the numbers
    of its own target at the top level, its mean-score check in ``score`` (None when its target
    is the mean score). Its plain form (``as_dict``) is the ``memory effects --json`` object and
    the MCP tool's: numbers to 4 places, a text not set written as null."""

    key: str
    stage: str
    target: str
    text: str
    domain: str
    applied_runs: int
    baseline_runs: int
    mean_with: float | None = field(metadata=_FOUR)
    mean_without: float | None = field(metadata=_FOUR)
    delta: float | None = field(metadata=_FOUR)
    interval: tuple[float, float] | None = field(metadata=_FOUR)
    method: Literal["paired", "unpaired"] = "unpaired"
    paired_questions: int = 0
    confounded_with: tuple[str, ...] = ()
    status: LessonStatus = field(kw_only=True)  # keyword-only: declared here for the key order
    # its mean-score check, without the runs (they are the lesson's own)
    score: Measured | None = field(default=None, metadata=shape(without=("n_with", "n_without", "paired_questions")))
    # the target whose interval decided it ('' while undecided)
    decided_on: str = field(default="", metadata=_NULL_IF_EMPTY)
    decided_after: int | None = None  # the run of the domain at which the evidence first reached the decision
    decided_at: str = field(default="", metadata=_NULL_IF_EMPTY)  # when the decision was recorded (UTC)
    trial_runs: int = 0  # runs of the domain since its trial began
    more_runs: int | None = None  # runs of the domain a decision still needs at the current spread (estimate)
    # when a person reinstated it, starting this trial ('' for its first trial)
    reinstated: str = field(default="", metadata=_NULL_IF_EMPTY)
    # the decision as the ledger records it (not written: decided_on, decided_after and decided_at say it)
    decision: TrialEvent | None = field(default=None, compare=False, metadata=shape(omit=True))
    # ground truth where eval runs graded some of its runs (:mod:`.truth`): its effect on fact recall over
    # the same arms, and how the critic's mean score tracks fact recall in its domain (Tracking.as_dict)
    recall: Measured | None = field(default=None, metadata=shape(key="fact_recall"))
    critic: Mapping[str, Any] | None = field(default=None, metadata=shape(key="critic_tracking"))

    @property
    def retired(self) -> bool:
        return self.status == "retired"


def decision_words(effect: LessonEffect) -> str:
    """A decided lesson's decision in words, from the evidence recorded when it was taken, e.g.
    "retired on run 21: lowered the mean score by 0.45 (always-valid interval [-0.80, -0.10])";
    '' while undecided."""
    if effect.status not in DECIDED:
        return ""
    event = effect.decision
    measure = effect.decided_on or (event.measure if event is not None else "") or effect.target
    spec = TARGETS.get(measure, TARGETS[PERSON_TARGET])
    delta: float | None
    if event is not None and event.delta is not None:
        delta, interval = event.delta, event.interval
    elif measure == PERSON_TARGET and effect.score is not None:
        delta, interval = effect.score.delta, effect.score.interval
    else:
        delta, interval = effect.delta, effect.interval
    when = f" on run {effect.decided_after}" if effect.decided_after is not None else ""
    if delta is None:
        return f"{effect.status}{when}, on {spec.label}"
    raised = (delta > 0) != spec.lower_is_better
    return (
        f"{effect.status}{when}: {'raised' if raised else 'lowered'} the {spec.label} by {abs(delta):.2f} "
        f"(always-valid interval {_span(interval)}, + means better)"
    )


def _span(interval: tuple[float, float] | None) -> str:
    return "none" if interval is None else f"[{interval[0]:+.2f}, {interval[1]:+.2f}]"


def measure_cells(
    cells: Mapping[Cell, tuple[Tally, Tally]], target: str, alpha: float, *, step: float = 1.0
) -> Measured:
    """One measure from its cells, turned so that positive means better; ``step``: for a measure
    that is no lesson target (fact recall), the steps its values move in (higher is better)."""
    spec = TARGETS.get(target) or replace(TARGETS[PERSON_TARGET], step=step, lower_is_better=False)
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
    return Measured(n_with, n_without, target, mean_with, mean_without, delta, interval, paired_questions=paired,
                    found=found)  # fmt: skip


def status_of(own: Measured, score: Measured | None, runs: tuple[int, int], trial_runs: int | None = None) -> tuple[LessonStatus, str]:
    """The status from the measures (see the module docstring), and the target that decided it;
    ``trial_runs``: the domain's runs since the lesson's trial began (None: both arms' runs)."""
    measures = [own] if score is None else [own, score]
    for verdict, status in (("worse", "retired"), ("better", "helpful")):
        decided = next((m for m in measures if m.verdict == verdict), None)
        if decided is not None:
            return cast(LessonStatus, status), decided.target
    if min(runs) < MIN_RUNS:
        return "measuring", ""
    seen = sum(runs) if trial_runs is None else trial_runs
    return ("no-effect" if seen >= NO_EFFECT_RUNS else "active"), ""


def effect_of(
    key: str,
    domain: str,
    arms: Arms,
    *,
    text: str = "",
    confounded_with: Sequence[str] = (),
    entry: tuple[str, str] | None = None,
    alpha: float = ALPHA,
    trial_runs: int | None = None,
    more: bool = False,
) -> LessonEffect:
    """The effect of ``key`` from its runs with and without it; ``entry``: the ``(stage,
    target)`` of a person's lesson, from its entry; ``trial_runs``: the domain's runs since its
    trial began (None: both arms' runs stand for them); ``more``: estimate ``more_runs`` too."""
    stage, target = entry if entry is not None else (stage_of(key), target_of(key))
    alone = target == PERSON_TARGET
    own = measure_cells(arms.target, target, alpha if alone else alpha * (1 - SCORE_SHARE))
    score = None if alone else measure_cells(arms.score, PERSON_TARGET, alpha * SCORE_SHARE)
    runs = arms.runs()
    status, decided_on = status_of(own, score, runs, trial_runs)
    more_runs = None if status in DECIDED or not more else _more_runs(own, score, alpha, alone, sum(runs), trial_runs)
    return LessonEffect(
        key, stage, target, text, domain, runs[0], runs[1], own.mean_with, own.mean_without, own.delta,
        own.interval, "paired" if own.paired_questions else "unpaired", own.paired_questions,
        tuple(confounded_with), status=status, score=score, decided_on=decided_on,
        trial_runs=sum(runs) if trial_runs is None else trial_runs, more_runs=more_runs,
    )  # fmt: skip


def _more_runs(
    own: Measured, score: Measured | None, alpha: float, alone: bool, arm_runs: int, trial_runs: int | None
) -> int | None:  # fmt: skip
    """The fewest more runs of the domain either measure needs to decide (:func:`.decisions.runs_to_decide`),
    and at least those that bring both arms to :data:`MIN_RUNS`."""
    share = arm_runs / trial_runs if trial_runs else 1.0
    needs = [runs_to_decide(own.found, alpha if alone else alpha * (1 - SCORE_SHARE), share)]
    if score is not None:
        needs.append(runs_to_decide(score.found, alpha * SCORE_SHARE, share))
    found = [n for n in needs if n is not None]
    if not found:
        return None
    fewest = min(own.n_with, own.n_without) if score is None else min(score.n_with, score.n_without)
    floor = math.ceil((MIN_RUNS - fewest) * (trial_runs or arm_runs) / fewest) if 0 < fewest < MIN_RUNS else 0
    return max(min(found), floor)


def _arms(rows: Sequence[Row], covariates: tuple[str, ...], given_by_run: Mapping[str, Collection[str]]) -> Arms:
    arms = Arms(covariates)
    for _, _, name, arm, question, value, score, _, p, _ in rows:
        arms.add(arm, question, value, score=score, p=p, others=given_by_run.get(name, ()))
    return arms


def _reached(
    rows: Sequence[Row], found: LessonEffect, entry: tuple[str, str] | None, alpha: float, arms: Arms,
    given_by_run: Mapping[str, Collection[str]],
) -> str:  # fmt: skip
    """The run at which the evidence first reached ``found``'s decision, replaying ``rows`` (one
    key's, oldest first) into arms like ``arms`` ('' when the replay does not reach it)."""
    replay = Arms(arms.covariates)
    for _, key, name, arm, question, value, score, _, p, _ in rows:
        replay.add(arm, question, value, score=score, p=p, others=given_by_run.get(name, ()))
        runs = replay.runs()
        if min(runs) >= MIN_RUNS and effect_of(key, found.domain, replay, entry=entry, alpha=alpha).status == found.status:
            return name
    return ""


def effects_in(
    ledger: TrialLedger,
    *,
    now: datetime,
    domain: str | None = None,
    keys: Iterable[str] | None = None,
    detail: bool = False,
    texts: Mapping[tuple[str, str], str] | None = None,
    person: Mapping[str, tuple[str, str]] | None = None,
    alpha: float = ALPHA,
    record: bool = True,
) -> tuple[LessonEffect, ...]:
    """The effect of every lesson key (or of ``keys``) in ``domain`` (or every domain), read from
    the trial ledger, with the decisions it records applied (:func:`.decisions.settled`).

    ``detail``: also find ``confounded_with`` and ``more_runs``. ``texts``: ``(domain, key) -> text`` to show with
    each effect (the text the lesson has when it is built now; never text read from a critique).
    ``person``: ``key -> (stage, target)`` of a person's lessons (see the module docstring).
    ``record``: record in the ledger each decision the numbers reach for the first time (it then
    stays made); where the ledger cannot be written it is kept for this look only.
    """
    person = person or {}
    look = look_at(ledger, now, domain, person)
    chosen = None if keys is None else {k for k in keys if LESSON_KEY.match(k)}
    by_key: dict[tuple[str, str], list[Row]] = defaultdict(list)
    for row in look.rows:
        if (chosen is None or row[1] in chosen) and (not is_person_key(row[1]) or row[1] in person):
            by_key[(row[0], row[1])].append(row)
    for (where, key), state in look.states.items():  # a decision stands even with no run left to show it
        if state.decision is not None and (domain is None or where == domain) and (chosen is None or key in chosen):
            by_key.setdefault((where, key), [])
    for where, key in look.untried:  # given with trials off: shown, with no run in either arm
        if chosen is None or key in chosen:
            by_key.setdefault((where, key), [])
    given_by_run = {run: {k for k, arm in arms.items() if arm == "applied"} for run, arms in look.arms_by_run.items()}
    effects, events = [], []
    for (where, key), found in by_key.items():
        if is_person_key(key) and key not in person:
            continue
        effect, event = _effect(ledger, look, where, key, found, given_by_run, texts, person.get(key), alpha, detail, now)
        effects.append(effect)
        if event is not None:
            events.append(event)
    if record and events:
        with contextlib.suppress(StorageError):  # unwritable: decided again at the next look
            ledger.add(events)
    return tuple(sorted(effects, key=lambda e: (e.domain, STAGES.index(e.stage), e.key)))


def _effect(
    ledger: TrialLedger, look: Look, where: str, key: str, found: list[Row], given_by_run: Mapping[str, set[str]],
    texts: Mapping[tuple[str, str], str] | None, entry: tuple[str, str] | None, alpha: float, detail: bool,
    now: datetime,
) -> tuple[LessonEffect, TrialEvent | None]:  # fmt: skip
    """One key's effect in one domain, its recorded decision applied, and a new decision to record."""
    state = look.states.get((where, key), TrialState())
    runs = {row[2]: row[3] for row in found}
    arms = _arms(found, covariates_of(key, runs, given_by_run), given_by_run)
    seen, numbers = trial_runs(ledger, where, key, state.since)
    effect = effect_of(
        key, where, arms, text=(texts or {}).get((where, key), ""), entry=entry, alpha=alpha, trial_runs=seen,
        confounded_with=confounded(key, runs, look.arms_by_run) if detail else (), more=detail,
    )  # fmt: skip
    reached = None
    if effect.status in DECIDED and (state.decision is None or state.decision.event != effect.status):
        run = _reached(found, effect, entry, alpha, arms, given_by_run)
        reached = (run, numbers.get(run))
    effect, event = settled(effect, state, reached, now=now)
    reinstated = state.reinstated.at if state.reinstated is not None else ""
    return replace(effect, reinstated=reinstated, decision=event or state.decision), event
