"""A lesson's effect from its runs: with minus without, paired by question, adjusted for the
other lessons given beside it.

The runs are grouped into *cells*: the probability with which the run's draw withheld the lesson
(the ``stratum``: runs drawn at different probabilities are never compared with each other, so a
change of probability cannot mix in a change over time) and the normalized question. Each run
also carries its *covariates*: whether each of the other lessons was given in it.

* **Within questions** (:func:`_within`): a regression of the value on the lesson and the other
  lessons with a level of its own for each cell (question fixed effects), over every cell; only
  cells that hold both arms say anything about the lesson, every cell about the others and the
  noise. The question's own level cancels, and so does the share of the other lessons: each is
  given independently of this one, so adjusting for them removes their noise, not a bias.
* **Between questions** (:func:`_between`): the cells that hold one arm only, each question's
  mean (adjusted for the other lessons with the within-question coefficients) one value, since
  the runs of one question share its level; compared unpaired per stratum, with the pooled
  variance of every question mean of that stratum.

The two parts are combined by inverse variance once the within part rests on
:data:`MIN_PAIRED_DF` degrees of freedom (so that neither weight is a guess); before that, every
cell's arms are compared unpaired, unadjusted. A variance is never taken below the floor the
caller gives (integer scores that happen not to spread have not shown a variance of zero).

:class:`Arms` gathers one lesson's runs into the cells of its two measures (its own target and the
mean score) as they are read.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass, field

__all__ = ["MIN_PAIRED_DF", "Cell", "Tally", "Arms", "Estimate", "estimate"]

MIN_PAIRED_DF = 8  # degrees of freedom the within-question part needs before it is weighed against another

Cell = tuple[Hashable, Hashable]  # (stratum, question)
Part = tuple[float, float, float]  # (delta, its variance, the degrees of freedom of that variance)


@dataclass
class Tally:
    """Running sums of one arm's runs in one cell: of ``(covariates..., value)`` and their products."""

    n: int = 0
    sums: list[float] = field(default_factory=list)
    cross: list[list[float]] = field(default_factory=list)

    def add(self, value: float, covariates: Sequence[float] = ()) -> None:
        vector = [*covariates, value]
        if not self.n:
            self.sums = [0.0] * len(vector)
            self.cross = [[0.0] * len(vector) for _ in vector]
        self.n += 1
        for i, a in enumerate(vector):
            self.sums[i] += a
            row = self.cross[i]
            for j, b in enumerate(vector):
                row[j] += a * b

    @property
    def mean(self) -> float:
        return self.sums[-1] / self.n


Cells = Mapping[Cell, tuple[Tally, Tally]]  # cell -> (with, without)


@dataclass
class Arms:
    """One key's runs as cells (trial probability, question), each with its own target's values
    and the mean scores, per arm, and whether each of the ``covariates`` (the other lessons) was
    given beside it."""

    covariates: tuple[str, ...] = ()
    target: dict[Cell, tuple[Tally, Tally]] = field(default_factory=dict)
    score: dict[Cell, tuple[Tally, Tally]] = field(default_factory=dict)

    @classmethod
    def empty(cls) -> Arms:
        return cls()

    @classmethod
    def of(cls, with_: Sequence[float], without: Sequence[float]) -> Arms:
        """Values with no question known: each run its own question (never paired); the mean
        score the same as the target."""
        arms = cls()
        for arm, values in (("applied", with_), ("withheld", without)):
            for i, value in enumerate(values):
                arms.add(arm, f"{arm}{i}", value, score=value)
        return arms

    def add(
        self, arm: str, question: str, value: float | None, *, score: float | None, p: float | None = None,
        others: Collection[str] = (),
    ) -> None:  # fmt: skip
        """One run: ``arm`` applied or withheld, its question, its target's ``value`` and mean
        ``score`` (either None where it does not apply), ``p`` its trial probability, ``others``
        the other lessons it was given."""
        cell = ("" if p is None else round(p, 6), question)
        index = 0 if arm == "applied" else 1
        given = [1.0 if key in others else 0.0 for key in self.covariates]
        for cells, found in ((self.target, value), (self.score, score)):
            if found is not None:
                pair = cells.get(cell)
                if pair is None:
                    pair = cells[cell] = (Tally(), Tally())
                pair[index].add(found, given)

    def runs(self) -> tuple[int, int]:
        """Runs in each arm (those with a mean score: every measurable run)."""
        return sum(p[0].n for p in self.score.values()), sum(p[1].n for p in self.score.values())


@dataclass(frozen=True)
class Estimate:
    """``with - without`` and its variance, with the degrees of freedom the variance rests on."""

    delta: float
    variance: float
    df: float
    n_with: int
    n_without: int
    paired_questions: int  # cells that held both arms, when the within-question part was used


def _centered(with_: Tally, without: Tally) -> list[list[float]]:
    """The cell's cross-products of ``(given, covariates..., value)`` around the cell's means."""
    k = len((with_ if with_.n else without).sums)
    n = with_.n + without.n
    zero = [0.0] * k
    ws, os_ = with_.sums or zero, without.sums or zero
    sums = [float(with_.n), *(ws[i] + os_[i] for i in range(k))]
    cross = [[0.0] * (k + 1) for _ in range(k + 1)]
    cross[0][0] = float(with_.n)
    for i in range(k):
        cross[0][i + 1] = cross[i + 1][0] = ws[i]
        for j in range(k):
            cross[i + 1][j + 1] = (with_.cross[i][j] if with_.n else 0.0) + (without.cross[i][j] if without.n else 0.0)
    return [[cross[i][j] - sums[i] * sums[j] / n for j in range(k + 1)] for i in range(k + 1)]


