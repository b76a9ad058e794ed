"""Lessons for a new run, drawn from the critiques of earlier runs in the same domain.

Selection (:func:`select_lessons`) reads the summary index (:mod:`..store.index.summary`, refreshed
from the YAML on every call): the critiques that may feed lessons are those that validate,
pass, match the domain, are not suspect and are younger than the TTL; with fewer than
``min_critiques`` there are no lessons at all. Each lesson is counted over its own window:
the newest ``limit`` of those critiques whose run was *not* given it (:mod:`.build.pool`), so a
lesson's own successes or failures never build it or write its numbers. The newest files
left out are listed in ``excluded`` with their reason (expired, dated in the future, invalid,
other domain, suspect, failing, older than the critiques drawn from); the rest are counted.

Lessons are built from those critiques' facts and applicable scores, one kind per stage
(:mod:`.build.planning` for decompose, :mod:`.build.judging` for relevance), written only from templates
with validated slots (:mod:`.build.text`), fitted to the run's setting (:mod:`.setting`: no lesson
whose target cannot move there), settled (:mod:`.build.settle`), then checked against their
measured effect (:mod:`..effects.lesson_effects`): a retired lesson is not given (and is
recorded as withheld, reason ``retired``, in neither arm of any effect), a ``no-effect`` lesson
ranks after the others. At most ``max_lessons`` per stage; then each selected lesson is
withheld on its own for its trial (:mod:`.trials`: more often while it is undecided, less once
it is helpful), its slot left empty. A built lesson whose trial is undecided (or that was called
helpful) stays offered after retention removed the critiques that built it, with the text the
trial ledger recorded (:mod:`.build.kept`), so that a small ``max_critiques`` cannot stall its trial. What the run is given is decided by :mod:`.choose`.
Critique free text never reaches a lesson, so never a prompt.

A person's lessons (:mod:`.person`: from the trusted ``lessons.yaml``) are eligible in their
domain and stage without waiting for critiques, take the stage's slots before the built ones
(an active one before every built one; a ``no-effect`` one after the active ones), and are
retired, held back and trialled exactly like them.

Safeguards: a control fraction of eligible runs goes without lessons (the baseline), lessons
are suspended for a domain whose adaptive runs score worse than its baseline runs beyond the
always-valid interval (see :mod:`..effects.stats`; about one run in four stays adaptive, so
that the suspension can lift), and a mode-collapse warning is raised when recent scores stop
spreading. A baseline run (control, ``--no-lessons``, suspension) lists the keys it held back
in ``withheld`` with its reason; per-lesson effects leave those runs out of both arms.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import NamedTuple, TypedDict

from ...domains import DOMAINS
from ...errors import ConfigError, InputError
from ..effects.lesson_effects import LessonEffect, effects_in
from ..effects.stats import collapse_check, compare_adaptive
from ..store.critique_types import Critique
from ..store.files import FUTURE_SLACK, stamp_of
from ..store.index.summary import CritiqueIndex, IndexTrust, open_index
from ..store.trials import TrialLedger, trial_states
from .build.judging import judging_evidence
from .build.kept import KEPT_STATUSES, kept_for_trial
from .build.planning import planning_evidence
from .build.pool import POOL_FACTOR, EvidencePool
from .build.settle import settle
from .choose import MAX_WITHHELD, Ranked, RunDraw, choose, rank
from .person import PersonLessons
from .setting import RunSetting
from .trials import HELPFUL_SHARE, new_seed
from .types import MAX_LESSONS, Lesson, LessonSelection

__all__ = [
    "Lesson",
    "LessonSelection",
    "select_lessons",
    "SelectionRules",
    "select_in",
    "candidate_domains",
    "check_ttl",
    "preview_lessons",
    "build_lessons",
    "file_exclusions",
    "evidence_pool",
    "compared_runs",
    "MAX_LESSONS",
    "MAX_WITHHELD",
    "MAX_LISTED",
]

MAX_TTL_DAYS = 36_500
MAX_LISTED = 100  # files left out that are listed one by one; the rest are counted
_NO_PERSON = PersonLessons()


class _Run(NamedTuple):
    """What the suspension and collapse checks need of one critique, read from the index."""

    id: str
    model_version: str
    adaptive: bool
    mean_score: float
    whole_run_baseline: bool


def compared_runs(ledger: TrialLedger, domain: str, rules: SelectionRules) -> list[_Run]:
    """The runs of ``domain`` the suspension and collapse checks compare, from the trial ledger:
    critiqued, not suspect, their memory readable, not an arm of ``memory ab``, in the window. An
    adaptive run given a lesson that has since been retired is left out: it tells of a set of
    lessons no run gets any more (this is how a suspension lifts, even once every lesson is retired)."""
    window = _window(rules)
    retired = {key for (where, key), state in trial_states(ledger.events).items()
               if where == domain and state.decision is not None and state.decision.event == "retired"}  # fmt: skip
    cutoff, future, latest = str(window["cutoff"]), str(window["future"]), float(window["latest"])
    return [
        _Run(row.run, row.model, row.adaptive, row.mean, row.whole_run_baseline)  # type: ignore[arg-type]  # measured rows have a mean
        for row in ledger.ordered(domain)
        if row.measured and cutoff <= row.stamp <= future and (row.created or 0.0) <= latest
        and not (retired and row.adaptive and row.given_keys & retired)
    ]


def check_ttl(ttl_days: float) -> None:
    if (
        isinstance(ttl_days, bool)
        or not isinstance(ttl_days, int | float)
        or not 0 < ttl_days <= MAX_TTL_DAYS
    ):
        raise ConfigError(
            f"lesson_ttl_days must be a number above 0 and at most {MAX_TTL_DAYS}, not {ttl_days!r}"
        )


@dataclass(frozen=True)
class SelectionRules:
    """How lessons are selected: the critiques that count, how many lessons a stage gets, how
    often each is withheld for its trial, and the run's setting (None: any setting)."""

    now: datetime
    ttl_days: float
    limit: int
    min_critiques: int
    control_fraction: float
    force_control: bool
    max_lessons: int
    trial_probability: float = 0.0
    setting: RunSetting | None = field(default=None, compare=False)


