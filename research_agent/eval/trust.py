"""What an eval's numbers allow one to say: paired differences in words, and how far the critic tracks
ground truth.

* :func:`paired` is a difference of ground-truth measures over the same questions with its 90%
  interval (:func:`~research_agent.memory.effects.intervals.paired_difference`, the interval
  ``memory ab`` uses), never narrower than the measure's steps allow (:func:`~research_agent.memory
  .effects.sequential.variance_floor`: values that happen not to differ have not shown a variance
  of zero), and :func:`change_words` says it plainly: "no significant change in fact recall:
  round 3 vs round 1 +0.00 [−0.06, +0.06]".
* :func:`critic_tracking` is Spearman's rank correlation between the critic's scores and a ground
  truth measure over the same reports, with its interval and a verdict; it lives with the memory
  (:mod:`research_agent.memory.effects.truth.tracking`), since ``memory effects`` says it too, and
  is named here for the eval's modules.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..memory.effects.intervals import Difference, paired_difference
from ..memory.effects.sequential import variance_floor
from ..memory.effects.truth.tracking import MIN_TRACKING, Tracking, critic_tracking, signed, spearman

__all__ = ["paired", "change_words", "signed", "Tracking", "critic_tracking", "spearman", "MIN_TRACKING"]


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
