"""Score trends, baseline-versus-adaptive comparison, suspension and collapse checks.

* Trends: per domain and dimension, the mean of the earlier half of its critiques
  against the recent half.
* Comparison: each critique's mean score becomes a z-score *within its
  model_version* (so a model change does not read as learning), then adaptive runs
  (lessons used) are compared with *whole-run baseline* runs: those a random whole-run draw
  sent without lessons (a control run, or a run of a suspended domain). Runs without lessons
  for any other reason (none built yet, ``--no-lessons``, every lesson withheld by its own
  trial) are in neither group. This is the only comparison the controls serve: per-lesson
  effects compare each lesson's own trial arms (:mod:`.lesson_effects`).
* Suspension: over the newest :data:`WINDOW` runs of each kind (at least ``min_runs`` of
  each), the always-valid interval of (adaptive - baseline) mean z (:mod:`.sequential`, at the
  stricter level :data:`SUSPEND_ALPHA`: it is the backstop behind each lesson's own
  retirement) lies wholly below zero: lessons are suspended for that domain. A suspended domain keeps about one
  run in four adaptive (:mod:`research_agent.memory.lessons.choose`), so new adaptive runs
  replace the old ones in the window and the suspension lifts once they no longer score worse.
  Suspect critiques (a degenerate critic) and runs that could not read their memory are left
  out of this comparison; suspect ones are listed.
* Collapse: the standard deviation of the recent mean scores falls under 0.3, a sign
  the critic stopped telling reports apart.
* Cost: the tokens and dollars the critiques themselves spent, per domain, from the
  ``usage`` each critique file records (files written before it existed are not counted;
  the cost is unknown as soon as one critique's price was unknown).
* Claims: the share of checked claims the claim check found unsupported
  (``facts.claims.unsupported_share``), over time: overall, earlier half and recent half of
  the runs that checked any (runs that checked none, and files from before the check, are
  not counted).
"""

from __future__ import annotations

import io
import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import ConfigError
from ...files.atomic import atomic_write_bytes
from ...ids import id_timestamp
from ...record.lessons import LeftOut
from ...version import extra_hint
from ..store.critique_types import Critique
from ..store.files import LoadedCritique
from ..store.schema import DIMENSIONS
from .estimate import Arms, estimate
from .measures import ClaimTrend, CritiqueCost, claim_trend, critique_cost
from .sequential import radius, variance_floor

__all__ = [
    "MIN_RUNS",
    "WINDOW",
    "COLLAPSE_STD",
    "RECENT",
    "DimensionTrend",
    "Comparison",
    "Collapse",
    "CritiqueCost",
    "ClaimTrend",
    "DomainStats",
    "MemoryStats",
    "chronological",
    "z_scores",
    "compare_adaptive",
    "collapse_check",
    "not_collapse",
    "COLLAPSE_WARNING",
    "domain_stats",
    "compute_stats",
    "critique_cost",
    "claim_trend",
    "plot_history",
]

MIN_RUNS = 5
WINDOW = 20  # the newest runs of each kind the suspension compares
Z_STEP = 0.1  # the least spread granted to z-scores (no interval of zero width)
SUSPEND_ALPHA = 0.01  # a backstop: suspends on stronger evidence than a lesson's own retirement needs
COLLAPSE_WARNING = "mode collapse warning"  # how its warning starts: a run and `memory stats` show it


def not_collapse(warnings: Sequence[str]) -> tuple[str, ...]:
    """``warnings`` without the mode-collapse warning: it is about the critic, not about what a run is
    given, so a run says it once and ``memory stats`` shows it; other commands leave it out."""
    return tuple(w for w in warnings if not w.startswith(COLLAPSE_WARNING))


COLLAPSE_STD = 0.3
RECENT = 10


def _stamp(critique: Critique) -> str:
    return critique.id.rsplit("_", 1)[-1]


def chronological(critiques: Iterable[Critique]) -> list[Critique]:
    """Oldest first, by the run time in each id."""
    return sorted(critiques, key=lambda c: (_stamp(c), c.id))


@dataclass(frozen=True)
class DimensionTrend:
    """One dimension in one domain: overall mean, earlier-half and recent-half means, over the
    critiques where it applies (None where it applied to none: a null geographic balance)."""

    dimension: str
    mean: float | None
    earlier: float | None
    recent: float | None

    @property
    def delta(self) -> float | None:
        if self.earlier is None or self.recent is None:
            return None
        return round(self.recent - self.earlier, 2)


@dataclass(frozen=True)
class Comparison:
    """Adaptive versus baseline runs in one domain, on z-scores within model_version."""

    adaptive_n: int
    baseline_n: int
    adaptive_z: float | None
    baseline_z: float | None
    suspended: bool
    reason: str


@dataclass(frozen=True)
class Collapse:
    """Spread of the recent mean scores; ``warning`` is set when it is under the threshold."""

    count: int
    std: float | None
    collapsed: bool
    warning: str


