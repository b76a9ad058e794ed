"""Learning that cannot fool itself (issue 30): a seeded simulation of lesson trials.

Drives the project's own code through synthetic worlds, run after run:

* what a run is given: :func:`research_agent.memory.lessons.choose.rank` and ``choose`` (the
  control draw, a suspended domain's runs, each lesson's trial draw at the probability its
  status calls for, :mod:`research_agent.memory.lessons.trials`);
* which runs enter a lesson's arms: the critique's use rows
  (:func:`research_agent.memory.store.index.rows.use_rows`, ``in_trial``), made from a real
  :class:`~research_agent.memory.store.critique_types.Critique`;
* each lesson's effect and status: :func:`research_agent.memory.effects.lesson_effects.effect_of`
  (paired by question, adjusted for the other lessons given beside it, the always-valid
  interval, the mean-score check);
* the suspension: :func:`research_agent.memory.effects.stats.compare_adaptive`.

Only the index (SQLite) and the YAML files are left out: they store what this feeds in directly
(``tests/test_learning_simulation.py`` checks that a world run through real files decides alike).

A world: one domain, a pool of 12 questions whose levels differ (offset ~ N(0, 0.5)), three
planning lessons. Each run asks a question drawn at random; each of its five scores is
``clip(round(3 + offset + the effects of the lessons it was given + N(0, 0.8)), 1, 5)``.
Settings as shipped: control fraction 0.2, trial probability 0.5 (a fifth of it once helpful).

Printed: how often a lesson that does nothing is retired or called helpful within 200 runs of
its domain (alone, and beside a lesson worth -1; the goal is at most 5%), its estimate's bias
beside the -1 neighbour (goal within 0.05), how often a -1 lesson is retired and a +1 lesson
called helpful within 40 runs (goal at least 90%), the median runs to each decision, and the
-0.5 case. Each rate comes with its 95% Wilson interval over the histories simulated.

    .venv/bin/python bench/bench_learning.py [--histories 200] [--seed 30]
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from research_agent.ids import make_run_id  # noqa: E402
from research_agent.memory.effects.lesson_effects import Arms, LessonEffect, effect_of  # noqa: E402
from research_agent.memory.effects.stats import compare_adaptive  # noqa: E402
from research_agent.memory.lessons.choose import RunDraw, choose, rank  # noqa: E402
from research_agent.memory.lessons.types import MAX_LESSONS, Lesson, LessonSelection  # noqa: E402
from research_agent.memory.store.critique_types import Critique, LessonUse, Scores  # noqa: E402
from research_agent.memory.store.index.rows import in_trial, use_rows  # noqa: E402
from research_agent.memory.store.targets import stage_of, target_of  # noqa: E402

DOMAIN = "technology"
KEYS = ("coverage:low-score", "counterarguments:missing", "primary:evidence")
QUESTIONS = 12
QUESTION_SD = 0.5
NOISE_SD = 0.8
BASE = 3.0
CONTROL_FRACTION = 0.2
TRIAL_PROBABILITY = 0.5
START = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass
class Track:
    """One lesson in one history: when it was first retired or called helpful, and its last effect."""

    retired: int | None = None
    helpful: int | None = None
    last: LessonEffect | None = None

    def see(self, runs: int, effect: LessonEffect) -> None:
        self.last = effect
        if effect.status == "retired" and self.retired is None:
            self.retired = runs
        if effect.status == "helpful" and self.helpful is None:
            self.helpful = runs


@dataclass
class World:
    """A domain whose three lessons are worth ``effects`` on every score."""

    name: str
    effects: tuple[float, ...]
    runs: int
    tracks: list[list[Track]] = field(default_factory=list)  # per history, per lesson
    suspended: int = 0  # histories in which the domain was ever suspended


def _critique(n: int, question: int, scores: list[int], selection: LessonSelection) -> Critique:
    when = START + timedelta(minutes=n)
    query = f"question {question}"
    values = Scores(*scores)
    run_id = make_run_id(query, when)
    return Critique(
        id=run_id, query=query, query_domain=DOMAIN, mode="standard",
        timestamp=when.strftime("%Y-%m-%dT%H:%M:%S.%fZ"), model_version="sim", report_path=f"{run_id}.md",
        scores=values, mean_score=values.mean, overall_pass=values.passed, adaptive=selection.adaptive,
        lessons_applied=tuple(LessonUse(x.text, key=x.key, stage=x.stage, p=x.p) for x in selection.lessons),
        lessons_withheld=selection.withheld,
    )  # fmt: skip


def history(world: World, seed: int) -> tuple[list[Track], bool]:
    """One history of ``world``: each lesson's track, and whether the domain was ever suspended."""
    rng = random.Random(seed)
    offsets = [rng.gauss(0.0, QUESTION_SD) for _ in range(QUESTIONS)]
    worth = dict(zip(KEYS, world.effects, strict=True))
    lessons = [Lesson(key, stage_of(key), target_of(key), f"lesson {key}", ()) for key in KEYS]
    arms = {key: Arms(tuple(k for k in KEYS if k != key)) for key in KEYS}
    tracks = [Track() for _ in KEYS]
    critiques: list[Critique] = []
    suspended = False
    for n in range(world.runs + 1):
        effects = {key: effect_of(key, DOMAIN, arms[key]) for key in KEYS}
        for track, key in zip(tracks, KEYS, strict=True):
            track.see(n, effects[key])
        if n == world.runs:
            break
        comparison = compare_adaptive(DOMAIN, critiques)
        suspended = suspended or comparison.suspended
        run = RunDraw(rng.random(), rng.getrandbits(48), CONTROL_FRACTION, TRIAL_PROBABILITY)
        base = LessonSelection(DOMAIN, (), False, "")
        chosen = choose(
            base, rank(lessons, effects, MAX_LESSONS), run, comparison=comparison, scarce="", eligible=10
        )
        question = rng.randrange(QUESTIONS)
        level = BASE + offsets[question] + sum(worth[x.key] for x in chosen.lessons)
        scores = [min(5, max(1, round(level + rng.gauss(0.0, NOISE_SD)))) for _ in range(5)]
        critique = _critique(n, question, scores, chosen)
        critiques.append(critique)
        given = {x.key for x in chosen.lessons}
        for row in use_rows(f"critique-{critique.id}.yaml", critique):
            if in_trial(row.arm, row.reason):
                arms[row.key].add(row.arm, row.question, row.value, score=row.mean, p=row.p, others=given)
    return tracks, suspended


