"""Lessons for a new run, drawn from the critiques of earlier runs in the same domain.

Selection (:func:`select_lessons`) takes the newest ``limit`` critiques that validate,
pass, match the domain and are younger than the TTL; with fewer than ``min_critiques``
there are no lessons at all. The files are found through the summary index
(:mod:`..store.index`, refreshed from the YAML on every call); the critiques lessons are drawn
from are then read again with the loader, so the YAML stays the truth. Every other file
is listed in ``excluded`` with its reason (expired, dated in the future, invalid, other
domain, failing, older than the newest ``limit``).

Lessons are built from those critiques' facts and applicable scores, one kind per stage
(:mod:`.planning` for decompose, :mod:`.judging` for relevance), written
only from templates with validated slots (:mod:`.text`), merged and settled
(:mod:`.settle`), then checked against their measured effect (:mod:`..effects.lesson_effects`):
a retired lesson is not given, and is listed in ``excluded`` with its numbers. At most
``max_lessons`` per stage. Critique free text never reaches a lesson, so never a prompt.

Safeguards: a control fraction of eligible runs goes without lessons (the baseline),
lessons are suspended for a domain whose adaptive runs score worse than its baseline
runs (see :mod:`..effects.stats`), and a mode-collapse warning is raised when recent scores stop
spreading. A baseline run (control, ``--no-lessons``, suspension) lists the keys it held
back in ``withheld``, so that effects can compare.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import NamedTuple

from ...domains import DOMAINS
from ...errors import ConfigError, InputError
from ...record.types import WithheldLesson
from ..effects.lesson_effects import LessonEffect, effects_in
from ..effects.stats import collapse_check, compare_adaptive
from ..store.critique_types import Critique
from ..store.files import FUTURE_SLACK, load_entry, stamp_of
from ..store.index import CritiqueIndex, IndexTrust, open_index
from .judging import judging_evidence
from .planning import planning_evidence
from .settle import cap_per_stage, settle
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
    "MAX_LESSONS",
    "MAX_WITHHELD",
]

MAX_TTL_DAYS = 36_500
MAX_WITHHELD = 20  # the critique file holds at most this many withheld keys


class _Run(NamedTuple):
    """What the suspension and collapse checks need of one critique, read from the index."""

    id: str
    model_version: str
    adaptive: bool
    mean_score: float


@dataclass
class _Scan:
    """What the critique files offer a run: eligible critiques, all runs in its domain, the rest."""

    eligible: list[Critique] = field(default_factory=list)
    in_domain: list[_Run] = field(default_factory=list)
    excluded: list[tuple[str, str]] = field(default_factory=list)


@dataclass(frozen=True)
class _Built:
    """The lessons a run would be given, the retired ones, and every lesson left out with why."""

    lessons: tuple[Lesson, ...] = ()
    retired: tuple[str, ...] = ()
    excluded: tuple[tuple[str, str], ...] = ()


def check_ttl(ttl_days: float) -> None:
    if (
        isinstance(ttl_days, bool)
        or not isinstance(ttl_days, int | float)
        or not 0 < ttl_days <= MAX_TTL_DAYS
    ):
        raise ConfigError(
            f"lesson_ttl_days must be a number above 0 and at most {MAX_TTL_DAYS}, not {ttl_days!r}"
        )


def _reread(index: CritiqueIndex, name: str, domain: str, now: datetime) -> Critique | str:
    """The critique in file ``name`` as the loader reads it now (the YAML is the truth), or why not."""
    loaded = load_entry(index.meta_dir / name, meta_dir=index.meta_dir, now=now)
    critique = loaded.critique
    if critique is None:
        return (
            f"invalid: {loaded.error}" if not (loaded.error or "").startswith("dated") else str(loaded.error)
        )
    if critique.query_domain != domain:
        return f"other domain ({critique.query_domain})"
    if not critique.overall_pass:
        return f"failing (mean {critique.mean_score:.2f})"
    if critique.suspect_reason:
        return f"suspect: {critique.suspect_reason}"
    return critique


def _window(now: datetime, ttl_days: float) -> dict[str, str | float]:
    """The index's filter for critiques a run at ``now`` may draw from: not expired, not in the future."""
    latest = now + FUTURE_SLACK
    return {"cutoff": stamp_of(now - timedelta(days=ttl_days)), "future": stamp_of(latest), "latest": latest.timestamp()}


