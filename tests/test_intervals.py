"""Differences of means with 90% intervals (paired and Welch)."""

from __future__ import annotations

import pytest

from research_agent.memory.effects.intervals import paired_difference, t_quantile_90, unpaired_difference


def test_paired_difference_matches_a_hand_computed_t_interval() -> None:
    d = paired_difference([(4, 3), (5, 3), (4, 4), (3, 2)])  # diffs 1, 2, 0, 1: mean 1, sd 0.8165
    assert d.delta == 1.0 and d.n_with == d.n_without == 4
    half = 2.353 * 0.816497 / 2
    assert d.interval == pytest.approx((1 - half, 1 + half), abs=1e-4)
    assert (d.mean_with, d.mean_without) == (4.0, 3.0)


def test_too_few_values_give_no_interval() -> None:
    assert paired_difference([]).delta is None
    assert paired_difference([(3, 1)]).interval is None and paired_difference([(3, 1)]).delta == 2
    one = unpaired_difference([4.0], [3.0, 2.0])
    assert one.delta == 1.5 and one.interval is None
    assert unpaired_difference([], [3.0]).delta is None


def test_welch_interval_and_flipping_for_lower_is_better() -> None:
    d = unpaired_difference([0.1, 0.2, 0.1, 0.2], [0.5, 0.6, 0.5, 0.6])
    assert d.delta == pytest.approx(-0.4)
    assert d.interval is not None and d.interval[1] < 0
    better = d.flipped()
    assert better.delta == pytest.approx(0.4) and better.interval[0] > 0
    assert better.interval == pytest.approx((-d.interval[1], -d.interval[0]))
    same = unpaired_difference([3, 3], [3, 3])
    assert same.interval == (0, 0)


def test_t_quantiles_shrink_toward_the_normal() -> None:
    assert t_quantile_90(1) == 6.314 and t_quantile_90(4.7) == 2.132 and t_quantile_90(500) == 1.645