class _Window(TypedDict):
    cutoff: str
    future: str
    latest: float


def _window(rules: SelectionRules) -> _Window:
    """The index's filter for critiques a run at ``now`` may draw from: not expired, not in the future."""
    latest = rules.now + FUTURE_SLACK
    return {
        "cutoff": stamp_of(rules.now - timedelta(days=rules.ttl_days)),
        "future": stamp_of(latest),
        "latest": latest.timestamp(),
    }


def evidence_pool(index: CritiqueIndex, domain: str, rules: SelectionRules) -> tuple[EvidencePool, dict[str, str]]:
    """The critiques lessons may come from (with the keys that were on), and their file names by id."""
    window = _window(rules)
    found = index.pool(domain, **window, limit=rules.limit * POOL_FACTOR)
    on = index.last_keys(domain, future=window["future"], latest=window["latest"])
    pool = EvidencePool.of((c for _, c in found), limit=rules.limit, on=on)
    return pool, {c.id: name for name, c in found}


def file_exclusions(
    index: CritiqueIndex, domain: str, rules: SelectionRules, drawn: set[str]
) -> tuple[tuple[str, str], ...]:
    """Every file not drawn from (``drawn``: file names), the newest :data:`MAX_LISTED` with their
    reason, the others counted."""
    window = _window(rules)
    expired = f"expired (older than {rules.ttl_days:g} days)"
    out = [(p.name, "invalid: file name is not critique-<run id>.yaml") for p in index.last.misnamed]
    rows = index.standings(domain, **window, expired=expired, cap=MAX_LISTED)
    ledger = index.ledger()
    for name, reason, run_id, _model, _adaptive, mean, passed in rows:
        if name in drawn:
            continue
        if reason is None and not passed:
            row = ledger.rows.get(run_id)
            rejected = row is not None and row.review == "rejected"
            reason = "rejected by its own review" if rejected else f"failing (mean {float(mean or 0.0):.2f})"
        elif reason is None:
            reason = (
                f"not among the newest {rules.limit} passing critiques of the domain that each lesson is counted "
                "over (for each lesson, those whose run was not given it)"
            )
        out.append((name, reason))
    listed_drawn = sum(1 for row in rows if row[0] in drawn)
    rest = index.last.files - len(rows) - (len(drawn) - listed_drawn)
    if rest > 0:
        out.append((f"{rest} older file(s)", "not listed one by one (lessons come from the newest eligible critiques)"))
    return tuple(out)