def _scan(index: CritiqueIndex, domain: str, *, now: datetime, ttl_days: float, limit: int) -> _Scan:
    """Walk the files newest first: each is eligible, in the domain, or excluded with its reason."""
    scan = _Scan(
        excluded=[(p.name, "invalid: file name is not critique-<run id>.yaml") for p in index.last.misnamed]
    )
    standings = index.standings(domain, **_window(now, ttl_days), expired=f"expired (older than {ttl_days:g} days)")
    for name, reason, run_id, model, adaptive, mean, passed, available in standings:
        if reason is not None:
            scan.excluded.append((name, reason))
            continue
        if available:  # a run that could not read its memory is neither arm of the comparison
            scan.in_domain.append(_Run(run_id, model, bool(adaptive), float(mean or 0.0)))
        if not passed:
            scan.excluded.append((name, f"failing (mean {float(mean or 0.0):.2f})"))
        elif len(scan.eligible) >= limit:
            scan.excluded.append((name, f"older than the newest {limit} eligible critiques"))
        else:
            found = _reread(index, name, domain, now)
            if isinstance(found, str):
                scan.excluded.append((name, found))
            else:
                scan.eligible.append(found)
    return scan


def build_lessons(
    critiques: list[Critique] | tuple[Critique, ...],
) -> tuple[tuple[Lesson, ...], tuple[tuple[str, str], ...]]:
    """Every lesson the eligible ``critiques`` (newest first) show, settled and ranked within
    each stage (no limit, no effects yet), and ``(key, reason)`` for evidence left out."""
    settled = settle([*planning_evidence(critiques), *judging_evidence(critiques)])
    return settled.lessons, settled.excluded


def _build(
    index: CritiqueIndex, eligible: list[Critique], domain: str, now: datetime, max_lessons: int
) -> _Built:
    """Build, drop retired lessons (with their numbers), and keep ``max_lessons`` per stage."""
    lessons, left_out = build_lessons(eligible)
    if not lessons:
        return _Built(excluded=left_out)
    effects: dict[str, LessonEffect] = {
        e.key: e
        for e in effects_in(
            index, now=now, domain=domain, keys=[lesson.key for lesson in lessons], with_text=False
        )
    }
    retired = [lesson for lesson in lessons if lesson.key in effects and effects[lesson.key].retired]
    live = [lesson for lesson in lessons if lesson not in retired]
    chosen, over = cap_per_stage(live, max_lessons)
    excluded = (*left_out, *((r.key, f"retired: {effects[r.key].numbers()}") for r in retired), *over)
    return _Built(chosen, tuple(r.key for r in retired), excluded)


def _withheld(built: _Built, why: str) -> tuple[WithheldLesson, ...]:
    """What a baseline run holds back (``why``: control, no_lessons, suspended): what it would
    have been given, and the retired lessons (so that new baseline evidence can bring them back)."""
    held = [WithheldLesson(lesson.key, why) for lesson in built.lessons]
    held += [WithheldLesson(key, "retired") for key in built.retired]
    first: dict[str, WithheldLesson] = {}
    for lesson in held:
        first.setdefault(lesson.key, lesson)
    return tuple(first.values())[:MAX_WITHHELD]


