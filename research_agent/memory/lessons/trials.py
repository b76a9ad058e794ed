"""Every lesson its own controlled trial: which of a run's selected lessons it is given.

After selection has chosen a run's lessons (at most a few per stage), each one is withheld on
its own with its probability ``p``: the ``trial_probability`` setting (0.5 by default, the most
informative split) while its effect is undecided, and :data:`HELPFUL_SHARE` of that once it
has proven ``helpful`` (it is still watched, but mostly given). The draw for a lesson comes
from a ``random.Random`` seeded with the run's recorded seed and the lesson's key, so it is
independent of every other lesson's, reproducible from the run record (which keeps each
lesson's ``p`` beside it), and the same whichever lessons sit beside it. A withheld lesson's
slot is not refilled: a lesson moved up into it would be given only when another was
withheld, which would confound the two. Because each lesson is given or withheld
independently, the runs that were given it and the runs that withheld it by its own draw
differ, on average, only in it (:mod:`research_agent.memory.effects.lesson_effects`).

:func:`draw_trials` is the one seam: it takes any lessons (built from templates, or written by
a person, with their own stage and target) and returns those given and those withheld, with
the reason ``trial``, each carrying its ``p``.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from ...record.lessons import WithheldLesson
from .types import Lesson

__all__ = [
    "TrialDraw",
    "draw_trials",
    "withheld_by_trial",
    "trial_probability",
    "new_seed",
    "DEFAULT_TRIAL_PROBABILITY",
    "HELPFUL_SHARE",
]

DEFAULT_TRIAL_PROBABILITY = 0.5
HELPFUL_SHARE = 0.2  # a helpful lesson is withheld this share as often as an undecided one


@dataclass(frozen=True)
class TrialDraw:
    """The lessons a run is given, and those withheld for the trial (reason ``trial``)."""

    given: tuple[Lesson, ...]
    withheld: tuple[WithheldLesson, ...]


def new_seed(rng: random.Random) -> int:
    """A run's trial seed (recorded in its run record), from the run's random source."""
    return rng.getrandbits(48)


def trial_probability(status: str | None, probability: float) -> float:
    """How often a lesson of ``status`` is withheld for its trial, with ``probability`` the setting."""
    return probability * HELPFUL_SHARE if status == "helpful" else probability


def withheld_by_trial(key: str, *, seed: int, probability: float) -> bool:
    """Whether the trial of run ``seed`` withholds lesson ``key``."""
    return probability > 0 and random.Random(f"{seed}:{key}").random() < probability


def draw_trials(
    lessons: Sequence[Lesson], *, seed: int, probability: float, statuses: Mapping[str, str] | None = None
) -> TrialDraw:
    """Withhold each of ``lessons`` independently with its probability (``probability``, or a
    share of it for a lesson ``statuses`` calls helpful); slots are not refilled. Every lesson
    carries its ``p`` (0 when trials are off: it was given by no draw, and enters no comparison)."""
    given: list[Lesson] = []
    withheld: list[WithheldLesson] = []
    for lesson in lessons:
        p = trial_probability((statuses or {}).get(lesson.key), probability)
        if withheld_by_trial(lesson.key, seed=seed, probability=p):
            withheld.append(WithheldLesson(lesson.key, "trial", p))
        else:
            given.append(replace(lesson, p=p))
    return TrialDraw(tuple(given), tuple(withheld))
