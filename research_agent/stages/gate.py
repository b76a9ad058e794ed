"""The gate: what kind of report the scored sources allow."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, get_args

from ..config import Mode
from ..sources import ScoredSource, Source

__all__ = ["Gate", "GateDecision", "GATE_DECISIONS", "decide_gate"]

GateDecision = Literal["full_report", "short_report", "insufficient_data", "no_new_findings"]
GATE_DECISIONS: tuple[GateDecision, ...] = get_args(GateDecision)  # the kinds of report a run can end with


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


def decide_gate(
    scored: tuple[ScoredSource, ...] | list[ScoredSource], mode: Mode, *, site_of: Callable[[Source], str] | None = None
) -> Gate:
    """Apply the mode's thresholds on surviving sources and distinct sites.

    ``insufficient_data``: too few sources were found to judge at all.
    ``no_new_findings``: enough were found and scored, but too few are relevant.
    ``site_of``: the site a source counts under (the run passes the critique facts' rule, so
    that both count a run's sites alike; default: its ``site``). When every kept source is one
    of the user's own files, the count of sites does not hold back a full report: the user
    chose those documents, so their spread over folders is no sign of a narrow search.
    """
    kept = tuple(
        sorted(
            (s for s in scored if s.score is not None and s.score >= mode.keep_score),
            key=lambda s: (-(s.score or 0), s.source.location),
        )
    )
    dropped = tuple(s for s in scored if s.score is not None and s.score < mode.keep_score)
    unscored = tuple(s for s in scored if s.score is None)
    sites = len({(site_of or _own_site)(s.source) for s in kept})
    own_files = bool(kept) and all(s.source.is_file for s in kept)
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
    elif len(kept) < mode.full_min_sources or (sites < mode.full_min_sites and not own_files):
        decision = "short_report"
        reason = (
            f"{len(kept)} relevant source(s) from {sites} site(s); a full report needs "
            f"{mode.full_min_sources} from {mode.full_min_sites}"
        )
    else:
        decision = "full_report"
        reason = f"{len(kept)} relevant source(s) from {sites} site(s)"
    return Gate(decision, kept, dropped, unscored, sites, reason)


def _own_site(source: Source) -> str:
    return source.site