@dataclass(frozen=True)
class SelectionRules:
    """How lessons are selected: the critiques that count, and how many lessons a stage gets."""

    now: datetime
    ttl_days: float
    limit: int
    min_critiques: int
    control_fraction: float
    force_control: bool
    max_lessons: int


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
    trust: IndexTrust | None = None,
) -> LessonSelection:
    """Choose the lessons for a run in ``domain`` at ``now`` (see the module docstring).

    ``trust``: the user's key and seals, which let the on-disk index be used (without them
    the index is built in memory). Never raises for a bad file; a meta folder that is a
    symlink leading out of its reports folder, or a ``ttl_days`` out of range, raises.
    """
    if domain not in DOMAINS:
        raise InputError(f"unknown domain {domain!r}: choose one of {', '.join(DOMAINS)}")
    check_ttl(ttl_days)
    rules = SelectionRules(now, ttl_days, limit, min_critiques, control_fraction, force_control, max_lessons)
    with open_index(Path(meta_dir), trust=trust) as index:
        return select_in(index, domain, rules, rng)


def candidate_domains(index: CritiqueIndex, rules: SelectionRules) -> list[str]:
    """The domains with enough eligible critiques to give lessons, the best-evidenced first
    (counted up to ``rules.limit``; ties keep the taxonomy's order). From the index alone."""
    counts = index.passing_by_domain(**_window(rules.now, rules.ttl_days))  # type: ignore[arg-type]
    enough = [d for d in DOMAINS if min(counts.get(d, 0), rules.limit) >= rules.min_critiques]
    return sorted(enough, key=lambda d: -min(counts[d], rules.limit))


def select_in(index: CritiqueIndex, domain: str, rules: SelectionRules, rng: random.Random) -> LessonSelection:
    """:func:`select_lessons` in an open ``index`` (``rules`` already checked)."""
    scan = _scan(index, domain, now=rules.now, ttl_days=rules.ttl_days, limit=rules.limit)
    enough = len(scan.eligible) >= rules.min_critiques
    built = _build(index, scan.eligible, domain, rules.now, rules.max_lessons) if enough else _Built()
    collapse = collapse_check(domain, scan.in_domain)  # type: ignore[arg-type]
    warnings = (collapse.warning,) if collapse.collapsed else ()
    considered = tuple(c.id for c in scan.eligible)
    excluded = tuple(scan.excluded) + built.excluded

    def outcome(reason: str, *, given: bool = False, why: str = "control") -> LessonSelection:
        lessons = built.lessons if given else ()
        withheld = () if given else _withheld(built, why)
        return LessonSelection(
            domain, lessons, bool(lessons), reason, considered, excluded, warnings, withheld
        )

    if rules.force_control:
        return outcome("control run (baseline): lessons turned off (--no-lessons)", why="no_lessons")
    if not enough:
        return outcome(
            f"no lessons: {len(scan.eligible)} eligible {domain} critique(s); {rules.min_critiques} are needed"
        )
    comparison = compare_adaptive(domain, scan.in_domain)  # type: ignore[arg-type]
    if comparison.suspended:
        return outcome(comparison.reason, why="suspended")
    if rules.control_fraction > 0 and rng.random() < rules.control_fraction:
        return outcome(
            f"control run (baseline): chosen at random (control fraction {rules.control_fraction:g})"
        )
    if not built.lessons:
        what = "every lesson is retired" if built.retired else "no recurring weakness"
        return outcome(f"no lessons: {what} in the {len(scan.eligible)} eligible {domain} critiques")
    return outcome(
        f"{len(built.lessons)} lesson(s) from {len(scan.eligible)} eligible {domain} critiques", given=True
    )


def preview_lessons(
    meta_dir: Path,
    domain: str,
    *,
    now: datetime,
    ttl_days: float,
    control_fraction: float,
    trust: IndexTrust | None = None,
) -> tuple[LessonSelection, str]:
    """The lessons a run in ``domain`` would get now, as if it were not a control run, and a
    note on how often runs are control runs (what ``memory lessons`` and the MCP tool show)."""
    selection = select_lessons(
        meta_dir, domain, now=now, ttl_days=ttl_days, control_fraction=0.0, rng=random.Random(0), trust=trust
    )
    note = (
        f"{control_fraction:.0%} of eligible runs are control runs and get no lessons"
        if control_fraction
        else "control runs are off"
    )
    return selection, note
