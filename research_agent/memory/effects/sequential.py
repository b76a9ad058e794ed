"""Decisions that stay right however often they are looked at.

A lesson's effect is looked at again before every run of its domain. A fixed 90% interval
re-tested at every look is wrong far more often than one time in ten: a lesson that does
nothing drifts outside it at some look in a third of long histories. This module gives an
*always-valid* interval instead (a confidence sequence): the chance that it ever excludes the
true difference, at any of the looks, however many, is at most ``alpha``.

The estimate (:func:`estimate`) groups the runs into *cells*: the probability with which the
run's draw withheld the lesson (``stratum``: runs drawn at different probabilities are never
compared with each other, so a change of probability cannot mix in a change over time) and
the normalized question. Within cells that hold runs of both arms, the question's own level
cancels (question fixed effects: each cell's difference, weighted by ``n_with * n_without /
n``, with the residual variance of that model); the runs of cells that hold one arm only are
compared unpaired, per stratum, each question's mean one value (the runs of one question
share its level). The parts are combined by inverse
variance. A variance is never taken below :func:`variance_floor` (integer scores that happen
not to spread have not shown a variance of zero), so no interval has zero width.

The boundary (:func:`radius`) is the normal-mixture one (Robbins 1970; the mixture sequential
probability ratio test of Johari et al. 2017): with ``x = MIXING * n_with * n_without / n``, the
estimate is ``z`` standard errors from a difference when ``z**2 > (1 + 1/x) * (2 log(1/alpha) +
log(1 + x))`` (about 3.1 standard errors at ``alpha`` 0.05 over the range that matters), then
widened from the normal to Student's t for the degrees of freedom the variance rests on
(Fisher's expansion), since a variance estimated from few runs is itself uncertain.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass

__all__ = [
    "ALPHA",
    "MIXING",
    "MIN_PAIRED_DF",
    "Cell",
    "Tally",
    "Estimate",
    "estimate",
    "radius",
    "variance_floor",
    "t_from_z",
]

ALPHA = 0.05  # the chance that a lesson which does nothing is ever retired or called helpful
MIXING = 1.0  # the mixture's spread of effects, in standard deviations of one run: tunes where it is tightest
MIN_PAIRED_DF = 8  # degrees of freedom a part needs before it is weighed against another


@dataclass
class Tally:
    """Running sums of one arm's values in one cell."""

    n: int = 0
    total: float = 0.0
    squares: float = 0.0

    def add(self, value: float) -> None:
        self.n += 1
        self.total += value
        self.squares += value * value

    def merged(self, other: Tally) -> Tally:
        return Tally(self.n + other.n, self.total + other.total, self.squares + other.squares)

    @property
    def mean(self) -> float:
        return self.total / self.n

    @property
    def spread(self) -> float:
        """The sum of squared deviations from the mean (0 for fewer than 2 values)."""
        if self.n < 2:
            return 0.0
        return max(0.0, self.squares - self.total * self.total / self.n)


Cell = tuple[Hashable, Hashable]  # (stratum, question)
Cells = Mapping[Cell, tuple[Tally, Tally]]  # cell -> (with, without)


@dataclass(frozen=True)
class Estimate:
    """``with - without`` and its variance, with the degrees of freedom the variance rests on."""

    delta: float
    variance: float
    df: float
    n_with: int
    n_without: int
    paired_questions: int  # cells compared within themselves


def variance_floor(step: float) -> float:
    """The least variance granted to values that move in steps of ``step`` (1 for a score, 0.2
    for a mean of five scores): that of a value falling on either of two neighbouring steps."""
    return step * step / 4


def _paired(cells: list[tuple[Tally, Tally]], floor: float) -> tuple[float, float, float] | None:
    """(delta, variance, df) with question fixed effects over ``cells`` (both arms in each)."""
    runs = sum(w.n + o.n for w, o in cells)
    df = runs - len(cells) - 1
    if df < 1:
        return None
    weights = [w.n * o.n / (w.n + o.n) for w, o in cells]
    gaps = [w.mean - o.mean for w, o in cells]
    total = math.fsum(weights)
    delta = math.fsum(wt * gap for wt, gap in zip(weights, gaps, strict=True)) / total
    residual = math.fsum(w.spread + o.spread for w, o in cells)
    residual += math.fsum(wt * gap * gap for wt, gap in zip(weights, gaps, strict=True)) - delta * delta * total
    sigma2 = max(residual / df, floor)
    return delta, sigma2 / total, df


