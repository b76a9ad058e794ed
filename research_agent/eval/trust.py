"""What an eval's numbers allow one to say: paired differences in words, and how far the critic tracks
ground truth.

* :func:`paired` is a difference of ground-truth measures over the same questions with its 90%
  interval (:func:`~research_agent.memory.effects.intervals.paired_difference`, the interval
  ``memory ab`` uses), never narrower than the measure's steps allow (:func:`~research_agent.memory
  .effects.sequential.variance_floor`: values that happen not to differ have not shown a variance
  of zero), and :func:`change_words` says it plainly: "no significant change in fact recall:
  round 3 vs round 1 +0.00 [−0.06, +0.06]".
* :func:`critic_tracking` is Spearman's rank correlation between the critic's scores and a ground
  truth measure over the same reports, with a 90% interval (Fisher's z, with the standard error
  Fieller, Hartley and Pearson give for ranks), and a verdict: the critic tracks ground truth only
  when the interval lies on the expected side of zero; otherwise it tells nothing (or runs against it).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ..memory.effects.intervals import Difference, paired_difference, t_quantile_90
from ..memory.effects.sequential import variance_floor

__all__ = ["paired", "change_words", "signed", "Tracking", "critic_tracking", "spearman", "MIN_TRACKING"]

MIN_TRACKING = 5  # reports needed before a rank correlation says anything


def signed(value: float) -> str:
    """``+0.12``, ``−0.06`` (a true minus sign), ``+0.00``."""
    text = f"{abs(value):.2f}"
    return f"{'−' if value < 0 and text != '0.00' else '+'}{text}"


def paired(pairs: Sequence[tuple[float, float]], *, step: float) -> Difference:
    """``with - without`` over ``pairs`` with its 90% interval, the variance at least that of values
    moving in steps of ``step``."""
    return paired_difference(pairs, floor=variance_floor(step))


def change_words(measure: str, difference: Difference, what: str) -> str:
    """The difference in words: "no significant change in fact recall: round 3 vs round 1 +0.00
    [−0.06, +0.06]", "fact recall rose: ...", "... fell: ...", or why nothing can be said."""
    if difference.delta is None:
        return f"{measure}: nothing to compare ({what}: no question graded in both)"
    if difference.interval is None:
        return f"{measure}: {what} {signed(difference.delta)} (too few questions for an interval)"
    low, high = difference.interval
    shown = f"{what} {signed(difference.delta)} [{signed(low)}, {signed(high)}]"
    if low <= 0 <= high:
        return f"no significant change in {measure}: {shown}"
    return f"{measure} {'rose' if low > 0 else 'fell'}: {shown}"


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
class Tracking:
    """How one critic score tracks one ground-truth measure: rho with its 90% interval, over ``n``
    reports, and the verdict in words."""

    critic: str
    truth: str
    n: int
    rho: float | None
    interval: tuple[float, float] | None
    verdict: Literal["tracks", "tells nothing", "runs against"]
    words: str

    def as_dict(self) -> dict[str, object]:
        return {"critic": self.critic, "truth": self.truth, "n": self.n,
                "rho": None if self.rho is None else round(self.rho, 3),
                "interval": None if self.interval is None else [round(v, 3) for v in self.interval],
                "verdict": self.verdict, "words": self.words}  # fmt: skip


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
