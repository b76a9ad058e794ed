"""Per-lesson trials (issue 20, points 1, 2 and 7): the draw, the attributable effect, and
evidence that does not feed on itself."""

from __future__ import annotations

import random
from datetime import timedelta
from pathlib import Path
from typing import NamedTuple

import pytest

from research_agent.memory.effects.lesson_effects import Arms, effect_of
from research_agent.memory.effects.stats import compare_adaptive
from research_agent.memory.lessons.build.pool import EvidencePool
from research_agent.memory.lessons.effects_view import lesson_effects
from research_agent.memory.lessons.select import build_lessons, select_lessons
from research_agent.memory.lessons.trials import draw_trials, withheld_by_trial
from research_agent.memory.lessons.types import Lesson
from research_agent.memory.store.critique_types import WithheldLesson
from tests.support.memory import NOW, make_critique, make_facts, put

COUNTER = "counterarguments:missing"
LOW = "coverage:low-score"
UNANSWERED = "coverage:unanswered"
KEYS = (UNANSWERED, LOW, COUNTER, "primary:evidence")


def _lesson(key: str) -> Lesson:
    return Lesson(key, "decompose", "scores.coverage", f"text of {key}", ("x_20261122T000000000000Z",))


def test_each_lesson_is_withheld_on_its_own_reproducibly_and_its_slot_stays_empty() -> None:
    lessons = [_lesson(key) for key in KEYS]
    withheld = dict.fromkeys(KEYS, 0)
    apart = 0
    for seed in range(2000):
        draw = draw_trials(lessons, seed=seed, probability=0.25)
        assert [x.key for x in draw.given] + [w.key for w in draw.withheld] != []
        assert {x.key for x in draw.given} | {w.key for w in draw.withheld} == set(KEYS)  # no refill, no loss
        assert all(w.reason == "trial" for w in draw.withheld)
        for w in draw.withheld:
            withheld[w.key] += 1
        held = {w.key for w in draw.withheld}
        apart += (UNANSWERED in held) != (LOW in held)
        # a lesson's draw does not depend on the lessons beside it
        alone = draw_trials([_lesson(LOW)], seed=seed, probability=0.25)
        assert (LOW in held) == bool(alone.withheld)
    assert all(400 <= count <= 600 for count in withheld.values()), withheld  # about a quarter each
    assert 600 <= apart <= 900  # independent: apart in about 2 * 0.25 * 0.75 of runs
    assert draw_trials(lessons, seed=7, probability=0.25) == draw_trials(lessons, seed=7, probability=0.25)
    assert draw_trials(lessons, seed=7, probability=0.0).withheld == ()


def _planning_critiques(meta: Path, count: int = 4) -> None:
    for i in range(count):
        put(meta, make_critique(i, tags=("missing_counterarguments", "low_coverage")))


def test_an_adaptive_run_records_its_seed_and_trial_withheld_lessons_and_refills_no_slot(tmp_path: Path) -> None:
    _planning_critiques(tmp_path)
    seed = next(s for s in range(100) if withheld_by_trial(LOW, seed=s, probability=0.25)
                and not withheld_by_trial(COUNTER, seed=s, probability=0.25))  # fmt: skip

    class Seeded(random.Random):
        def getrandbits(self, k: int) -> int:  # the run's recorded seed, as drawn from its random source
            return seed

    selection = select_lessons(tmp_path, "technology", now=NOW, control_fraction=0.0, rng=Seeded(0),
                               trial_probability=0.25, max_lessons=1)  # fmt: skip
    # coverage:low-score ranks first and was drawn out: its slot stays empty, counterarguments is not moved up
    assert selection.lessons == () and not selection.adaptive
    assert selection.withheld == (WithheldLesson(LOW, "trial", 0.25),)  # its probability recorded with it
    assert selection.trial_seed == seed and selection.as_record()["trial_seed"] == seed
    assert (COUNTER, "beyond the 1 decompose lessons a run is given") in selection.excluded


