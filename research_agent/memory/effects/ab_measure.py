"""Measuring a learning A/B: paired differences per dimension and per measured fact.

Each measure pairs the adaptive arm with the baseline arm of the same question
(:func:`~research_agent.memory.effects.intervals.paired_difference`), over the pairs it is
given (:func:`~.ab.ab_result` gives the measurable ones). A pair counts for a
dimension only when both critiques scored it (a null ``geographic_balance`` in either
arm drops that pair for that dimension), and for a fact only when both critiques carry
a facts block. Lower-is-better facts are flipped, so a positive ``delta`` always means
the adaptive arm did better. Differences that do not spread get the variance floor of their
step (no interval of zero width).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..store.schema import DIMENSIONS
from ..store.targets import PERSON_TARGET, TARGETS
from .ab_types import FACT_MEASURES, AbPair, ArmUsage, Measure, fact_value
from .intervals import paired_difference
from .sequential import variance_floor

__all__ = ["overall_measure", "dimension_measures", "fact_measures", "arm_usage"]


def overall_measure(pairs: Sequence[AbPair]) -> Measure:
    """The critiques' mean score (over their applicable dimensions), adaptive vs baseline."""
    values = [(float(p.adaptive.mean_score or 0.0), float(p.baseline.mean_score or 0.0)) for p in pairs]
    return Measure("mean_score", "higher", paired_difference(values, floor=variance_floor(TARGETS[PERSON_TARGET].step)))


def dimension_measures(pairs: Sequence[AbPair]) -> tuple[Measure, ...]:
    """One measure per critique dimension, over the pairs where both arms have a score."""
    measures = []
    for dimension in DIMENSIONS:
        values = []
        for pair in pairs:
            adaptive = pair.adaptive.scores.get(dimension) if pair.adaptive.scores else None
            baseline = pair.baseline.scores.get(dimension) if pair.baseline.scores else None
            if adaptive is not None and baseline is not None:
                values.append((float(adaptive), float(baseline)))
        measures.append(Measure(dimension, "higher", paired_difference(values, floor=variance_floor(1.0))))
    return tuple(measures)


def fact_measures(pairs: Sequence[AbPair]) -> tuple[Measure, ...]:
    """One measure per measured fact, over the pairs where both critiques carry facts."""
    measures = []
    for path, better in FACT_MEASURES:
        values = [
            (fact_value(p.adaptive.facts, path), fact_value(p.baseline.facts, path))
            for p in pairs
            if p.adaptive.facts is not None and p.baseline.facts is not None
        ]
        difference = paired_difference(values, floor=variance_floor(TARGETS[f"facts.{path}"].step))
        measures.append(Measure(path, better, difference.flipped() if better == "lower" else difference))
    return tuple(measures)


def arm_usage(pairs: Sequence[AbPair], arm: str) -> ArmUsage:
    """What one arm spent over all pairs (cost None when any price was unknown, or when no pair
    was finished: what failed questions spent is not known here, and is never shown as $0)."""
    if not pairs:
        return ArmUsage(cost_usd=None)
    total = ArmUsage()
    for pair in pairs:
        total = total + getattr(pair, arm).usage
    return total
