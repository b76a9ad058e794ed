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
(:func:`t_from_z`: exactly for few degrees of freedom, by Fisher's expansion for more), since a
variance estimated from few runs is itself uncertain.
"""

from __future__ import annotations

import math

from .estimate import Estimate

__all__ = ["ALPHA", "MIXING", "EXACT_BELOW", "radius", "variance_floor", "t_from_z"]

# The chance that a lesson which does nothing is ever retired or called helpful: 0.04, a margin under
# the 5% goal for what the approximations leave (a variance estimated, not known; the t expansion).
ALPHA = 0.04
MIXING = 1.0  # the mixture's spread of effects, in standard deviations of one run: tunes where it is tightest


def variance_floor(step: float) -> float:
    """The least variance granted to values that move in steps of ``step`` (1 for a score, 0.2
    for a mean of five scores): that of a value falling on either of two neighbouring steps."""
    return step * step / 4


EXACT_BELOW = 30.0  # degrees of freedom under which the t value is found exactly, not by the expansion


def t_from_z(z: float, df: float) -> float:
    """The Student's t value with ``df`` degrees of freedom that has the tail of the normal's
    ``z``: by Fisher's expansion (Abramowitz and Stegun 26.7.5) from :data:`EXACT_BELOW` degrees
    of freedom on, where it is within a 10,000th of the exact value at the z that matter; below, exactly, by
    inverting the t distribution's tail (any ``df`` above 0, fractional ones too)."""
    if df < EXACT_BELOW:
        return _t_exact(z, max(df, 1e-3))
    return _expansion(z, df)


def _expansion(z: float, df: float) -> float:
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    return z + g1 / df + g2 / df**2 + g3 / df**3


def _t_tail(t: float, df: float) -> float:
    """P(T > t) for Student's t with ``df`` degrees of freedom, t >= 0."""
    return 0.5 * _incomplete_beta(df / 2, 0.5, df / (df + t * t))


def _t_exact(z: float, df: float) -> float:
    """The t value whose upper tail equals the normal's at ``z``: Newton's method on the tail,
    kept inside a bracket (bisection where a step would leave it)."""
    tail = 0.5 * math.erfc(z / math.sqrt(2))
    low, high = z, max(2 * z, 1.0)
    while _t_tail(high, df) > tail:
        low, high = high, high * 2
        if high > 1e12:
            return high
    scale = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)
    t = min(max(_expansion(z, max(df, 3.0)), low), high)
    for _ in range(60):
        gap = _t_tail(t, df) - tail
        if abs(gap) <= 1e-12 * tail:
            return t
        if gap > 0:
            low = t
        else:
            high = t
        density = scale * (1 + t * t / df) ** (-(df + 1) / 2)
        step = t + gap / density if density > 0 else (low + high) / 2
        t = step if low < step < high else (low + high) / 2
        if high - low <= 1e-12 * high:
            break
    return t


def _incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b) (continued fraction, Lentz's method)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x > (a + 1) / (a + b + 2):
        return 1.0 - front * _beta_fraction(b, a, 1 - x) / b
    return front * _beta_fraction(a, b, x) / a


def _beta_fraction(a: float, b: float, x: float) -> float:
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > tiny else tiny)
    result = d
    for m in range(1, 300):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):  # fmt: skip
            d = 1 + numerator * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + numerator / c
            c = c if abs(c) > tiny else tiny
            result *= c * d
        if abs(c * d - 1) < 1e-14:
            break
    return result


def radius(found: Estimate, *, alpha: float = ALPHA, mixing: float = MIXING) -> float:
    """Half the width of the always-valid interval around ``found.delta`` at level ``1 - alpha``."""
    x = mixing * found.n_with * found.n_without / (found.n_with + found.n_without)
    z = math.sqrt((1 + 1 / x) * (2 * math.log(1 / alpha) + math.log1p(x)))
    return t_from_z(z, found.df) * math.sqrt(found.variance)

