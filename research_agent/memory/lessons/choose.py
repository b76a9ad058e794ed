"""What one run is given, once its domain's lessons are built and measured.

Pure functions over what :mod:`.select` read from the index, so that the real selection and the
learning simulation (``bench/bench_learning.py``) decide by the same code:

* :func:`rank` drops retired lessons (recorded as withheld, reason ``retired``, and excluded with
  their decision in words: "retired on run 21: lowered the mean score by 0.45 ..."), ranks
  ``no-effect`` ones after the others, and keeps ``max_lessons`` per stage.
* :func:`choose` decides the run with its one whole-run draw ``draw`` (uniform in [0, 1)):
  ``--no-lessons``; too few critiques; a control run (``draw`` under the control fraction: the
  baseline for the adaptive-versus-baseline comparison); a suspended domain, whose runs go
  without lessons (reason ``suspended``) except about one in four (:data:`SUSPENDED_ADAPTIVE`)
  that stay adaptive, so that the comparison sees new evidence and the suspension can lift; no
  lesson left; else an adaptive run whose lessons each go through their own trial draw
  (:mod:`.trials`), at a probability that depends on their status.

A baseline run lists the keys it held back in ``withheld`` with its reason; per-lesson effects
leave those out of both arms (:mod:`..effects.lesson_effects`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from ...record.lessons import WithheldLesson
from ..effects.lesson_effects import LessonEffect, decision_words
from ..effects.stats import Comparison
from ..store.schema import STAGES
from .build.settle import cap_per_stage
from .trials import draw_trials
from .types import Lesson, LessonSelection

__all__ = ["Ranked", "RunDraw", "rank", "choose", "SUSPENDED_ADAPTIVE", "MAX_WITHHELD"]

MAX_WITHHELD = 20  # the critique file holds at most this many withheld keys
SUSPENDED_ADAPTIVE = 0.25  # the share of a suspended domain's runs that stay adaptive


@dataclass(frozen=True)
class Ranked:
    """The lessons a run would be given, the retired ones, every lesson left out with why, and
    each measured lesson's status."""

    lessons: tuple[Lesson, ...] = ()
    retired: tuple[str, ...] = ()
    excluded: tuple[tuple[str, str], ...] = ()
    statuses: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RunDraw:
    """How one run is decided: its whole-run ``draw`` in [0, 1), its trial ``seed`` (None: no
    trials), and the settings that bear on them."""

    draw: float
    seed: int | None
    control_fraction: float
    trial_probability: float
    force_control: bool = False


def rank(
    lessons: Sequence[Lesson], effects: Mapping[str, LessonEffect], max_lessons: int,
    excluded: Sequence[tuple[str, str]] = (),
) -> Ranked:  # fmt: skip
    """Drop retired lessons (with their numbers), rank no-effect ones last (stable otherwise),
    keep ``max_lessons`` per stage; ``excluded``: lessons already left out, kept first."""
    retired = [lesson for lesson in lessons if lesson.key in effects and effects[lesson.key].retired]
    live = [lesson for lesson in lessons if lesson not in retired]
    idle = {key for key, e in effects.items() if e.status == "no-effect"}
    live.sort(key=lambda lesson: (STAGES.index(lesson.stage), lesson.key in idle))
    chosen, over = cap_per_stage(live, max_lessons)
    left = (*excluded, *((r.key, decision_words(effects[r.key])) for r in retired), *over)
    statuses = {key: e.status for key, e in effects.items()}
    return Ranked(chosen, tuple(r.key for r in retired), left, statuses)


def _withheld(held: list[WithheldLesson], ranked: Ranked) -> tuple[WithheldLesson, ...]:
    """``held`` and the retired lessons (withheld in every run, in no effect's arm), each key
    once, at most :data:`MAX_WITHHELD`."""
    first: dict[str, WithheldLesson] = {}
    for lesson in [*held, *(WithheldLesson(key, "retired") for key in ranked.retired)]:
        first.setdefault(lesson.key, lesson)
    return tuple(first.values())[:MAX_WITHHELD]


def choose(
    base: LessonSelection, ranked: Ranked, run: RunDraw, *, comparison: Comparison, scarce: str, eligible: int
) -> LessonSelection:
    """The run's selection (see the module docstring). ``base``: the selection's explanations;
    ``scarce``: why the domain has too few critiques for built lessons ('' when it has enough);
    ``eligible``: how many it has."""
    domain = base.domain

    def baseline(reason: str, why: str = "control") -> LessonSelection:
        held = [WithheldLesson(lesson.key, why) for lesson in ranked.lessons]
        return replace(base, reason=reason, withheld=_withheld(held, ranked))

    if run.force_control:
        return baseline("control run (baseline): lessons turned off (--no-lessons)", "no_lessons")
    if scarce and not ranked.lessons:
        return baseline(scarce)
    if run.control_fraction > 0 and run.draw < run.control_fraction:
        return baseline(f"control run (baseline): chosen at random (control fraction {run.control_fraction:g})")
    if comparison.suspended and run.draw < 1 - SUSPENDED_ADAPTIVE:
        return baseline(comparison.reason, "suspended")
    if not ranked.lessons:
        what = "every lesson is retired" if ranked.retired else "no recurring weakness"
        return baseline(f"no lessons: {what} in the {eligible} eligible {domain} critiques")
    return _trial(base, ranked, run, eligible, kept=comparison.suspended)


def _trial(base: LessonSelection, ranked: Ranked, run: RunDraw, eligible: int, *, kept: bool) -> LessonSelection:
    """An adaptive run: each selected lesson withheld on its own for its trial, the rest given
    (``run.seed`` None: no trials). ``kept``: an adaptive run of a suspended domain."""
    probability = run.trial_probability if run.seed is not None else 0.0
    draw = draw_trials(ranked.lessons, seed=run.seed or 0, probability=probability, statuses=ranked.statuses)
    trial = f"; {len(draw.withheld)} withheld for their trial" if draw.withheld else ""
    reason = _given_reason(draw.given, eligible, base.domain) + trial
    if kept:
        reason += "; one of the runs kept adaptive while the domain's lessons are suspended"
    if not draw.given:
        reason = f"no lessons: every selected lesson was withheld for its trial ({len(draw.withheld)})"
    return replace(
        base, lessons=draw.given, adaptive=bool(draw.given), reason=reason,
        withheld=_withheld(list(draw.withheld), ranked), trial_seed=run.seed,
    )  # fmt: skip


def _given_reason(lessons: tuple[Lesson, ...], eligible: int, domain: str) -> str:
    """How many lessons a run was given, and from where: the person's own, built from critiques."""
    built = sum(1 for lesson in lessons if lesson.origin == "built" and not lesson.kept)
    kept = sum(1 for lesson in lessons if lesson.kept)
    mine = len(lessons) - built - kept
    parts = [
        *([f"{mine} lesson(s) of the person's own (lessons.yaml)"] if mine else []),
        *([f"{built} lesson(s) from {eligible} eligible {domain} critiques"] if built else []),
        *([f"{kept} kept for their undecided trial (the critiques behind them were removed)"] if kept else []),
    ]
    return " and ".join(parts) if parts else f"0 lesson(s) from {eligible} eligible {domain} critiques"