def test_a_lesson_withheld_at_random_is_measured_against_the_runs_given_it(tmp_path: Path) -> None:
    """Two lessons always eligible together, assigned independently: each has its own effect."""
    rng = random.Random(5)
    for i in range(40):
        given = [key for key in (COUNTER, LOW) if rng.random() >= 0.4]
        withheld = [key for key in (COUNTER, LOW) if key not in given]
        coverage = 3 + (COUNTER in given) - (LOW in given) + 1  # counter helps (+1), low-score harms (-1)
        put(tmp_path, make_critique(i, scores=(4, 4, coverage, 4, 4), applied=tuple(given), withheld=tuple(withheld),
                                    reason="trial", query=f"question {i % 8}"))  # fmt: skip
    effects = {e.key: e for e in lesson_effects(tmp_path, now=NOW)}
    counter, low = effects[COUNTER], effects[LOW]
    # each estimate is near its own lesson's effect (the other lesson's share averages out)
    assert counter.delta == pytest.approx(1.0, abs=0.25) and low.delta == pytest.approx(-1.0, abs=0.25)
    assert counter.status == "helpful" and low.status == "retired"
    assert counter.confounded_with == () and low.confounded_with == ()
    assert counter.method == "paired" and counter.paired_questions >= 5


def test_lessons_apart_only_under_whole_run_controls_are_confounded_with_each_other(tmp_path: Path) -> None:
    for i in range(6):
        put(tmp_path, make_critique(i, applied=(COUNTER, LOW), scores=(4, 4, 4, 4, 4)))
        put(tmp_path, make_critique(10 + i, withheld=(COUNTER, LOW), reason="control", scores=(4, 4, 3, 4, 4)))
    effects = {e.key: e for e in lesson_effects(tmp_path, now=NOW)}
    assert effects[COUNTER].confounded_with == (LOW,) and effects[LOW].confounded_with == (COUNTER,)
    # one trial run that gives one without the other separates them
    put(tmp_path, make_critique(30, applied=(COUNTER,), withheld=(LOW,), reason="trial"))
    effects = {e.key: e for e in lesson_effects(tmp_path, now=NOW)}
    assert effects[COUNTER].confounded_with == () and effects[LOW].confounded_with == ()


def test_paired_by_question_once_the_shared_questions_give_enough_degrees_of_freedom() -> None:
    arms = Arms.empty()
    for q, (with_, without) in enumerate([(4, 3), (5, 3), (4, 4), (3, 2), (5, 4)]):
        arms.add("applied", f"q{q}", with_, score=with_)
        arms.add("withheld", f"q{q}", without, score=without)
    # one run of each arm per question: 10 runs, 5 questions, 4 degrees of freedom: not yet paired
    assert effect_of(COUNTER, "technology", arms).method == "unpaired"
    for q, (with_, without) in enumerate([(5, 4), (4, 3), (5, 5), (4, 2), (4, 4)]):
        arms.add("applied", f"q{q}", with_, score=with_)
        arms.add("withheld", f"q{q}", without, score=without)
    effect = effect_of(COUNTER, "technology", arms)
    assert effect.method == "paired" and effect.paired_questions == 5
    # question fixed effects: each question's difference of means, weighted alike here (2 and 2 runs)
    gaps = [(4 + 5) / 2 - (3 + 4) / 2, (5 + 4) / 2 - (3 + 3) / 2, (4 + 5) / 2 - (4 + 5) / 2, (3 + 4) / 2 - (2 + 2) / 2,
            (5 + 4) / 2 - (4 + 4) / 2]  # fmt: skip
    assert effect.delta == pytest.approx(sum(gaps) / 5)
    lo, hi = effect.interval
    assert lo < effect.delta < hi and hi - effect.delta == pytest.approx(effect.delta - lo)


def test_measuring_then_active_then_no_effect_after_forty_runs_and_it_ranks_last(tmp_path: Path) -> None:
    values = [3, 4, 5, 4] * 6
    unclear = effect_of(LOW, "technology", Arms.of(values[:20], values[1:21]))
    assert unclear.status == "no-effect" and unclear.applied_runs + unclear.baseline_runs == 40
    assert effect_of(LOW, "technology", Arms.of(values[:19], values[1:20])).status == "active"  # 38 runs
    assert effect_of(LOW, "technology", Arms.of([4] * 4, [2] * 30)).status == "measuring"  # 4 with
    # a no-effect lesson is kept but ranks after every active one for a slot
    for i in range(20):
        put(tmp_path, make_critique(i, applied=(LOW,), tags=("missing_counterarguments", "low_coverage"),
                                    scores=(4, 4, values[i], 4, 4)))  # fmt: skip
        put(tmp_path, make_critique(30 + i, withheld=(LOW,), reason="trial",
                                    tags=("missing_counterarguments", "low_coverage"), scores=(4, 4, values[i + 1], 4, 4)))  # fmt: skip
    selection = select_lessons(tmp_path, "technology", now=NOW + timedelta(days=1), control_fraction=0.0,
                               rng=random.Random(0), max_lessons=1)  # fmt: skip
    assert [lesson.key for lesson in selection.lessons] == [COUNTER]
    assert (LOW, "beyond the 1 decompose lessons a run is given") in selection.excluded