def build_lessons(
    pool: EvidencePool | Sequence[Critique], setting: RunSetting | None = None
) -> tuple[tuple[Lesson, ...], tuple[tuple[str, str], ...]]:
    """Every lesson the ``pool`` (or these critiques, newest first, all in each lesson's window
    but those given it) shows, fitted to ``setting`` (None: any), settled and ranked within
    each stage (no limit, no effects yet), and ``(key, reason)`` for evidence left out."""
    if not isinstance(pool, EvidencePool):
        pool = EvidencePool.of(pool, limit=len(pool))
    evidence = [*planning_evidence(pool), *judging_evidence(pool)]
    unfit: list[tuple[str, str]] = []
    if setting is not None:
        evidence, unfit = setting.fit(evidence)
    settled = settle(evidence)
    return settled.lessons, (*unfit, *settled.excluded)


def _build(
    index: CritiqueIndex, pool: EvidencePool | None, domain: str, rules: SelectionRules, person: PersonLessons
) -> Ranked:
    """Build (the person's lessons first, then those ``pool`` shows; None: too few critiques
    for those; then those kept for their undecided trial, :mod:`.build.kept`), measure them, and
    rank them (:func:`.choose.rank`)."""
    built, left_out = build_lessons(pool, rules.setting) if pool is not None else ((), ())
    ledger = index.ledger()
    kept = kept_for_trial(
        ledger, domain, built={lesson.key for lesson in built}, cutoff=_window(rules)["cutoff"], setting=rules.setting
    )
    lessons = (*person.for_domain(domain), *built, *kept)
    if not lessons:
        return Ranked(excluded=left_out)
    keys = [lesson.key for lesson in lessons]
    found = effects_in(ledger, now=rules.now, domain=domain, keys=keys, person=person.stages_and_targets())
    effects: dict[str, LessonEffect] = {e.key: e for e in found}
    lessons = tuple(x for x in lessons if not x.kept or x.key not in effects or effects[x.key].status in KEPT_STATUSES)
    return rank(lessons, effects, rules.max_lessons, left_out)


def select_lessons(
    meta_dir: Path,
    domain: str,
    *,
    now: datetime,
    ttl_days: float = 30,
    limit: int = 10,
    min_critiques: int = 3,
    control_fraction: float = 0.2,
    rng: random.Random,
    force_control: bool = False,
    max_lessons: int = MAX_LESSONS,
    trial_probability: float = 0.0,
    setting: RunSetting | None = None,
    state_dir: Path | None = None,
) -> LessonSelection:
    """Choose the lessons for a run in ``domain`` at ``now`` (see the module docstring).

    ``state_dir``: the user state folder, where the trust of the person's ``lessons.yaml`` and
    the key that signs the index are kept; without it the person's lessons are not read and
    the index is built in memory. Never raises for a bad file; a meta folder that is a
    symlink leading out of its reports folder, or a ``ttl_days`` out of range, raises.
    """
    if domain not in DOMAINS:
        raise InputError(f"unknown domain {domain!r}: choose one of {', '.join(DOMAINS)}")
    check_ttl(ttl_days)
    rules = SelectionRules(
        now, ttl_days, limit, min_critiques, control_fraction, force_control, max_lessons, trial_probability, setting
    )
    person = PersonLessons.read(Path(meta_dir), state_dir) if state_dir is not None else _NO_PERSON
    trust = IndexTrust(state_dir) if state_dir is not None else None
    with open_index(Path(meta_dir), trust=trust) as index:
        return select_in(index, domain, rules, rng, person=person)


