"""Differences of means with a 90% interval: what a lesson's effect and an A/B are measured with.

Both helpers return a :class:`Difference` whose ``delta`` is ``with - without`` (callers
flip the sign for measures where lower is better, so that positive always means better).
The interval is Student's t: paired for an A/B over the same questions, Welch's for a
lesson's runs against the baseline runs in which it was eligible. With fewer than 2
values in an arm (or pair list) there is no interval (``None``). ``floor``: the least variance
granted to the differences (:func:`~.sequential.variance_floor`), so that integer scores that
happen to differ by the same amount in every pair do not give an interval of zero width.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

from ...shapes import Plain, shape

__all__ = ["Difference", "Moments", "paired_difference", "unpaired_difference", "welch_difference", "t_quantile_90"]

# Two-sided 90% (one-sided 0.95) quantiles of Student's t for 1-30 degrees of freedom.
_T95 = (
    6.314, 2.920, 2.353, 2.132, 2.015, 1.943, 1.895, 1.860, 1.833, 1.812,
    1.796, 1.782, 1.771, 1.761, 1.753, 1.746, 1.740, 1.734, 1.729, 1.725,
    1.721, 1.717, 1.714, 1.711, 1.708, 1.706, 1.703, 1.701, 1.699, 1.697,
)  # fmt: skip
_Z95 = 1.645
_FOUR = shape(digits=4)  # the means, the difference and the interval are written to 4 places


@dataclass(frozen=True)
class Difference(Plain):
    """``mean_with - mean_without`` and its 90% interval ``(lo, hi)``, or None when too few values."""

    mean_with: float | None = field(metadata=_FOUR)
    mean_without: float | None = field(metadata=_FOUR)
    delta: float | None = field(metadata=_FOUR)
    interval: tuple[float, float] | None = field(metadata=_FOUR)
    n_with: int
    n_without: int

    def flipped(self) -> Difference:
        """The same difference for a measure where lower is better (so positive means better)."""
        if self.delta is None:
            return self
        interval = None if self.interval is None else (-self.interval[1], -self.interval[0])
        return Difference(self.mean_with, self.mean_without, -self.delta, interval, self.n_with, self.n_without)


def t_quantile_90(df: float) -> float:
    """The t value for a two-sided 90% interval with ``df`` degrees of freedom (df >= 1)."""
    if df >= len(_T95) + 1:
        return _Z95
    return _T95[max(1, math.floor(df)) - 1]


def paired_difference(pairs: Sequence[tuple[float, float]], *, floor: float = 0.0) -> Difference:
    """The mean of ``with - without`` over pairs ``(with, without)``, with a paired t interval."""
    n = len(pairs)
    if n == 0:
        return Difference(None, None, None, None, 0, 0)
    diffs = [a - b for a, b in pairs]
    delta = statistics.fmean(diffs)
    interval = None
    if n >= 2:
        half = t_quantile_90(n - 1) * math.sqrt(max(statistics.variance(diffs), floor)) / math.sqrt(n)
        interval = (delta - half, delta + half)
    mean_with = statistics.fmean(a for a, _ in pairs)
    mean_without = statistics.fmean(b for _, b in pairs)
    return Difference(mean_with, mean_without, delta, interval, n, n)


@dataclass(frozen=True)
class Moments:
    """What Welch's interval needs of one arm: its size, mean and sample variance (None below 2 values)."""

    n: int
    mean: float | None
    variance: float | None

    @classmethod
    def of(cls, values: Sequence[float]) -> Moments:
        """From the values (sums in floating point: selection measures thousands of runs)."""
        n = len(values)
        if n == 0:
            return cls(0, None, None)
        mean = math.fsum(values) / n
        variance = math.fsum((v - mean) ** 2 for v in values) / (n - 1) if n >= 2 else None
        return cls(n, mean, variance)

    @classmethod
    def from_sums(cls, n: int, total: float, squares: float) -> Moments:
        """From the count, sum and sum of squares of the values (as a database adds them up)."""
        if n == 0:
            return cls(0, None, None)
        mean = total / n
        variance = max(0.0, (squares - total * mean) / (n - 1)) if n >= 2 else None
        return cls(n, mean, variance)


def unpaired_difference(with_: Sequence[float], without: Sequence[float]) -> Difference:
    """``mean(with_) - mean(without)`` with Welch's t interval (needs 2 values in each arm)."""
    return welch_difference(Moments.of(with_), Moments.of(without))


def welch_difference(with_: Moments, without: Moments) -> Difference:
    """:func:`unpaired_difference` from each arm's :class:`Moments`."""
    n1, n2, mean1, mean2 = with_.n, without.n, with_.mean, without.mean
    if mean1 is None or mean2 is None:
        return Difference(mean1, mean2, None, None, n1, n2)
    delta = mean1 - mean2
    if with_.variance is None or without.variance is None:
        return Difference(mean1, mean2, delta, None, n1, n2)
    v1, v2 = with_.variance / n1, without.variance / n2
    se = math.sqrt(v1 + v2)
    if se == 0:
        return Difference(mean1, mean2, delta, (delta, delta), n1, n2)
    df = (v1 + v2) ** 2 / (v1**2 / (n1 - 1) + v2**2 / (n2 - 1))
    half = t_quantile_90(df) * se
    return Difference(mean1, mean2, delta, (delta - half, delta + half), n1, n2)