def _wilson(hits: int, n: int) -> str:
    """``hits/n`` as a percentage with its 95% Wilson interval."""
    if n == 0:
        return "-"
    p, z = hits / n, 1.96
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return f"{100 * p:5.1f}% [{100 * max(0.0, centre - half):.1f}, {100 * min(1.0, centre + half):.1f}]"


def _median(values: list[int]) -> str:
    return "-" if not values else f"{statistics.median(values):g}"


def _tracks(world: World, worth: float) -> list[Track]:
    return [t for h in world.tracks for t, e in zip(h, world.effects, strict=True) if e == worth]


def _rate(tracks: list[Track], attr: str, within: int) -> tuple[int, int]:
    hits = sum(1 for t in tracks if getattr(t, attr) is not None and getattr(t, attr) <= within)
    return hits, len(tracks)


def _false(tracks: list[Track], within: int) -> tuple[int, int]:
    hits = sum(1 for t in tracks if any(x is not None and x <= within for x in (t.retired, t.helpful)))
    return hits, len(tracks)


def _bias(tracks: list[Track]) -> tuple[float, float]:
    """The mean final estimate of a harmless lesson, on its target and on the mean score."""
    own = [t.last.delta for t in tracks if t.last is not None and t.last.delta is not None]
    score = [t.last.score.delta for t in tracks if t.last and t.last.score and t.last.score.delta is not None]
    return statistics.fmean(own), statistics.fmean(score)


def report(worlds: dict[str, World]) -> None:
    alone, beside, mixed = worlds["alone"], worlds["beside"], worlds["mixed"]
    harmless_alone, harmless_beside = _tracks(alone, 0.0), _tracks(beside, 0.0)
    harmful, helpful, half = _tracks(beside, -1.0), _tracks(mixed, 1.0), _tracks(mixed, -0.5)
    print(f"histories: {len(alone.tracks)} per world; a harmless lesson counted once per history it is in")
    print("goal                                              measured (95% interval)")
    print(f"harmless alone: retired or helpful within 200      {_wilson(*_false(harmless_alone, 200))}  (<= 5%)")
    print(f"harmless beside a -1: retired or helpful within 200 {_wilson(*_false(harmless_beside, 200))}  (<= 5%)")
    own, score = _bias(harmless_beside)
    print(f"harmless beside a -1: mean estimate after 200 runs  target {own:+.3f}, mean score {score:+.3f}  (|bias| <= 0.05)")
    print(f"-1 lesson retired within 40 runs                    {_wilson(*_rate(harmful, 'retired', 40))}  (>= 90%)")
    print(f"+1 lesson called helpful within 40 runs             {_wilson(*_rate(helpful, 'helpful', 40))}  (>= 90%)")
    print(f"-0.5 lesson retired within 40 / 200 runs            {_wilson(*_rate(half, 'retired', 40))} / "
          f"{_wilson(*_rate(half, 'retired', 200))}")  # fmt: skip
    print("median runs of the domain to the decision (histories that reached it within 200 runs):")
    print(f"  -1 retired {_median([t.retired for t in harmful if t.retired is not None])}, "
          f"+1 helpful {_median([t.helpful for t in helpful if t.helpful is not None])}, "
          f"-0.5 retired {_median([t.retired for t in half if t.retired is not None])}")  # fmt: skip
    wrong = [t for t in harmful if t.helpful is not None] + [t for t in helpful if t.retired is not None]
    print(f"a -1 lesson called helpful or a +1 retired: {len(wrong)} of {len(harmful) + len(helpful)}")
    for world in worlds.values():
        print(f"domain ever suspended ({world.name}, worth {world.effects}): {world.suspended} of {len(world.tracks)}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--histories", type=int, default=200, help="histories per world (default 200)")
    parser.add_argument("--seed", type=int, default=30)
    args = parser.parse_args(argv)
    worlds = {
        "alone": World("alone", (0.0, 0.0, 0.0), 200),
        "beside": World("beside", (0.0, -1.0, 0.0), 200),
        "mixed": World("mixed", (1.0, -0.5, 0.0), 200),
    }
    started = time.process_time()
    for w, world in enumerate(worlds.values()):
        for h in range(args.histories):
            tracks, suspended = history(world, args.seed * 1_000_003 + w * 100_003 + h)
            world.tracks.append(tracks)
            world.suspended += suspended
    report(worlds)
    print(f"({time.process_time() - started:.0f} s of CPU on one core)")


if __name__ == "__main__":
    main()
