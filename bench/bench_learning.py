"""Learning that cannot fool itself (issues 30 and 41): a seeded simulation of lesson trials.

Drives the project's own code through synthetic worlds, run after run, as the tool is shipped:

* what a run is given: :func:`research_agent.memory.lessons.choose.rank` and ``choose`` (the
  control draw, a suspended domain's runs, each lesson's trial draw at the probability its
  status calls for, :mod:`research_agent.memory.lessons.trials`), from lessons that are built
  only while the critiques retention keeps hold at least 3 passing ones, and those kept for their
  undecided trial after that (:func:`research_agent.memory.lessons.build.kept.kept_for_trial`, the
  selection's own rule, with the status filter it applies);
* the trial ledger: each run's lines made from a real
  :class:`~research_agent.memory.store.critique_types.Critique` by
  :func:`~research_agent.memory.store.trials.critique_lines` (its row, and the texts of lessons
  given for the first time in their trial), kept in a
  :class:`~research_agent.memory.store.trials.TrialLedger` whatever retention deletes;
* which runs enter a lesson's arms: :func:`research_agent.memory.effects.decisions.use_rows`;
* each lesson's effect and status: :func:`research_agent.memory.effects.lesson_effects.effect_of`
  (paired by question, adjusted for the other lessons given beside it, the always-valid
  interval, the mean-score check), and decisions that stay made
  (:func:`research_agent.memory.effects.decisions.settled`, the events the ledger records);
* the suspension: :func:`research_agent.memory.effects.stats.compare_adaptive` over
  :func:`research_agent.memory.lessons.select.compared_runs` (the ledger's runs).
* retention: after every critique the critiques kept are cut to the newest ``max_critiques``
  (``--max-critiques``, by default the configuration's default and 10; 0 keeps every one).

Only the index (SQLite) and the YAML files are left out: they store what this feeds in directly
(``tests/test_learning_simulation.py`` checks that a world run through real files decides alike).

A world: one domain, a pool of 12 questions whose levels differ (offset ~ N(0, 0.5)), three
planning lessons. Each run asks a question drawn at random; each of its five scores is
``clip(round(3 + offset + the effects of the lessons it was given + N(0, 0.8)), 1, 5)``.
Settings as shipped: control fraction 0.2, trial probability 0.5 (a fifth of it once helpful).

Printed for each retention: how often a lesson that does nothing is retired or called helpful
within 200 and 500 runs of its domain (alone, and beside a lesson worth -1; the goal is at most
5%), its estimate's bias beside the -1 neighbour (goal within 0.05), how often a -1 lesson is
retired and a +1 lesson called helpful within 40 runs (goal at least 90%), the median runs to each
decision, the -0.5 case, and in how many histories a retired lesson was given again (goal 0).
Each rate comes with its 95% Wilson interval over the histories simulated.

    nice .venv/bin/python -m bench.bench_learning [--histories 200] [--seed 30] [--runs 200 --runs 500]
        [--max-critiques 50 --max-critiques 10]
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from research_agent.config import Settings
from research_agent.ids import make_run_id
from research_agent.memory.effects.decisions import settled, use_rows
from research_agent.memory.effects.lesson_effects import DECIDED, Arms, LessonEffect, effect_of
from research_agent.memory.effects.stats import compare_adaptive
from research_agent.memory.lessons.build.evidence import Evidence
from research_agent.memory.lessons.build.kept import KEPT_STATUSES, kept_for_trial
from research_agent.memory.lessons.build.text import lesson_text
from research_agent.memory.lessons.choose import RunDraw, choose, rank
from research_agent.memory.lessons.select import SelectionRules, compared_runs
from research_agent.memory.lessons.types import MAX_LESSONS, Lesson, LessonSelection
from research_agent.memory.store.critique_types import Critique, LessonUse, Scores
from research_agent.memory.store.files import stamp_of
from research_agent.memory.store.index.sign import RowSigner
from research_agent.memory.store.targets import stage_of, target_of
from research_agent.memory.store.trials import (
    TrialLedger,
    TrialState,
    critique_lines,
    row_from_critique,
    trial_states,
)

DOMAIN = "technology"
KEYS = ("coverage:low-score", "counterarguments:missing", "primary:evidence")
QUESTIONS = 12
QUESTION_SD = 0.5
NOISE_SD = 0.8
BASE = 3.0
CONTROL_FRACTION = 0.2
TRIAL_PROBABILITY = 0.5
START = datetime(2026, 1, 1, tzinfo=UTC)
MIN_CRITIQUES = 3  # passing critiques a domain needs before lessons are built
STAGES = {key: stage_of(key) for key in KEYS}


@dataclass
class Track:
    """One lesson in one history: when it was first retired or called helpful (runs of the domain
    since its trial began: its first run with at least 3 passing critiques kept), its effect after
    each horizon, and the runs that were given it after it was retired."""

    retired: int | None = None
    helpful: int | None = None
    last: dict[int, LessonEffect] = field(default_factory=dict)
    given_retired: int = 0

    def see(self, runs: int, trial_runs: int, effect: LessonEffect, horizons: tuple[int, ...]) -> None:
        """The effect after ``runs`` runs of the domain, ``trial_runs`` of them since the lesson's trial began."""
        if runs in horizons:
            self.last[runs] = effect
        if effect.status == "retired" and self.retired is None:
            self.retired = trial_runs
        if effect.status == "helpful" and self.helpful is None:
            self.helpful = trial_runs


