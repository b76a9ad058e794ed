"""A seeded world of runs through the real selection and the real critique files.

Each run asks one of a few questions (each with a level of its own), selects its lessons with
:func:`research_agent.memory.lessons.select.select_lessons` (control runs, suspension, each
lesson's trial draw, all as shipped), and gets five scores of ``base + the question's level +
the worth of each lesson it was given + noise``, rounded and kept in 1-5. Its critique (tagged
so that the three planning lessons keep being built) is written as a file, so the next run's
selection and ``memory effects`` read it through the index like any other.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from research_agent.memory.lessons.select import select_lessons
from research_agent.memory.lessons.types import LessonSelection
from research_agent.memory.store.critique_types import Critique, LessonUse
from tests.support.memory import NOW, make_critique, put, state_in

LOW = "coverage:low-score"
COUNTER = "counterarguments:missing"
PRIMARY = "primary:evidence"
TAGS = ("low_coverage", "missing_counterarguments", "weak_primary_sources")  # build all three lessons


def _critique(n: int, question: int, scores: tuple[int, ...], selection: LessonSelection, start) -> Critique:
    base = make_critique(
        when=start + timedelta(minutes=10 * n), query=f"world question {question}", scores=scores, tags=TAGS,
    )  # fmt: skip
    given = tuple(LessonUse(x.text, key=x.key, stage=x.stage, p=x.p) for x in selection.lessons)
    return replace(base, adaptive=selection.adaptive, lessons_applied=given, lessons_withheld=selection.withheld)


def run_world(
    meta: Path, worth: Mapping[str, float], *, runs: int, seed: int, base: float = 4.0, noise: float = 0.8,
    questions: int = 6, question_sd: float = 0.4,
) -> list[LessonSelection]:  # fmt: skip
    """``runs`` runs of the world (see the module docstring); their selections, in order."""
    rng = random.Random(seed)
    levels = [rng.gauss(0.0, question_sd) for _ in range(questions)]
    start = NOW - timedelta(days=2)
    for n in range(4):  # the critiques the lessons are first built from
        put(meta, make_critique(when=start - timedelta(hours=n + 1), query=f"seed {n}", tags=TAGS))
    selections = []
    for n in range(runs):
        when = start + timedelta(minutes=10 * n)
        selection = select_lessons(
            meta, "technology", now=when + timedelta(minutes=1), rng=random.Random(rng.getrandbits(32)),
            control_fraction=0.2, trial_probability=0.5, state_dir=state_in(meta.parent),
        )  # fmt: skip
        question = rng.randrange(questions)
        level = base + levels[question] + sum(worth.get(x.key, 0.0) for x in selection.lessons)
        scores = tuple(min(5, max(1, round(level + rng.gauss(0.0, noise)))) for _ in range(5))
        put(meta, _critique(n, question, scores, selection, start))
        selections.append(selection)
    return selections