def _inverse(matrix: list[list[float]]) -> list[list[float]] | None:
    """The inverse of a small symmetric matrix (Gauss-Jordan), or None when it is singular."""
    size = len(matrix)
    work = [[*row, *(1.0 if i == j else 0.0 for j in range(size))] for i, row in enumerate(matrix)]
    for col in range(size):
        pivot = max(range(col, size), key=lambda r: abs(work[r][col]))
        if abs(work[pivot][col]) <= 1e-9 * max(1.0, abs(matrix[col][col])):
            return None
        work[col], work[pivot] = work[pivot], work[col]
        scale = work[col][col]
        work[col] = [v / scale for v in work[col]]
        for r in range(size):
            if r != col and work[r][col]:
                factor = work[r][col]
                work[r] = [a - factor * b for a, b in zip(work[r], work[col], strict=True)]
    return [row[size:] for row in work]


def _fit(total: list[list[float]]) -> tuple[list[int], list[list[float]], list[float]] | None:
    """The regressors kept (the lesson first, then the covariates that vary within cells and are
    not collinear with those before them), the inverse of their cross-products, and the
    coefficients; None when the lesson itself does not vary within any cell."""
    y = len(total) - 1
    kept = [0] + [i for i in range(1, y) if total[i][i] > 1e-9]
    while True:
        inverse = _inverse([[total[i][j] for j in kept] for i in kept])
        if inverse is not None:
            coefficients = [sum(inverse[a][b] * total[kept[b]][y] for b in range(len(kept))) for a in range(len(kept))]
            return kept, inverse, coefficients
        if len(kept) == 1:
            return None
        kept.pop()


def _within(cells: Cells, floor: float) -> tuple[Part, list[float]] | None:
    """The within-question part, and the covariates' coefficients (0 for one dropped)."""
    used = [(w, o) for w, o in cells.values() if w.n + o.n >= 2]
    if not used:
        return None
    total: list[list[float]] | None = None
    for w, o in used:
        centered = _centered(w, o)
        total = centered if total is None else [[a + b for a, b in zip(r, s, strict=True)] for r, s in zip(total, centered, strict=True)]
    assert total is not None
    fitted = _fit(total)
    if fitted is None:
        return None
    kept, inverse, beta = fitted
    y = len(total) - 1
    df = sum(w.n + o.n for w, o in used) - len(used) - len(kept)
    if df < 1:
        return None
    residual = total[y][y] - sum(b * total[i][y] for b, i in zip(beta, kept, strict=True))
    sigma2 = max(residual / df, floor)
    covariates = [0.0] * (y - 1)
    for b, i in zip(beta[1:], kept[1:], strict=True):
        covariates[i - 1] = b
    return (beta[0], sigma2 * inverse[0][0], df), covariates


def _spread(with_: list[float], without: list[float]) -> tuple[float, int]:
    """The pooled variance of two groups of values around their own means, and its df."""
    k = len(with_) + len(without)
    if not with_ or not without or k < 3:
        return math.nan, 0
    mean_with, mean_without = math.fsum(with_) / len(with_), math.fsum(without) / len(without)
    spread = math.fsum((v - mean_with) ** 2 for v in with_) + math.fsum((v - mean_without) ** 2 for v in without)
    return spread / (k - 2), k - 2


def _unit(tally: Tally, beta: Sequence[float]) -> float:
    """A question's mean in one arm, less the other lessons' share by ``beta``."""
    return (tally.sums[-1] - sum(b * s for b, s in zip(beta, tally.sums, strict=False))) / tally.n


def _between(cells: Cells, floor: float, beta: Sequence[float], only_one_arm: bool) -> list[Part]:
    """Per stratum, the question means of the arms compared unpaired (see the module docstring)."""
    every: dict[Hashable, tuple[list[float], list[float]]] = {}
    chosen: dict[Hashable, tuple[list[float], list[float]]] = {}
    for (stratum, _), (w, o) in cells.items():
        for index, tally in enumerate((w, o)):
            if tally.n:
                every.setdefault(stratum, ([], []))[index].append(_unit(tally, beta))
                if not (only_one_arm and w.n and o.n):
                    chosen.setdefault(stratum, ([], []))[index].append(_unit(tally, beta))
    parts = []
    for stratum, (with_, without) in chosen.items():
        variance, df = _spread(*every[stratum])
        if with_ and without and df >= 1:
            delta = math.fsum(with_) / len(with_) - math.fsum(without) / len(without)
            parts.append((delta, max(variance, floor) * (1 / len(with_) + 1 / len(without)), float(df)))
    return parts


def estimate(cells: Cells, *, floor: float) -> Estimate | None:
    """The combined estimate over ``cells`` (see the module docstring); None while nothing can
    be compared."""
    within = _within(cells, floor)
    both = sum(1 for w, o in cells.values() if w.n and o.n)
    if within is None or within[0][2] < MIN_PAIRED_DF or not both:
        parts, paired = _between(cells, floor, (), only_one_arm=False), 0
    else:
        rest = _between(cells, floor, within[1], only_one_arm=True)
        parts, paired = [within[0], *(p for p in rest if p[2] >= MIN_PAIRED_DF)], both
    if not parts:
        return None
    info = math.fsum(1 / v for _, v, _ in parts)
    delta = math.fsum(d / v for d, v, _ in parts) / info
    df = info * info / math.fsum((1 / v) ** 2 / f for _, v, f in parts)
    n_with = sum(pair[0].n for pair in cells.values())
    n_without = sum(pair[1].n for pair in cells.values())
    return Estimate(delta, 1 / info, df, n_with, n_without, paired)
