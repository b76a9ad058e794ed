"""The gate: what kind of report the scored sources allow."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..config import Mode
from ..sources import ScoredSource

__all__ = ["Gate", "GateDecision", "decide_gate"]

GateDecision = Literal["full_report", "short_report", "insufficient_data", "no_new_findings"]


@dataclass(frozen=True)
class Gate:
    """What the scores allow: the decision, the surviving sources, and why."""

    decision: GateDecision
    kept: tuple[ScoredSource, ...]
    dropped: tuple[ScoredSource, ...]
    unscored: tuple[ScoredSource, ...]
    sites: int
    reason: str

    @property
    def can_write(self) -> bool:
        return self.decision in ("full_report", "short_report")


def decide_gate(scored: tuple[ScoredSource, ...] | list[ScoredSource], mode: Mode) -> Gate:
    """Apply the mode's thresholds on surviving sources and distinct sites.

    ``insufficient_data``: too few sources were found to judge at all.
    ``no_new_findings``: enough were found and scored, but too few are relevant.
    """
    kept = tuple(
        sorted(
            (s for s in scored if s.score is not None and s.score >= mode.keep_score),
            key=lambda s: (-(s.score or 0), s.source.location),
        )
    )
    dropped = tuple(s for s in scored if s.score is not None and s.score < mode.keep_score)
    unscored = tuple(s for s in scored if s.score is None)
    sites = len({s.source.site for s in kept})
    judged = len(kept) + len(dropped)
    if judged < mode.short_min_sources:
        decision: GateDecision = "insufficient_data"
        reason = f"only {judged} source(s) could be found and scored; at least {mode.short_min_sources} needed"
    elif len(kept) < mode.short_min_sources:
        decision = "no_new_findings"
        reason = (
            f"{judged} source(s) scored but only {len(kept)} reached relevance {mode.keep_score}; "
            f"at least {mode.short_min_sources} needed"
        )
    elif len(kept) < mode.full_min_sources or sites < mode.full_min_sites:
        decision = "short_report"
        reason = (
            f"{len(kept)} relevant source(s) from {sites} site(s); a full report needs "
            f"{mode.full_min_sources} from {mode.full_min_sites}"
        )
    else:
        decision = "full_report"
        reason = f"{len(kept)} relevant source(s) from {sites} site(s)"
    return Gate(decision, kept, dropped, unscored, sites, reason)
