"""How far the critic's scores track ground truth: Spearman's rank correlation with its interval.

:func:`critic_tracking` is Spearman's rank correlation between the critic's scores and a ground
truth measure over the same reports, with a 90% interval (Fisher's z, with the standard error
Fieller, Hartley and Pearson give for ranks), and a verdict: the critic tracks ground truth only
when the interval lies on the expected side of zero; otherwise it tells nothing (or runs against
it). An eval's scorecard (:mod:`research_agent.eval.scorecard`) and ``memory effects`` (over the
trial ledger's graded runs, :mod:`.recall`) both say it with this.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from ....shapes import Plain, shape
from ..intervals import t_quantile_90

__all__ = ["signed", "Tracking", "critic_tracking", "spearman", "MIN_TRACKING"]

MIN_TRACKING = 5  # reports needed before a rank correlation says anything


def signed(value: float) -> str:
    """``+0.12``, ``−0.06`` (a true minus sign), ``+0.00``."""
    text = f"{abs(value):.2f}"
    return f"{'−' if value < 0 and text != '0.00' else '+'}{text}"


def _ranks(values: Sequence[float]) -> list[float]:
    """Ranks from 1, ties given the mean of the ranks they span."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for i in order[start : end + 1]:
            ranks[i] = (start + end) / 2 + 1
        start = end + 1
    return ranks


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Spearman's rho of paired values (None when either side does not vary, or fewer than 3)."""
    if len(xs) < 3 or len(set(xs)) < 2 or len(set(ys)) < 2:
        return None
    return statistics.correlation(_ranks(xs), _ranks(ys))


@dataclass(frozen=True)
class Tracking(Plain):
    """How one critic score tracks one ground-truth measure: rho with its 90% interval, over ``n``
    reports, and the verdict in words."""

    critic: str
    truth: str
    n: int
    rho: float | None = field(metadata=shape(digits=3))
    interval: tuple[float, float] | None = field(metadata=shape(digits=3))
    verdict: Literal["tracks", "tells nothing", "runs against"]
    words: str


def _interval(rho: float, n: int) -> tuple[float, float] | None:
    if n <= 3:
        return None
    z = math.atanh(max(-0.999999, min(0.999999, rho)))
    half = t_quantile_90(n - 3) * math.sqrt(1.06 / (n - 3))
    return math.tanh(z - half), math.tanh(z + half)


def critic_tracking(critic: str, truth: str, pairs: Sequence[tuple[float, float]], *, sign: int = 1) -> Tracking:
    """How the critic's ``critic`` scores track ground truth's ``truth`` over ``pairs`` (score, truth).
    ``sign`` -1: a good critic's score falls as the measure rises (unsupported facts)."""
    n = len(pairs)
    about = f"the critic's {critic.replace('_', ' ')} against {truth.replace('_', ' ')}"
    if n < MIN_TRACKING:
        return Tracking(critic, truth, n, None, None, "tells nothing",
                        f"{about}: {n} critiqued report(s), too few to tell (at least {MIN_TRACKING})")
    scores, truths = [p[0] for p in pairs], [p[1] for p in pairs]
    rho = spearman(scores, truths)
    if rho is None:
        still = "its scores" if len(set(scores)) < 2 else f"{truth.replace('_', ' ')}"
        return Tracking(critic, truth, n, None, None, "tells nothing",
                        f"{about}: {still} did not vary over {n} reports, so the critic tells nothing here")
    interval = _interval(rho, n)
    assert interval is not None  # n >= MIN_TRACKING > 3
    shown = f"rho {signed(rho)} [{signed(interval[0])}, {signed(interval[1])}] over {n} reports"
    low, high = (interval[0] * sign, interval[1] * sign) if sign > 0 else (interval[1] * sign, interval[0] * sign)
    if low > 0:
        return Tracking(critic, truth, n, rho, interval, "tracks", f"{about}: {shown}: the critic tracks ground truth")
    if high < 0:
        return Tracking(critic, truth, n, rho, interval, "runs against",
                        f"{about}: {shown}: the critic runs against ground truth")
    return Tracking(critic, truth, n, rho, interval, "tells nothing",
                    f"{about}: {shown}: the critic tells nothing about it on this endpoint")
