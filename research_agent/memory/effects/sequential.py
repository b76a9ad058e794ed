"""Decisions that stay right however often they are looked at.

A lesson's effect is looked at again before every run of its domain. A fixed 90% interval
re-tested at every look is wrong far more often than one time in ten: a lesson that does
nothing drifts outside it at some look in a third of long histories. This module gives an
*always-valid* interval instead (a confidence sequence): the chance that it ever excludes the
true difference, at any of the looks, however many, is at most ``alpha``.

The estimate it is put around comes from :mod:`.estimate` (paired by question, adjusted for the
other lessons). A variance is never taken below :func:`variance_floor` (integer scores that
happen not to spread have not shown a variance of zero), so no interval has zero width.

The boundary (:func:`radius`) is the normal-mixture one (Robbins 1970; the mixture sequential
probability ratio test of Johari et al. 2017): with ``x = MIXING * n_with * n_without / n``, the
estimate is ``z`` standard errors from a difference when ``z**2 > (1 + 1/x) * (2 log(1/alpha) +
log(1 + x))`` (about 3.2 standard errors at ``alpha`` 0.04 over the range that matters), then
widened from the normal to Student's t for the degrees of freedom the variance rests on
(Fisher's expansion), since a variance estimated from few runs is itself uncertain.
"""

from __future__ import annotations

import math

from .estimate import Estimate

__all__ = ["ALPHA", "MIXING", "radius", "variance_floor", "t_from_z"]

# The chance that a lesson which does nothing is ever retired or called helpful: 0.04, a margin under
# the 5% goal for what the approximations leave (a variance estimated, not known; the t expansion).
ALPHA = 0.04
MIXING = 1.0  # the mixture's spread of effects, in standard deviations of one run: tunes where it is tightest


def variance_floor(step: float) -> float:
    """The least variance granted to values that move in steps of ``step`` (1 for a score, 0.2
    for a mean of five scores): that of a value falling on either of two neighbouring steps."""
    return step * step / 4


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

