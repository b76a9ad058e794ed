"""What an eval's numbers allow one to say (research_agent/eval/trust.py): paired changes in words, and
how far the critic's scores track ground truth, saying plainly when they tell nothing."""

from __future__ import annotations

import random

import pytest

from research_agent.errors import InputError
from research_agent.eval.compare import compare_evals
from research_agent.eval.trust import change_words, critic_tracking, paired, signed, spearman


def test_signs_are_written_with_a_true_minus_and_zero_is_plus() -> None:
    assert (signed(0.123), signed(-0.06), signed(-0.0001), signed(0)) == ("+0.12", "−0.06", "+0.00", "+0.00")


def test_no_change_has_an_interval_as_wide_as_the_measure_s_steps_allow() -> None:
    same = paired([(0.5, 0.5), (1.0, 1.0), (0.0, 0.0), (1.0, 1.0)] * 5, step=1 / 3)
    assert same.delta == 0 and same.interval[0] < 0 < same.interval[1]
    assert change_words("fact recall", same, "round 3 vs round 1") == (
        f"no significant change in fact recall: round 3 vs round 1 +0.00 [{signed(same.interval[0])}, "
        f"{signed(same.interval[1])}]")


def test_a_real_change_is_said_to_rise_or_fall() -> None:
    better = paired([(1.0, 0.0)] * 8 + [(1.0, 1.0)] * 2, step=0.5)
    worse = paired([(0.0, 1.0)] * 8 + [(1.0, 1.0)] * 2, step=0.5)
    assert change_words("fact recall", better, "B vs A").startswith("fact recall rose: B vs A +0.80 [+")
    assert change_words("fact recall", worse, "B vs A").startswith("fact recall fell: B vs A −0.80 [−")
    assert "too few questions" in change_words("fact recall", paired([(1.0, 0.0)], step=1), "B vs A")
    assert "nothing to compare" in change_words("fact recall", paired([], step=1), "B vs A")


def test_spearman_ranks_ties_and_refuses_what_does_not_vary() -> None:
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert spearman([1, 1, 2, 2], [1, 2, 3, 4]) == pytest.approx(0.894, abs=0.001)
    assert spearman([3, 3, 3, 3], [1, 2, 3, 4]) is None and spearman([1, 2], [1, 2]) is None


def test_a_critic_that_tracks_ground_truth_is_told_apart_from_one_that_tells_nothing() -> None:
    rng = random.Random(4)
    truth = [rng.random() for _ in range(30)]
    following = [(1 + round(4 * t), t) for t in truth]
    noise = [(rng.randint(1, 5), t) for t in truth]
    tracks = critic_tracking("coverage", "fact_recall", following)
    tells_nothing = critic_tracking("coverage", "fact_recall", noise)
    assert tracks.verdict == "tracks" and tracks.interval[0] > 0 and "the critic tracks ground truth" in tracks.words
    assert tells_nothing.verdict == "tells nothing" and tells_nothing.interval[0] < 0 < tells_nothing.interval[1]
    assert "tells nothing about it on this endpoint" in tells_nothing.words
    against = critic_tracking("claim_support", "unsupported_facts", [(s, 5 - s + 0.1 * n) for n, (s, _) in
                                                                     enumerate(following)], sign=-1)  # fmt: skip
    assert against.verdict == "tracks", "fewer made-up facts where it scores claim support higher"
    flat = critic_tracking("coverage", "fact_recall", [(3, t) for t in truth])
    assert flat.verdict == "tells nothing" and "its scores did not vary over 30 reports" in flat.words
    few = critic_tracking("coverage", "fact_recall", following[:3])
    assert few.rho is None and "too few to tell" in few.words


def _card(ident: str, fingerprint: str, recalls: dict[str, list[float]]) -> dict:
    questions = [{"id": q, "graded": True, "recall": r, "found": 1 if r else 0, "cited": 1 if r else 0,
                  "checkpoints": [{}, {}], "unsupported": []} for q, rs in recalls.items() for r in rs]  # fmt: skip
    return {"id": ident, "world": {"name": "w", "fingerprint": fingerprint}, "questions": questions}


def test_compare_pairs_questions_averaging_rounds_and_refuses_another_world() -> None:
    a = _card("a", "f1", {"q1": [0.0, 1.0], "q2": [1.0], "q3": [0.5]})
    b = _card("b", "f1", {"q1": [1.0], "q2": [1.0], "q4": [1.0]})
    result = compare_evals(a, b)
    recall = next(m for m in result["measures"] if m["measure"] == "fact_recall")
    assert result["questions"] == 2 and recall["delta"] == pytest.approx(0.25)  # q1: 1 - 0.5, q2: 0
    with pytest.raises(InputError, match="not of the same world"):
        compare_evals(a, _card("c", "f2", {"q1": [1.0]}))