Part = tuple[float, float, float]  # (delta, its variance, the degrees of freedom of that variance)


def _spread(with_: list[float], without: list[float]) -> tuple[float, int]:
    """The pooled variance of two groups of values around their own means, and its df."""
    k = len(with_) + len(without)
    if not with_ or not without or k < 3:
        return math.nan, 0
    mean_with, mean_without = math.fsum(with_) / len(with_), math.fsum(without) / len(without)
    spread = math.fsum((v - mean_with) ** 2 for v in with_) + math.fsum((v - mean_without) ** 2 for v in without)
    return spread / (k - 2), k - 2


def _unpaired(with_: list[float], without: list[float], floor: float, pooled: tuple[float, int]) -> Part | None:
    """The difference of two groups of question means (the runs of one question share its
    level, so each question's mean in an arm is one value) with the ``pooled`` variance of
    such values and its df."""
    variance, df = pooled
    if not with_ or not without or df < 1:
        return None
    delta = math.fsum(with_) / len(with_) - math.fsum(without) / len(without)
    return delta, max(variance, floor) * (1 / len(with_) + 1 / len(without)), df


def _units(cells: Iterable[tuple[Hashable, Tally, Tally]]) -> dict[Hashable, tuple[list[float], list[float]]]:
    """Per stratum, each cell's mean in each arm it holds."""
    groups: dict[Hashable, tuple[list[float], list[float]]] = {}
    for stratum, with_, without in cells:
        group = groups.setdefault(stratum, ([], []))
        for index, tally in enumerate((with_, without)):
            if tally.n:
                group[index].append(tally.mean)
    return groups


def _parts(cells: Cells, floor: float) -> tuple[list[Part], int]:
    """The parts to combine, and how many questions were paired: question fixed effects over the
    cells that hold both arms once they give :data:`MIN_PAIRED_DF` degrees of freedom, with the
    one-armed cells compared unpaired beside them; else every cell's arms compared unpaired. An
    unpaired part takes its variance from every question mean of its stratum, so that it rests
    on as many degrees of freedom as there are questions, not only on its own few."""
    both = [pair for pair in cells.values() if pair[0].n and pair[1].n]
    paired = _paired(both, floor) if both else None
    every = _units((stratum, w, o) for (stratum, _), (w, o) in cells.items())
    pooled = {stratum: _spread(*groups) for stratum, groups in every.items()}
    if paired is None or paired[2] < MIN_PAIRED_DF:
        found = [_unpaired(*groups, floor, pooled[stratum]) for stratum, groups in every.items()]
        return [part for part in found if part is not None], 0
    single = _units((stratum, w, o) for (stratum, _), (w, o) in cells.items() if not (w.n and o.n))
    rest = [_unpaired(*groups, floor, pooled[stratum]) for stratum, groups in single.items()]
    return [paired, *(part for part in rest if part is not None and part[2] >= MIN_PAIRED_DF)], len(both)


def estimate(cells: Cells, *, floor: float) -> Estimate | None:
    """The combined estimate over ``cells`` (see the module docstring); None while nothing can
    be compared."""
    parts, paired = _parts(cells, floor)
    if not parts:
        return None
    info = math.fsum(1 / v for _, v, _ in parts)
    delta = math.fsum(d / v for d, v, _ in parts) / info
    df = info * info / math.fsum((1 / v) ** 2 / f for _, v, f in parts)
    n_with = sum(pair[0].n for pair in cells.values())
    n_without = sum(pair[1].n for pair in cells.values())
    return Estimate(delta, 1 / info, df, n_with, n_without, paired)


def t_from_z(z: float, df: float) -> float:
    """The Student's t value with ``df`` degrees of freedom that has the tail of the normal's
    ``z`` (Fisher's expansion, Abramowitz and Stegun 26.7.5; ``df`` taken as at least 3)."""
    d = max(df, 3.0)
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    return z + g1 / d + g2 / d**2 + g3 / d**3


def radius(found: Estimate, *, alpha: float = ALPHA, mixing: float = MIXING) -> float:
    """Half the width of the always-valid interval around ``found.delta`` at level ``1 - alpha``."""
    x = mixing * found.n_with * found.n_without / (found.n_with + found.n_without)
    z = math.sqrt((1 + 1 / x) * (2 * math.log(1 / alpha) + math.log1p(x)))
    return t_from_z(z, found.df) * math.sqrt(found.variance)