def _unanswered(n: int, gaps: int, **kw):
    subs = tuple((5, 0 if j < gaps else 2, 0 if j < gaps else 1) for j in range(4))
    return make_critique(n, facts=make_facts(sub_queries=subs), **kw)


def test_a_lessons_own_failures_are_not_its_evidence() -> None:
    """The ten newest runs were given coverage:unanswered and left sub-queries unanswered (the harm
    it caused); the runs without it show 3 in 10. Its text counts only those."""
    given = [_unanswered(i, 2, applied=(UNANSWERED,)) for i in range(10)]
    without = [_unanswered(10 + i, 1 if i < 3 else 0) for i in range(10)]
    pool = EvidencePool.of(given + without, limit=10)
    assert [c.id for c in pool.for_key(UNANSWERED)] == [c.id for c in without]
    (lesson,) = [x for x in build_lessons(pool)[0] if x.key == UNANSWERED] or [None]
    assert lesson is None  # 3 of 10 is below the threshold (4 of 10): its own failures do not build it
    without = [_unanswered(10 + i, 1 if i < 5 else 0) for i in range(10)]
    (lesson,) = [x for x in build_lessons(EvidencePool.of(given + without, limit=10))[0] if x.key == UNANSWERED]
    assert lesson.text.startswith("Sub-queries that found nothing worth keeping: 5 of 20 across 5 of the last 10")
    assert set(lesson.critique_ids) <= {c.id for c in without}


def test_a_lesson_at_its_threshold_does_not_flap(tmp_path: Path) -> None:
    """Built at k (4 of 10), kept at k - 1 while it was on, dropped at k - 2; k again to come back."""

    def built(hits: int, on: bool) -> bool:
        critiques = [make_critique(i, tags=("missing_counterarguments",) if i < hits else ()) for i in range(10)]
        return COUNTER in {x.key for x in build_lessons(EvidencePool.of(critiques, limit=10, on={COUNTER} if on else ()))[0]}

    assert built(4, on=False) and not built(3, on=False)
    assert built(3, on=True), "one short of the threshold: kept"
    assert not built(2, on=True), "two short: dropped"
    # through the index: "on" means the newest run that recorded lessons was eligible for it
    for i in range(1, 10):
        put(tmp_path, make_critique(i, tags=("missing_counterarguments",) if i < 4 else ()))
    put(tmp_path, make_critique(0, withheld=(COUNTER,), reason="control"))
    select = select_lessons(tmp_path, "technology", now=NOW, control_fraction=0.0, rng=random.Random(0))
    assert COUNTER in [x.key for x in select.lessons], "3 of 10, and it was on: kept"
    (tmp_path / f"critique-{make_critique(0).id}.yaml").unlink()
    put(tmp_path, make_critique(0))
    select = select_lessons(tmp_path, "technology", now=NOW, control_fraction=0.0, rng=random.Random(0))
    assert COUNTER not in [x.key for x in select.lessons], "3 of 10, and it was off: not built"


def test_a_domain_is_suspended_only_when_the_interval_lies_below_zero() -> None:
    def runs(adaptive: list[float], baseline: list[float]) -> list[_Run]:
        return [_Run(f"a_{i:06d}", "m", True, v, False) for i, v in enumerate(adaptive)] + [
            _Run(f"b_{i:06d}", "m", False, v, True) for i, v in enumerate(baseline)
        ]

    tiny = runs([3.0, 3.5] * 500, [3.0, 3.5] * 499 + [3.5, 3.5])  # "mean z -0.00 vs +0.00"
    assert not compare_adaptive("technology", tiny).suspended
    clear = runs([3.0, 3.2, 3.1, 2.9, 3.0, 3.1], [3.8, 3.9, 4.0, 3.7, 3.9, 4.0])
    worse = compare_adaptive("technology", clear)
    assert worse.suspended and "always-valid interval of the difference" in worse.reason
    assert "one run in four stays adaptive" in worse.reason


class _Run(NamedTuple):
    """What the suspension check reads of a run."""

    id: str
    model_version: str
    adaptive: bool
    mean_score: float
    whole_run_baseline: bool