@dataclass(frozen=True)
class DomainStats:
    domain: str
    count: int
    passed: int
    mean: float
    trends: tuple[DimensionTrend, ...]
    comparison: Comparison
    collapse: Collapse
    cost: CritiqueCost = CritiqueCost()
    suspect: tuple[tuple[str, str], ...] = ()  # (critique id, why): left out of the comparison
    claims: ClaimTrend = ClaimTrend()


@dataclass(frozen=True)
class MemoryStats:
    """Everything ``memory stats`` shows."""

    domains: tuple[DomainStats, ...]
    total: int
    invalid: tuple[tuple[str, str], ...]

    @property
    def warnings(self) -> tuple[str, ...]:
        out = [d.comparison.reason for d in self.domains if d.comparison.suspended]
        out += [d.collapse.warning for d in self.domains if d.collapse.collapsed]
        out += [
            f"suspect critique ({d.domain}) {run_id}: {why}; it makes and feeds no lesson and is left out "
            "of effects, suspension and A/B statistics"
            for d in self.domains
            for run_id, why in d.suspect
        ]
        return tuple(out)

    def as_dict(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "invalid": [LeftOut(f, r).as_dict() for f, r in self.invalid],
            "domains": [
                {
                    "domain": d.domain,
                    "count": d.count,
                    "passed": d.passed,
                    "mean": d.mean,
                    "dimensions": {
                        t.dimension: {
                            "mean": t.mean,
                            "earlier": t.earlier,
                            "recent": t.recent,
                            "delta": t.delta,
                        }
                        for t in d.trends
                    },
                    "adaptive_n": d.comparison.adaptive_n,
                    "baseline_n": d.comparison.baseline_n,
                    "adaptive_z": d.comparison.adaptive_z,
                    "baseline_z": d.comparison.baseline_z,
                    "suspended": d.comparison.suspended,
                    "comparison": d.comparison.reason,
                    "recent_std": d.collapse.std,
                    "collapse": d.collapse.collapsed,
                    "critique_usage": d.cost.as_dict(),
                    "suspect": [{"id": run_id, "reason": why} for run_id, why in d.suspect],
                    "unsupported_share": d.claims.as_dict(),
                }
                for d in self.domains
            ],
            "warnings": list(self.warnings),
        }


def z_scores(critiques: Iterable[Critique]) -> dict[str, float]:
    """Each critique's mean score as a z-score among critiques of the same model_version.

    A model_version with one critique, or with no spread, gives z = 0 for its critiques.
    """
    groups: dict[str, list[Critique]] = defaultdict(list)
    for critique in critiques:
        groups[critique.model_version].append(critique)
    out: dict[str, float] = {}
    for group in groups.values():
        values = [c.mean_score for c in group]
        mu = math.fsum(values) / len(values)
        sd = math.sqrt(math.fsum((v - mu) ** 2 for v in values) / len(values)) if len(values) > 1 else 0.0
        for critique in group:
            out[critique.id] = 0.0 if sd == 0 else (critique.mean_score - mu) / sd
    return out


def _difference(adaptive: Sequence[float], baseline: Sequence[float]) -> tuple[float, float] | None:
    """The always-valid interval of ``mean(adaptive) - mean(baseline)`` (unpaired), or None."""
    found = estimate(Arms.of(adaptive, baseline).target, floor=variance_floor(Z_STEP))
    if found is None:
        return None
    half = radius(found, alpha=SUSPEND_ALPHA)
    return found.delta - half, found.delta + half


def compare_adaptive(
    domain: str, critiques: Sequence[Critique], *, min_runs: int = MIN_RUNS, window: int = WINDOW
) -> Comparison:
    """Compare the newest ``window`` adaptive runs of one domain with its newest ``window``
    whole-run baseline runs; suspend when adaptive does worse beyond doubt (the always-valid
    interval of the difference lies below zero)."""
    z = z_scores(critiques)
    ordered = chronological(critiques)
    adaptive = [z[c.id] for c in ordered if c.adaptive][-window:]
    baseline = [z[c.id] for c in ordered if c.whole_run_baseline][-window:]
    az = round(statistics.fmean(adaptive), 3) if adaptive else None
    bz = round(statistics.fmean(baseline), 3) if baseline else None
    counts = f"the newest {len(adaptive)} adaptive and {len(baseline)} baseline runs"
    if len(adaptive) < min_runs or len(baseline) < min_runs:
        return Comparison(
            len(adaptive),
            len(baseline),
            az,
            bz,
            False,
            f"not enough runs to compare ({counts}; {min_runs} of each needed)",
        )
    assert az is not None and bz is not None
    interval = _difference(adaptive, baseline)
    shown = "none" if interval is None else f"[{interval[0]:+.2f}, {interval[1]:+.2f}]"
    numbers = f"mean z {az:+.2f} vs {bz:+.2f} over {counts}; always-valid interval of the difference {shown}"
    if interval is not None and interval[1] < 0:
        reason = (
            f"lessons suspended for {domain}: adaptive runs score lower than baseline runs ({numbers}); "
            "one run in four stays adaptive, so that the suspension lifts once they no longer do"
        )
        return Comparison(len(adaptive), len(baseline), az, bz, True, reason)
    reason = f"adaptive runs score no worse than baseline, as far as can be told ({numbers})"
    return Comparison(len(adaptive), len(baseline), az, bz, False, reason)