def candidate_domains(index: CritiqueIndex, rules: SelectionRules) -> list[str]:
    """The domains with enough eligible critiques to give lessons, the best-evidenced first
    (counted up to ``rules.limit``; ties keep the taxonomy's order). From the index alone."""
    counts = index.passing_by_domain(**_window(rules))
    enough = [d for d in DOMAINS if min(counts.get(d, 0), rules.limit) >= rules.min_critiques]
    return sorted(enough, key=lambda d: -min(counts[d], rules.limit))


def select_in(
    index: CritiqueIndex,
    domain: str,
    rules: SelectionRules,
    rng: random.Random,
    *,
    seed: int | None = None,
    explain: bool = True,
    person: PersonLessons = _NO_PERSON,
) -> LessonSelection:
    """:func:`select_lessons` in an open ``index`` (``rules`` already checked). ``seed``: the
    run's trial seed (drawn from ``rng`` when None). ``explain``: list the files left out.
    ``person``: the lessons of the person's trusted file, eligible without waiting for critiques."""
    pool, names = evidence_pool(index, domain, rules)
    runs = compared_runs(index.ledger(), domain, rules)
    enough = len(pool.critiques) >= rules.min_critiques
    built = _build(index, pool if enough else None, domain, rules, person)
    collapse = collapse_check(domain, runs)  # type: ignore[arg-type]  # a _Run has what it reads
    considered = pool.ids
    files = file_exclusions(index, domain, rules, {names[i] for i in considered}) if explain else ()
    base = LessonSelection(
        domain, (), False, "", considered, (*files, *built.excluded),
        (*person.warnings, *((collapse.warning,) if collapse.collapsed else ())),
    )  # fmt: skip
    draw = rng.random()  # the run's one whole-run draw
    if seed is None and rules.trial_probability > 0 and not rules.force_control:
        seed = new_seed(rng)
    run = RunDraw(draw, seed, rules.control_fraction, rules.trial_probability, rules.force_control)
    scarce = "" if enough else (
        f"no lessons: {len(pool.critiques)} eligible {domain} critique(s); {rules.min_critiques} are needed"
    )
    comparison = compare_adaptive(domain, runs)  # type: ignore[arg-type]  # a _Run has what it reads
    return choose(base, built, run, comparison=comparison, scarce=scarce, eligible=len(pool.critiques))


def preview_lessons(
    meta_dir: Path,
    domain: str,
    *,
    now: datetime,
    ttl_days: float,
    control_fraction: float,
    trial_probability: float = 0.0,
    state_dir: Path | None = None,
    setting: RunSetting | None = None,
) -> tuple[LessonSelection, str]:
    """The lessons a run in ``domain`` (in ``setting``; None: any) would get now, as if it were
    neither a control run nor drew any lesson for its trial, and a note on how often those
    happen (what ``memory lessons`` and the MCP tool show)."""
    selection = select_lessons(
        meta_dir, domain, now=now, ttl_days=ttl_days, control_fraction=0.0, rng=random.Random(0),
        state_dir=state_dir, setting=setting,
    )  # fmt: skip
    control = (
        f"{control_fraction:.0%} of eligible runs are control runs and get no lessons"
        if control_fraction
        else "control runs are off"
    )
    trial = (
        f"each lesson is withheld from {trial_probability:.0%} of the other runs for its trial "
        f"({trial_probability * HELPFUL_SHARE:.0%} once it is helpful)"
        if trial_probability
        else "trials are off"
    )
    shown = tuple(replace(lesson, p=None) for lesson in selection.lessons)  # no draw was made
    return replace(selection, lessons=shown, trial_seed=None), f"{control}; {trial}"
