"""Each lesson's effect: its target with and without it, the signed delta and its 90% interval,
measuring / active / no-effect / retired, and what retirement does to later runs."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from research_agent.memory.effects.lesson_effects import decision_words
from research_agent.memory.lessons.effects_view import lesson_effects
from research_agent.memory.lessons.select import select_lessons
from research_agent.memory.store.critique_types import WithheldLesson
from tests.support.memory import NOW, make_critique, make_facts, put, put_raw

UNANSWERED = "coverage:unanswered"  # target facts.unanswered: lower is better
COUNTER = "counterarguments:missing"  # target scores.coverage: higher is better


def with_unanswered(n: int, unanswered: int, **kw):
    """A critique whose run left ``unanswered`` of 4 sub-queries without a kept source."""
    subs = tuple((5, 0 if j < unanswered else 2, 0 if j < unanswered else 1) for j in range(4))
    return make_critique(n, facts=make_facts(sub_queries=subs), **kw)


def with_coverage(n: int, coverage: int, **kw):
    return make_critique(n, scores=(4, 4, coverage, 4, 4), facts=make_facts(), **kw)


def effect(meta: Path, key: str, domain: str = "technology"):
    (found,) = [e for e in lesson_effects(meta, now=NOW, domain=domain) if e.key == key]
    return found


def test_a_lower_is_better_fact_is_flipped_so_that_positive_means_better(tmp_path: Path) -> None:
    applied, withheld = [0, 1, 0], [2, 1, 2, 3]
    for i, value in enumerate(applied):
        put(tmp_path, with_unanswered(i, value, applied=(UNANSWERED,)))
    for i, value in enumerate(withheld):
        put(tmp_path, with_unanswered(10 + i, value, withheld=(UNANSWERED,)))
    found = effect(tmp_path, UNANSWERED)
    assert (found.stage, found.target, found.domain) == ("decompose", "facts.unanswered", "technology")
    assert (found.applied_runs, found.baseline_runs) == (3, 4)
    assert found.mean_with == pytest.approx(1 / 3) and found.mean_without == pytest.approx(2.0)
    assert found.delta == pytest.approx(5 / 3)  # fewer unanswered with it: better, so positive
    lo, hi = found.interval
    assert lo < found.delta < hi and hi - found.delta == pytest.approx(found.delta - lo)
    assert found.status == "measuring" and found.method == "unpaired"
    # the text is the lesson's as built now from the runs not given it, never the stored one
    assert found.text == (
        "Sub-queries that found nothing worth keeping: 8 of 16 across 4 of the last 4 reports. Phrase each one "
        "as a question a single page can answer directly."
    )


def test_a_higher_is_better_score_keeps_its_sign(tmp_path: Path) -> None:
    for i, value in enumerate([4, 5]):
        put(tmp_path, with_coverage(i, value, applied=(COUNTER,)))
    for i, value in enumerate([3, 3, 4]):
        put(tmp_path, with_coverage(10 + i, value, withheld=(COUNTER,)))
    found = effect(tmp_path, COUNTER)
    assert found.target == "scores.coverage"
    assert found.delta == pytest.approx(4.5 - 10 / 3) and found.interval[0] < found.delta < found.interval[1]
    # its mean-score check: the same runs' mean scores (coverage is one of five scores)
    assert found.score.target == "mean_score" and found.score.delta == pytest.approx((4.5 - 10 / 3) / 5)


def test_no_interval_while_too_few_runs_give_no_variance(tmp_path: Path) -> None:
    put(tmp_path, with_coverage(0, 4, applied=(COUNTER,)))
    put(tmp_path, with_coverage(10, 3, withheld=(COUNTER,)))
    found = effect(tmp_path, COUNTER)
    assert (found.applied_runs, found.baseline_runs, found.delta, found.interval) == (1, 1, 1.0, None)
    assert found.as_dict()["interval"] is None and found.status == "measuring"


def test_arms_that_do_not_spread_still_give_an_interval_of_some_width(tmp_path: Path) -> None:
    """Integer scores that happen to be equal in every run have not shown a variance of zero:
    a constant difference of one point over 5 + 5 runs decides nothing."""
    for i in range(5):
        put(tmp_path, with_coverage(i, 4, applied=(COUNTER,)))
        put(tmp_path, with_coverage(10 + i, 3, withheld=(COUNTER,)))
    found = effect(tmp_path, COUNTER)
    lo, hi = found.interval
    assert found.delta == 1.0 and hi - lo > 1.0 and lo < 0 < hi
    assert found.score.interval[1] - found.score.interval[0] > 0.2
    assert found.status == "active"


def _seed_worse(meta: Path, applied: int = 5, withheld: int = 5, reason: str = "trial") -> None:
    """Runs given COUNTER covered the question worse than baseline runs that held it back."""
    for i in range(applied):
        put(
            meta,
            with_coverage(i, [2, 2, 3, 2, 2, 3][i % 6], applied=(COUNTER,), tags=("missing_counterarguments",)),
        )
    for i in range(withheld):
        put(
            meta,
            with_coverage(
                40 + i, [4, 4, 3, 4, 4, 5][i % 6], withheld=(COUNTER,), tags=("missing_counterarguments",),
                reason=reason,
            ),
        )


def test_measuring_until_five_runs_of_each_kind_then_retired_when_an_interval_lies_below_zero(
    tmp_path: Path,
) -> None:
    _seed_worse(tmp_path, applied=4)
    assert effect(tmp_path, COUNTER).status == "measuring"
    put(tmp_path, with_coverage(4, 2, applied=(COUNTER,), tags=("missing_counterarguments",)))
    found = effect(tmp_path, COUNTER)
    assert (found.applied_runs, found.baseline_runs) == (5, 5) and found.delta < 0
    assert found.status != "retired", "5 + 5 runs with no spread to speak of: too few to decide"
    _seed_worse(tmp_path, applied=12, withheld=12)
    found = effect(tmp_path, COUNTER)
    assert found.status == "retired" and found.score.interval[1] < 0
    assert found.decided_on in ("scores.coverage", "mean_score")


def test_active_when_the_interval_does_not_lie_below_zero(tmp_path: Path) -> None:
    for i, value in enumerate([3, 4, 4, 5, 3]):
        put(tmp_path, with_coverage(i, value, applied=(COUNTER,)))
    for i, value in enumerate([4, 3, 4, 4, 3]):
        put(tmp_path, with_coverage(20 + i, value, withheld=(COUNTER,)))
    found = effect(tmp_path, COUNTER)
    assert found.interval[0] < 0 < found.interval[1] and found.status == "active"


def test_what_effects_leave_out(tmp_path: Path) -> None:
    key = "geography:regions"
    put(tmp_path, make_critique(0, scores=(4, 4, 4, 3, 4), applied=(key,)))
    put(tmp_path, make_critique(1, scores=(4, 4, 4, None, 4), applied=(key,)))  # target does not apply
    put(tmp_path, make_critique(2, scores=(4, 4, 4, 5, 4), applied=(key,), domain="health"))  # other domain
    put(
        tmp_path, make_critique(when=NOW + timedelta(days=2), scores=(4, 4, 4, 1, 4), applied=(key,))
    )  # future
    put_raw(tmp_path, make_critique(3, scores=(4, 4, 4, 5, 4), applied=(key,)), mean_score="1.0")  # invalid
    put(tmp_path, make_critique(4, scores=(4, 4, 4, 2, 4), withheld=(key,)))
    found = effect(tmp_path, key)
    # the run where its target does not apply still counts in its arm, for the mean score
    assert (found.applied_runs, found.baseline_runs, found.mean_with, found.mean_without) == (2, 1, 3.0, 2.0)
    assert found.score.mean_with == pytest.approx(3.9)
    health = effect(tmp_path, key, domain="health")
    assert (health.applied_runs, health.baseline_runs, health.delta) == (1, 0, None)
    domains = {(e.domain, e.key) for e in lesson_effects(tmp_path, now=NOW)}
    assert domains == {("health", key), ("technology", key)}


def select(meta: Path, **kw):
    kw.setdefault("control_fraction", 0.0)
    kw.setdefault("rng", random.Random(0))
    return select_lessons(meta, "technology", now=NOW, **kw)


def test_the_domain_wide_suspension_stays_as_a_second_guard(tmp_path: Path) -> None:
    _seed_worse(tmp_path, applied=8, withheld=8, reason="control")  # adaptive runs worse than control runs
    assert effect(tmp_path, COUNTER).baseline_runs == 0, "control runs are in no lesson's arm"
    selection = select(tmp_path, rng=random.Random(1))  # its whole-run draw, 0.13: not one kept adaptive
    assert selection.lessons == () and selection.reason.startswith("lessons suspended for technology")
    assert WithheldLesson(COUNTER, "suspended") in selection.withheld  # a suspended run is a baseline too
    # about one run in four stays adaptive, so that new evidence can lift the suspension
    kept = [select(tmp_path, rng=random.Random(seed), trial_probability=0.0).adaptive for seed in range(200)]
    assert 35 <= sum(kept) <= 65


def test_a_retired_lesson_is_not_given_is_listed_with_its_numbers_and_is_in_no_arm(tmp_path: Path) -> None:
    _seed_worse(tmp_path, applied=12, withheld=12)  # every critique shows missing counterarguments: it is built
    for i in range(6):  # other lessons did well, so the domain as a whole is not suspended
        put(tmp_path, make_critique(60 + i, scores=(5, 5, 5, 5, 5), applied=("primary:evidence",)))
    retired = effect(tmp_path, COUNTER)
    assert retired.status == "retired"
    selection = select(tmp_path)
    keys = [lesson.key for lesson in selection.lessons]
    assert COUNTER not in keys and "coverage:low-score" in keys  # coverage 2 in 4 of 10 also teaches
    reason = dict(selection.excluded)[COUNTER]
    assert reason == decision_words(retired)
    assert reason.startswith("retired on run ") and ": lowered the coverage by 1.67 (always-valid interval [" in reason
    assert (round(retired.mean_with, 2), retired.mean_without, round(retired.delta, 2)) == (2.33, 4.0, -1.67)
    assert {"file": COUNTER, "reason": reason} in selection.as_record()["excluded"]
    assert WithheldLesson(COUNTER, "retired") in selection.withheld
    baseline = select(tmp_path, force_control=True)
    assert (
        baseline.lessons == ()
        and WithheldLesson(COUNTER, "retired") in baseline.withheld
        and WithheldLesson("coverage:low-score", "no_lessons") in baseline.withheld
    )
    # runs that held it back because it is retired are in neither of its arms: its evidence stands
    for i in range(8):
        put(tmp_path, with_coverage(70 + i, 2, withheld=(COUNTER,), reason="retired", tags=("missing_counterarguments",)))
    later = effect(tmp_path, COUNTER)  # the domain has had 8 more runs; the lesson's arms are as they were
    assert replace(later, trial_runs=retired.trial_runs, decided_after=retired.decided_after) == retired
    assert later.trial_runs > retired.trial_runs


def test_effects_as_json_fields(tmp_path: Path) -> None:
    put(tmp_path, with_coverage(0, 4, applied=(COUNTER,)))
    data = effect(tmp_path, COUNTER).as_dict()
    assert list(data) == [
        "key", "stage", "target", "text", "domain", "applied_runs", "baseline_runs",
        "mean_with", "mean_without", "delta", "interval", "method", "paired_questions", "confounded_with", "status",
        "score", "decided_on", "decided_after", "decided_at", "trial_runs", "more_runs", "reinstated",
        "fact_recall", "critic_tracking",
    ]  # fmt: skip
    assert data["fact_recall"] is None and data["critic_tracking"] is None  # no eval graded its runs
    assert data["mean_with"] == 4.0 and data["mean_without"] is None and data["delta"] is None
