"""The memory page's pictures as numbers: a lesson's delta with its interval, and a domain's
score and pass-rate history. No chart library: the templates draw these as inline SVG.

Every value here is a number or a fixed word; the templates place them in SVG attributes
(never ``style``), so a chart can carry nothing from outside.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ..memory.effects.lesson_effects import LessonEffect
from ..memory.effects.stats import chronological
from ..memory.store.critique_types import Critique

__all__ = ["DeltaBar", "delta_bars", "History", "history", "ROLLING"]

BAR_WIDTH = 160.0
BAR_PAD = 6.0
ROLLING = 10  # critiques in the pass rate at each point
CHART_WIDTH, CHART_HEIGHT = 560.0, 180.0
CHART_LEFT, CHART_RIGHT, CHART_TOP, CHART_BOTTOM = 34.0, 40.0, 10.0, 22.0

Side = Literal["better", "worse", "unclear", "none"]  # where a delta's interval lies against zero


@dataclass(frozen=True)
class DeltaBar:
    """One lesson's delta on a scale shared by its domain's lessons: x positions in the SVG
    (``zero``, ``delta``; ``low`` and ``high`` of the interval, None without one), and the words."""

    zero: float
    delta: float | None
    low: float | None
    high: float | None
    label: str
    side: Side

    width: float = BAR_WIDTH


def _x(value: float, scale: float) -> float:
    inner = BAR_WIDTH / 2 - BAR_PAD
    return round(BAR_WIDTH / 2 + max(-1.0, min(1.0, value / scale)) * inner, 1)


def delta_bars(effects: Sequence[LessonEffect]) -> dict[str, DeltaBar]:
    """Each lesson key's bar, on one scale for all of ``effects`` (one domain's lessons)."""
    extent = [abs(v) for e in effects for v in (e.delta, *(e.interval or ())) if v is not None]
    scale = max([*extent, 0.1]) * 1.05
    bars = {}
    side: Side
    for effect in effects:
        low, high = effect.interval if effect.interval is not None else (None, None)
        if effect.delta is None:
            label, side = "no delta yet", "none"
        elif low is None or high is None:
            label, side = f"{effect.delta:+.2f} (no interval yet)", "unclear"
        else:
            label = f"{effect.delta:+.2f}, 90% interval [{low:+.2f}, {high:+.2f}]"
            side = "better" if low > 0 else "worse" if high < 0 else "unclear"
        bars[effect.key] = DeltaBar(
            _x(0.0, scale),
            _x(effect.delta, scale) if effect.delta is not None else None,
            _x(low, scale) if low is not None else None,
            _x(high, scale) if high is not None else None,
            label,
            side,
        )
    return bars


@dataclass(frozen=True)
class History:
    """A domain's critiques oldest first as chart points: ``scores`` (x, y, passed) of each mean
    score on 1-5, ``rates`` (x, y) of the pass rate over the last :data:`ROLLING` critiques on
    0-100 %, the y of the pass line (3.0), and the axis ticks (y, label)."""

    scores: tuple[tuple[float, float, bool], ...]
    rates: tuple[tuple[float, float], ...]
    pass_y: float
    score_ticks: tuple[tuple[float, str], ...]
    rate_ticks: tuple[tuple[float, str], ...]
    count: int
    passed: int
    first: str
    last: str

    width: float = CHART_WIDTH
    height: float = CHART_HEIGHT
    left: float = CHART_LEFT
    right: float = CHART_WIDTH - CHART_RIGHT
    top: float = CHART_TOP
    bottom: float = CHART_HEIGHT - CHART_BOTTOM

    @property
    def rate_points(self) -> str:
        return " ".join(f"{x},{y}" for x, y in self.rates)

    @property
    def score_points(self) -> str:
        return " ".join(f"{x},{y}" for x, y, _ in self.scores)


def _y(fraction: float) -> float:
    """The y of ``fraction`` (0 at the bottom, 1 at the top) of the plot area."""
    return round(CHART_HEIGHT - CHART_BOTTOM - fraction * (CHART_HEIGHT - CHART_BOTTOM - CHART_TOP), 1)


def history(critiques: Sequence[Critique]) -> History:
    """The chart of ``critiques`` (one domain's), oldest first."""
    ordered = chronological(critiques)
    span = CHART_WIDTH - CHART_LEFT - CHART_RIGHT
    step = span / max(1, len(ordered) - 1)
    scores, rates = [], []
    for i, critique in enumerate(ordered):
        x = round(CHART_LEFT + (i * step if len(ordered) > 1 else span / 2), 1)
        scores.append((x, _y((min(5.0, max(1.0, critique.mean_score)) - 1) / 4), critique.overall_pass))
        window = ordered[max(0, i + 1 - ROLLING) : i + 1]
        rates.append((x, _y(sum(c.overall_pass for c in window) / len(window))))
    return History(
        tuple(scores),
        tuple(rates),
        _y(0.5),
        tuple((_y((v - 1) / 4), str(v)) for v in range(1, 6)),
        tuple((_y(v / 100), f"{v}%") for v in (0, 50, 100)),
        len(ordered),
        sum(c.overall_pass for c in ordered),
        ordered[0].timestamp[:10] if ordered else "",
        ordered[-1].timestamp[:10] if ordered else "",
    )