@dataclass
class World:
    """A domain whose three lessons are worth ``effects`` on every score."""

    name: str
    effects: tuple[float, ...]
    tracks: list[list[Track]] = field(default_factory=list)  # per history, per lesson
    suspended: int = 0  # histories in which the domain was ever suspended


def _text(key: str) -> str:
    """The text ``key``'s template writes with counts a domain might show (3 of the last 10)."""
    text = lesson_text(Evidence(key, ("a", "b", "c"), (("n", 10),), 1.0))
    assert text is not None, key
    return text


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


def _look(ledger: TrialLedger, arms: dict[str, Arms], seen: dict[str, int], when: datetime) -> dict[str, LessonEffect]:
    """Each lesson's effect now, ``seen[key]`` runs of the domain since its trial began, its recorded
    decision applied; a decision reached for the first time is recorded (this look is the first to
    reach it: one look before every run)."""
    states = trial_states(ledger.events)
    effects = {}
    for key in KEYS:
        effect = effect_of(key, DOMAIN, arms[key], trial_runs=seen[key])
        state = states.get((DOMAIN, key), TrialState())
        first = effect.status in DECIDED and (state.decision is None or state.decision.event != effect.status)
        effect, event = settled(effect, state, ("", seen[key]) if first else None, now=when)
        if event is not None:
            ledger.add([event])
        effects[key] = effect
    return effects


def _enter(ledger: TrialLedger, critique: Critique, arms: dict[str, Arms], given: set[str]) -> None:
    """Record the run's lines and add its uses that enter lessons' arms (the real filter, on its row)."""
    row = row_from_critique(critique)
    ledger.add(critique_lines(ledger, critique))
    one = TrialLedger(None, RowSigner(b"0" * 32))
    one.add([row])
    states = trial_states(ledger.events)
    for _, key, _, arm, question, value, score, _, p, _ in use_rows(
        one, domain=DOMAIN, future="99999999T999999999999Z", latest=float("inf"), states=states, person={},
        stages=STAGES,
    ):  # fmt: skip
        arms[key].add(arm, question, value, score=score, p=p, others=given)


def history(world: World, seed: int, runs: int, keep: int, horizons: tuple[int, ...]) -> tuple[list[Track], bool]:
    """One history of ``world`` over ``runs`` runs, retention keeping ``keep`` critiques (0: all):
    each lesson's track, and whether the domain was ever suspended."""
    rng = random.Random(seed)
    offsets = [rng.gauss(0.0, QUESTION_SD) for _ in range(QUESTIONS)]
    worth = dict(zip(KEYS, world.effects, strict=True))
    lessons = [Lesson(key, stage_of(key), target_of(key), _text(key), ()) for key in KEYS]
    arms = {key: Arms(tuple(k for k in KEYS if k != key)) for key in KEYS}
    tracks = [Track() for _ in KEYS]
    ledger = TrialLedger(None, RowSigner(b"0" * 32))
    kept: list[Critique] = []  # the critique files retention leaves
    first: dict[str, int] = {}  # the run at which each lesson's trial began (its first run eligible for it)
    suspended = False
    for n in range(runs + 1):
        when = START + timedelta(minutes=n)
        seen = {key: n - first[key] if key in first else 0 for key in KEYS}
        effects = _look(ledger, arms, seen, when)
        for track, key in zip(tracks, KEYS, strict=True):
            track.see(n, seen[key], effects[key], horizons)
        if n == runs:
            break
        rules = SelectionRules(when, 30, 10, MIN_CRITIQUES, CONTROL_FRACTION, False, MAX_LESSONS, TRIAL_PROBABILITY)
        comparison = compare_adaptive(DOMAIN, compared_runs(ledger, DOMAIN, rules))  # type: ignore[arg-type]
        suspended = suspended or comparison.suspended
        run = RunDraw(rng.random(), rng.getrandbits(48), CONTROL_FRACTION, TRIAL_PROBABILITY)
        passing = sum(1 for c in kept if c.overall_pass and c.teaches)
        built = lessons if passing >= MIN_CRITIQUES else []
        cutoff = stamp_of(when - timedelta(days=30))
        held = kept_for_trial(ledger, DOMAIN, built={x.key for x in built}, cutoff=cutoff)
        built = [*built, *(x for x in held if effects[x.key].status in KEPT_STATUSES)]
        scarce = "" if passing >= MIN_CRITIQUES else f"no lessons: {passing} eligible critique(s)"
        chosen = choose(
            LessonSelection(DOMAIN, (), False, ""), rank(built, effects, MAX_LESSONS), run, comparison=comparison,
            scarce=scarce, eligible=min(passing, 10),
        )  # fmt: skip
        question = rng.randrange(QUESTIONS)
        level = BASE + offsets[question] + sum(worth[x.key] for x in chosen.lessons)
        scores = [min(5, max(1, round(level + rng.gauss(0.0, NOISE_SD)))) for _ in range(5)]
        critique = _critique(n, question, scores, chosen)
        given = {x.key for x in chosen.lessons}
        for key in (*given, *chosen.withheld_keys):
            first.setdefault(key, n)
        for track, key in zip(tracks, KEYS, strict=True):
            track.given_retired += track.retired is not None and key in given
        _enter(ledger, critique, arms, given)
        kept = kept + [critique] if not keep else (kept + [critique])[-keep:]
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


