"""What the critiques of a domain recorded besides their scores, summed up for ``memory stats``.

* Cost: the tokens and dollars the critiques themselves spent, from the ``usage`` each
  critique file records (files written before it existed are not counted; the cost is
  unknown as soon as one critique's price was unknown).
* Claims: the share of checked claims the claim check found unsupported
  (``facts.claims.unsupported_share``) over time: overall, over the earlier half and the
  recent half of the runs that checked any (runs that checked none, and files from before
  the check, are not counted).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...shapes import Plain, shape
from ..store.critique_types import Critique

__all__ = ["CritiqueCost", "critique_cost", "ClaimTrend", "claim_trend"]


@dataclass(frozen=True)
class CritiqueCost(Plain):
    """What the critiques of one domain spent. ``recorded``: critiques that stored their usage;
    ``cost_usd`` is None (unknown) when any of them has an unknown cost."""

    recorded: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    cost_usd: float | None = field(default=0.0, metadata=shape(digits=6))

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def critique_cost(critiques: Iterable[Critique]) -> CritiqueCost:
    """The summed usage of the critiques that recorded one (see :class:`CritiqueCost`)."""
    total = CritiqueCost()
    for critique in critiques:
        usage = critique.usage
        if usage is None:
            continue
        cost = None if total.cost_usd is None or usage.cost_usd is None else total.cost_usd + usage.cost_usd
        total = CritiqueCost(
            total.recorded + 1,
            total.prompt_tokens + usage.prompt_tokens,
            total.completion_tokens + usage.completion_tokens,
            total.calls + usage.calls,
            cost,
        )
    return total


@dataclass(frozen=True)
class ClaimTrend:
    """``facts.claims.unsupported_share`` over the ``runs`` of a domain that checked claims:
    the mean over all of them, over the earlier half and over the recent half (oldest first;
    None where there are too few runs to split)."""

    runs: int = 0
    mean: float | None = None
    earlier: float | None = None
    recent: float | None = None

    @property
    def delta(self) -> float | None:
        if self.earlier is None or self.recent is None:
            return None
        return round(self.recent - self.earlier, 2)

    def as_dict(self) -> dict[str, Any]:
        return {"runs": self.runs, "mean": self.mean, "earlier": self.earlier, "recent": self.recent,
                "delta": self.delta}  # fmt: skip


def claim_trend(critiques: Sequence[Critique]) -> ClaimTrend:
    """The unsupported share of the claim check over time, from critiques oldest first."""
    shares = [
        c.facts.claims.unsupported_share
        for c in critiques
        if c.facts is not None and c.facts.claims is not None and c.facts.claims.unsupported_share is not None
    ]
    if not shares:
        return ClaimTrend()
    half = len(shares) // 2
    return ClaimTrend(
        len(shares), _mean(shares), _mean(shares[:half]) if half else None, _mean(shares[half:]) if half else None
    )


def _mean(values: Sequence[float]) -> float | None:
    return round(statistics.fmean(values), 2) if values else None
