"""Every lesson its own controlled trial: which of a run's selected lessons it is given.

After selection has chosen a run's lessons (at most a few per stage), each one is withheld on
its own with probability ``probability`` (the ``trial_probability`` setting, 0.25 by
default): the draw for a lesson comes from a ``random.Random`` seeded with the run's recorded
seed and the lesson's key, so it is independent of every other lesson's, reproducible from
the run record, and the same whichever lessons sit beside it. A withheld lesson's slot is not
refilled: a lesson moved up into it would be given only when another was withheld, which
would confound the two. Because each lesson is given or withheld independently, the runs that
were given it and the runs that were eligible and withheld it differ, on average, only in it
(:mod:`research_agent.memory.effects.lesson_effects`).

:func:`draw_trials` is the one seam: it takes any lessons (built from templates, or written by
a person, with their own stage and target) and returns those given and those withheld, with
the reason ``trial``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from ...record.types import WithheldLesson
from .types import Lesson

__all__ = ["TrialDraw", "draw_trials", "withheld_by_trial", "new_seed", "DEFAULT_TRIAL_PROBABILITY"]

DEFAULT_TRIAL_PROBABILITY = 0.25


@dataclass(frozen=True)
class TrialDraw:
    """The lessons a run is given, and those withheld for the trial (reason ``trial``)."""

    given: tuple[Lesson, ...]
    withheld: tuple[WithheldLesson, ...]


def new_seed(rng: random.Random) -> int:
    """A run's trial seed (recorded in its run record), from the run's random source."""
    return rng.getrandbits(48)


def withheld_by_trial(key: str, *, seed: int, probability: float) -> bool:
    """Whether the trial of run ``seed`` withholds lesson ``key``."""
    return probability > 0 and random.Random(f"{seed}:{key}").random() < probability


def draw_trials(lessons: Sequence[Lesson], *, seed: int, probability: float) -> TrialDraw:
    """Withhold each of ``lessons`` independently with ``probability``; slots are not refilled."""
    given: list[Lesson] = []
    withheld: list[WithheldLesson] = []
    for lesson in lessons:
        if withheld_by_trial(lesson.key, seed=seed, probability=probability):
            withheld.append(WithheldLesson(lesson.key, "trial"))
        else:
            given.append(lesson)
    return TrialDraw(tuple(given), tuple(withheld))