def _bias(tracks: list[Track], horizon: int) -> tuple[float, float]:
    """The mean estimate of a harmless lesson after ``horizon`` runs, on its target and on the mean score."""
    last = [t.last[horizon] for t in tracks if horizon in t.last]
    own = [e.delta for e in last if e.delta is not None]
    score = [e.score.delta for e in last if e.score is not None and e.score.delta is not None]
    return statistics.fmean(own), statistics.fmean(score)


def report(worlds: dict[str, World], keep: int, horizons: tuple[int, ...]) -> None:
    alone, beside, mixed = worlds["alone"], worlds["beside"], worlds["mixed"]
    harmless_alone, harmless_beside = _tracks(alone, 0.0), _tracks(beside, 0.0)
    harmful, helpful, half = _tracks(beside, -1.0), _tracks(mixed, 1.0), _tracks(mixed, -0.5)
    kept = "every critique kept" if not keep else f"max_critiques {keep}"
    print(f"== retention: {kept}; {len(alone.tracks)} histories per world; a harmless lesson counted once per history")
    print("goal                                                measured (95% interval)")
    for horizon in horizons:
        print(f"harmless alone: retired or helpful within {horizon:<4}      {_wilson(*_false(harmless_alone, horizon))}  (<= 5%)")
        print(f"harmless beside a -1: retired or helpful within {horizon:<4} {_wilson(*_false(harmless_beside, horizon))}  (<= 5%)")
        own, score = _bias(harmless_beside, horizon)
        print(f"harmless beside a -1: mean estimate after {horizon:<4} runs  target {own:+.3f}, mean score {score:+.3f}  (|bias| <= 0.05)")
    print(f"-1 lesson retired within 40 runs                      {_wilson(*_rate(harmful, 'retired', 40))}  (>= 90%)")
    print(f"+1 lesson called helpful within 40 runs               {_wilson(*_rate(helpful, 'helpful', 40))}  (>= 90%)")
    print(f"-0.5 lesson retired within 40 / {horizons[-1]} runs              {_wilson(*_rate(half, 'retired', 40))} / "
          f"{_wilson(*_rate(half, 'retired', horizons[-1]))}")  # fmt: skip
    every = [t for w in worlds.values() for h in w.tracks for t in h]
    again = sum(1 for w in worlds.values() for h in w.tracks if any(t.given_retired for t in h))
    print(f"retired lessons given again: in {again} of {sum(len(w.tracks) for w in worlds.values())} histories, "
          f"{sum(t.given_retired for t in every)} run(s) in all  (goal 0)")
    print(f"median runs of the domain to the decision (histories that reached it within {horizons[-1]} runs):")
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
    parser.add_argument("--runs", type=int, action="append", help="horizons to report (default 200 and 500)")
    parser.add_argument("--max-critiques", type=int, action="append", dest="keep",
                        help=f"retention to apply (default {Settings().max_critiques}, as configured, and 10; 0 keeps all)")
    args = parser.parse_args(argv)
    horizons = tuple(sorted(set(args.runs or (200, 500))))
    for keep in args.keep or (Settings().max_critiques, 10):
        worlds = {
            "alone": World("alone", (0.0, 0.0, 0.0)),
            "beside": World("beside", (0.0, -1.0, 0.0)),
            "mixed": World("mixed", (1.0, -0.5, 0.0)),
        }
        started = time.process_time()
        for w, world in enumerate(worlds.values()):
            for h in range(args.histories):
                tracks, suspended = history(world, args.seed * 1_000_003 + w * 100_003 + h, horizons[-1], keep, horizons)
                world.tracks.append(tracks)
                world.suspended += suspended
        report(worlds, keep, horizons)
        print(f"({time.process_time() - started:.0f} s of CPU on one core)")
        print()


if __name__ == "__main__":
    main()
