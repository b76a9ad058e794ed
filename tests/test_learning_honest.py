"""Learning that cannot fool itself (issue 30): per-lesson arms that compare like with like,
decisions that stay right under repeated looks, the mean-score check, suspensions that lift."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from research_agent.memory.effects.lesson_effects import Arms, effect_of
from research_agent.memory.effects.stats import compute_stats
from research_agent.memory.lessons.effects_view import lesson_effects
from research_agent.memory.lessons.select import select_lessons
from research_agent.memory.store.files import load_all
from research_agent.memory.store.index.rows import in_trial, use_rows
from tests.support.learning_world import COUNTER, LOW, PRIMARY, run_world
from tests.support.memory import NOW, make_critique, make_facts, put, state_in

UNANSWERED = "coverage:unanswered"  # target facts.unanswered


def _effects(meta: Path) -> dict[str, object]:
    return {e.key: e for e in lesson_effects(meta, now=NOW + timedelta(days=3), state_dir=state_in(meta.parent))}


def test_a_control_run_never_enters_a_per_lesson_arm(tmp_path: Path) -> None:
    for i in range(6):
        put(tmp_path, make_critique(i, applied=(COUNTER, LOW), scores=(4, 4, 4, 4, 4)))
        put(tmp_path, make_critique(10 + i, applied=(LOW,), withheld=(COUNTER,), reason="trial", scores=(4, 4, 4, 4, 4)))
    before = {e.key: e for e in lesson_effects(tmp_path, now=NOW)}
    # runs that withheld both by a whole-run draw, by the user's choice, or because they were retired:
    # they scored far worse, and change neither lesson's effect
    for i, reason in enumerate(("control", "no_lessons", "suspended", "retired") * 3):
        put(tmp_path, make_critique(30 + i, withheld=(COUNTER, LOW), reason=reason, scores=(2, 2, 2, 2, 2)))
    after = {e.key: e for e in lesson_effects(tmp_path, now=NOW)}
    # the domain has had 12 more runs (runs of the trial count every run of the domain); the arms are as they were
    assert {k: replace(e, trial_runs=before[k].trial_runs, more_runs=before[k].more_runs) for k, e in after.items()} == before
    assert after[COUNTER].trial_runs == before[COUNTER].trial_runs + 12
    assert (after[COUNTER].applied_runs, after[COUNTER].baseline_runs) == (6, 6)
    assert (after[LOW].applied_runs, after[LOW].baseline_runs) == (12, 0)
    assert [r.reason for r in use_rows("x.yaml", make_critique(1, withheld=(COUNTER,), reason="control"))] == ["control"]
    assert not in_trial("withheld", "control") and in_trial("withheld", "trial") and in_trial("applied", "")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list]:
    """A fixed world: a harmless lesson (low-score), one worth -1 on every score (counterarguments),
    a harmless one (primary), 60 runs through the real selection and the real files."""
    meta = tmp_path_factory.mktemp("world") / "reports" / "meta"
    selections = run_world(meta, {COUNTER: -1.0}, runs=60, seed=0)
    return meta, selections


def test_a_harmless_lesson_beside_a_harmful_one_keeps_zero_in_its_interval(world) -> None:
    meta, selections = world
    effects = _effects(meta)
    harmful = effects[COUNTER]
    assert harmful.status == "retired" and harmful.score.interval[1] < 0
    assert harmful.decided_after is not None and harmful.decided_after <= 40
    for key in (LOW, PRIMARY):
        harmless = effects[key]
        for lo, hi in (harmless.interval, harmless.score.interval):
            assert lo < 0 < hi, (key, harmless)
        assert harmless.status not in ("retired", "helpful")
    controls = [s for s in selections if s.reason.startswith("control run")]
    assert controls and all(not s.lessons for s in controls)
    # once retired, it is withheld as retired in every run and in no arm
    assert all(w.reason == "retired" for s in selections[-5:] for w in s.withheld if w.key == COUNTER)


def test_the_simulation_path_measures_as_the_files_do(world) -> None:
    """bench/bench_learning.py feeds critiques to the effects without the index: the same
    critiques give the same effects either way."""
    meta, _ = world
    keys = (COUNTER, LOW, PRIMARY)
    arms = {key: Arms(tuple(k for k in keys if k != key)) for key in keys}
    for item in sorted(load_all(meta), key=lambda i: i.critique.created_at if i.critique else NOW):
        critique = item.critique
        given = critique.given_keys() if critique else ()
        for row in use_rows(item.name, critique) if critique else ():
            if in_trial(row.arm, row.reason):
                arms[row.key].add(row.arm, row.question, row.value, score=row.mean, p=row.p, others=given)
    from_files = _effects(meta)
    for key, measured in arms.items():
        direct = effect_of(key, "technology", measured)
        found = from_files[key]
        assert (direct.status, direct.applied_runs, direct.baseline_runs) == (
            found.status, found.applied_runs, found.baseline_runs,
        )  # fmt: skip
        assert direct.delta == pytest.approx(found.delta) and direct.interval == pytest.approx(found.interval)


def _unanswered_run(n: int, *, given: bool, score: int) -> object:
    """A run whose one unanswered sub-query of four does not change with the lesson; its scores do."""
    facts = make_facts(sub_queries=((5, 0, 0), (5, 2, 1), (5, 2, 1), (5, 2, 1)))
    scores = (score, score, score + (n % 2), score, score - (n % 3 == 0))
    kw = {"applied": (UNANSWERED,)} if given else {"withheld": (UNANSWERED,)}
    return make_critique(n, facts=facts, scores=scores, query=f"question {n % 5}", **kw)


def test_a_harmful_built_lesson_is_retired_on_the_mean_score_whatever_its_target(tmp_path: Path) -> None:
    for n in range(16):
        put(tmp_path, _unanswered_run(n, given=True, score=3))
        put(tmp_path, _unanswered_run(40 + n, given=False, score=4))
    found = {e.key: e for e in lesson_effects(tmp_path, now=NOW)}[UNANSWERED]
    assert found.target == "facts.unanswered" and found.delta == 0.0  # its own target did not move
    assert found.interval[0] < 0 < found.interval[1]
    assert found.score.delta == pytest.approx(-1.0, abs=0.05) and found.score.interval[1] < 0
    assert (found.status, found.decided_on) == ("retired", "mean_score")


def _suspending(meta: Path, start: int, count: int, *, adaptive_scores: tuple[int, ...]) -> None:
    for i in range(count):
        n = start + i
        put(meta, make_critique(n, applied=(LOW,), scores=adaptive_scores, tags=("low_coverage",)))
        put(meta, make_critique(100 + n, withheld=(LOW,), reason="control", scores=(4, 4, 4, 4, 4),
                                tags=("low_coverage",)))  # fmt: skip


def test_a_suspension_lifts_when_the_harm_goes_away(tmp_path: Path) -> None:
    meta = tmp_path / "reports" / "meta"
    _suspending(meta, 40, 12, adaptive_scores=(3, 3, 2, 3, 3))  # older runs: adaptive runs scored worse
    now = NOW + timedelta(hours=1)

    def select(seed: int):
        return select_lessons(meta, "technology", now=now, rng=random.Random(seed), control_fraction=0.2)

    # the run's whole-run draw: 0.13 (seed 1) a control run; 0.62 (seed 5) suspended; 0.84 (seed 0) kept adaptive
    stats = compute_stats(load_all(meta)).domains[0]
    assert stats.comparison.suspended and "one run in four stays adaptive" in stats.comparison.reason
    assert select(1).reason.startswith("control run")
    suspended = select(5)
    assert not suspended.adaptive and suspended.reason.startswith("lessons suspended for technology")
    kept = select(0)
    assert kept.adaptive and "kept adaptive while the domain's lessons are suspended" in kept.reason
    # the harm went away (say the lesson that caused it was retired): newer adaptive runs score like
    # the controls, and once they fill the comparison's window, the suspension lifts
    for i in range(20):
        put(meta, make_critique(i, applied=(LOW,), scores=(4, 4, 4 + (i % 2), 4, 4), tags=("low_coverage",)))
    lifted = compute_stats(load_all(meta)).domains[0]
    assert not lifted.comparison.suspended and not lifted.comparison.reason.startswith("lessons suspended")
    assert select(5).adaptive


def test_a_lesson_proven_to_help_is_helpful_and_withheld_less_often(tmp_path: Path) -> None:
    for n in range(14):
        put(tmp_path, make_critique(n, applied=(COUNTER,), scores=(5, 4, 5, 4, 5 - n % 2), query=f"q{n % 4}",
                                    tags=("missing_counterarguments",)))  # fmt: skip
        put(tmp_path, make_critique(40 + n, withheld=(COUNTER,), scores=(3, 3, 4, 3, 3 + n % 2), query=f"q{n % 4}",
                                    tags=("missing_counterarguments",)))  # fmt: skip
    found = {e.key: e for e in lesson_effects(tmp_path, now=NOW)}[COUNTER]
    assert found.status == "helpful" and found.decided_after is not None
    withheld = 0
    for seed in range(300):
        selection = select_lessons(tmp_path, "technology", now=NOW, rng=random.Random(seed), control_fraction=0.0,
                                   trial_probability=0.5)  # fmt: skip
        trial = [w for w in selection.withheld if w.key == COUNTER]
        withheld += bool(trial)
        given = [x for x in selection.lessons if x.key == COUNTER]
        assert [x.p for x in given] + [w.p for w in trial] == [0.1]  # recorded with the draw
    assert 15 <= withheld <= 50  # a tenth of the runs, not half


def test_recorded_probabilities_are_never_compared_across() -> None:
    """Runs drawn at 0.5 and runs drawn at 0.1 are compared only within their own probability, so a
    change over time (here: everything scores a point higher later, when it is drawn at 0.1) is
    not mistaken for the lesson's effect."""
    arms = Arms()
    for i in range(10):
        arms.add("applied", f"q{i}", 3.0 + i % 2, score=3.0 + i % 2, p=0.5)
        arms.add("withheld", f"q{i + 50}", 3.0 + i % 2, score=3.0 + i % 2, p=0.5)
    for i in range(27):
        arms.add("applied", f"q{100 + i}", 4.0 + i % 2, score=4.0 + i % 2, p=0.1)
    for i in range(3):
        arms.add("withheld", f"q{200 + i}", 4.0 + i % 2, score=4.0 + i % 2, p=0.1)
    found = effect_of(COUNTER, "technology", arms)
    assert found.mean_with > found.mean_without + 0.5  # pooled naively, it would look helpful
    assert found.delta == pytest.approx(0.0, abs=0.2) and found.status != "helpful"


def test_an_old_memory_loads_without_loss_and_is_measured_by_the_new_rule(tmp_path: Path) -> None:
    """0.3.0 wrote version-3 critiques without trial probabilities, and version 2 held bare
    withheld keys (whole-run controls): both load; controls fall out of the arms."""
    meta = tmp_path / "reports" / "meta"
    for i in range(6):
        put(meta, make_critique(i, applied=(COUNTER,), scores=(4, 4, 4, 4, 4)))
        put(meta, make_critique(20 + i, withheld=(COUNTER,), reason="trial", scores=(4, 4, 3, 4, 4)))
        put(meta, replace(make_critique(40 + i, withheld=(COUNTER,), reason="control", scores=(1, 2, 2, 2, 2)),
                          schema_version=2))  # fmt: skip
    loaded = load_all(meta)
    assert len(loaded) == 18 and all(item.critique is not None for item in loaded)
    found = {e.key: e for e in lesson_effects(meta, now=NOW, state_dir=state_in(tmp_path))}[COUNTER]
    assert (found.applied_runs, found.baseline_runs) == (6, 6)
    assert found.mean_with == 4.0 and found.mean_without == 3.0