def collapse_check(
    domain: str,
    critiques: Sequence[Critique],
    *,
    recent: int = RECENT,
    threshold: float = COLLAPSE_STD,
    min_count: int = MIN_RUNS,
) -> Collapse:
    """Warn when the standard deviation of the ``recent`` newest mean scores is under ``threshold``."""
    latest = chronological(critiques)[-recent:]
    if len(latest) < min_count:
        return Collapse(len(latest), None, False, "")
    std = round(statistics.pstdev(c.mean_score for c in latest), 3)
    if std < threshold:
        warning = (
            f"{COLLAPSE_WARNING} ({domain}): the last {len(latest)} critiques have mean scores with "
            f"standard deviation {std:.2f} (under {threshold}); the critic may have stopped telling reports apart"
        )
        return Collapse(len(latest), std, True, warning)
    return Collapse(len(latest), std, False, "")


def _mean(values: Sequence[float | None]) -> float | None:
    """The mean of the values that apply (None: not applicable), or None when none does."""
    present = [v for v in values if v is not None]
    return round(statistics.fmean(present), 2) if present else None


def domain_stats(domain: str, critiques: Sequence[Critique], compared: Sequence[Any] | None = None) -> DomainStats:
    """Trends, comparison and collapse state for the critiques of one domain; ``compared``: the
    runs the adaptive-versus-baseline comparison reads, as selection reads them from the trial
    ledger (None: the measurable critiques)."""
    ordered = chronological(critiques)
    half = len(ordered) // 2
    trends = []
    for dimension in DIMENSIONS:
        values = [c.scores.get(dimension) for c in ordered]
        earlier = _mean(values[:half]) if half else None
        recent = _mean(values[half:]) if half else None
        trends.append(DimensionTrend(dimension, _mean(values), earlier, recent))
    return DomainStats(
        domain=domain,
        count=len(ordered),
        passed=sum(1 for c in ordered if c.overall_pass),
        mean=_mean([c.mean_score for c in ordered]) or 0.0,
        trends=tuple(trends),
        comparison=compare_adaptive(domain, [c for c in ordered if c.measurable] if compared is None else compared),
        collapse=collapse_check(domain, ordered),
        cost=critique_cost(ordered),
        suspect=tuple((c.id, c.suspect_reason) for c in ordered if c.suspect_reason),
        claims=claim_trend(ordered),
    )


def compute_stats(
    loaded: Iterable[LoadedCritique | Critique], compared: Mapping[str, Sequence[Any]] | None = None
) -> MemoryStats:
    """Per-domain statistics over valid critiques; invalid files are listed, not counted.
    ``compared``: per domain, the runs its suspension compares (see :func:`domain_stats`)."""
    by_domain: dict[str, list[Critique]] = defaultdict(list)
    invalid: list[tuple[str, str]] = []
    total = 0
    for item in loaded:
        total += 1
        if isinstance(item, LoadedCritique):
            if item.critique is None:
                invalid.append((item.name, item.error or "invalid"))
                continue
            item = item.critique
        by_domain[item.query_domain].append(item)
    domains = tuple(domain_stats(d, by_domain[d], None if compared is None else compared.get(d, ())) for d in sorted(by_domain))
    return MemoryStats(domains, total, tuple(invalid))


def _import_pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ConfigError(
            f"--plot needs matplotlib, which is not installed: {extra_hint('plot')}"
        ) from None
    return plt


def plot_history(critiques: Sequence[Critique], path: Path, *, pyplot: Any = None) -> Path:
    """Draw mean score over time, one line per domain, into ``path`` (PNG).

    matplotlib is an optional extra; without it this raises ConfigError saying how to
    install it. ``pyplot`` is a seam for tests.
    """
    plt = pyplot if pyplot is not None else _import_pyplot()
    by_domain: dict[str, list[Critique]] = defaultdict(list)
    for critique in chronological(critiques):
        by_domain[critique.query_domain].append(critique)
    fig, ax = plt.subplots(figsize=(9, 4.5))
    try:
        for domain, items in sorted(by_domain.items()):
            times = [id_timestamp(c.id) for c in items]
            ax.plot(times, [c.mean_score for c in items], marker="o", label=domain)
        ax.axhline(3.0, linestyle="--", linewidth=1, color="grey")
        ax.set_ylim(1, 5)
        ax.set_ylabel("mean score (1-5)")
        ax.set_title("research-agent critique scores")
        if by_domain:
            ax.legend(loc="lower left", fontsize="small")
        fig.autofmt_xdate()
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=100)
    finally:
        plt.close(fig)
    return atomic_write_bytes(Path(path), buffer.getvalue())
