"""Each lesson's effect: its target with the lesson against baseline runs that held it back.

For every lesson key (per domain) the runs *with* it are the critiques whose run was
given it (``lessons_applied``); the runs *without* it are baseline runs (``--no-lessons``,
control runs, a suspended domain) in which it would have been given (their
``lessons_withheld``). The lesson's target (:mod:`.targets`) is averaged in each arm
(a critique where the target does not apply is left out), and the difference comes with
a 90% Welch interval (:func:`~research_agent.memory.effects.intervals.unpaired_difference`),
signed so that positive always means better. ``interval`` is None while an arm has
fewer than 2 runs.

Status: ``trial`` while either arm has fewer than :data:`MIN_RUNS` runs; ``retired``
when both have at least that many and the whole interval lies below zero; else
``active``. A retired lesson is not given to later runs (see :mod:`.lessons`); baseline
runs keep holding it back, so new evidence can lift its interval and bring it back.

Measured over every valid critique not dated in the future, through the summary index
(:mod:`..store.index`). :func:`lesson_effects` is the one entry point for the CLI and the MCP server.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from ...text.sanitize import sanitize
from ..store.files import FUTURE_SLACK, stamp_of
from ..store.index import CritiqueIndex, IndexTrust, open_index
from ..store.schema import LESSON_KEY, STAGES
from ..store.targets import TARGETS, stage_of, target_of
from .intervals import Difference, Moments, welch_difference

__all__ = ["MIN_RUNS", "STATUSES", "LessonEffect", "effect_of", "effects_in", "lesson_effects"]

MIN_RUNS = 5
STATUSES = ("trial", "active", "retired")


@dataclass(frozen=True)
class LessonEffect:
    """One lesson key's measured effect in one domain (see the module docstring)."""

    key: str
    stage: str
    target: str
    text: str
    domain: str
    applied_runs: int
    baseline_runs: int
    mean_with: float | None
    mean_without: float | None
    delta: float | None
    interval: tuple[float, float] | None
    status: str

    @property
    def retired(self) -> bool:
        return self.status == "retired"

    def as_dict(self) -> dict[str, Any]:
        """The ``memory effects --json`` object (numbers rounded to 4 places)."""
        diff = Difference(self.mean_with, self.mean_without, self.delta, self.interval, 0, 0).as_dict()
        return {
            "key": self.key,
            "stage": self.stage,
            "target": self.target,
            "text": self.text,
            "domain": self.domain,
            "applied_runs": self.applied_runs,
            "baseline_runs": self.baseline_runs,
            "mean_with": diff["mean_with"],
            "mean_without": diff["mean_without"],
            "delta": diff["delta"],
            "interval": diff["interval"],
            "status": self.status,
        }

    def numbers(self) -> str:
        """The effect in words, e.g. for the run record's ``excluded`` list."""
        label = TARGETS[self.target].label
        interval = "none" if self.interval is None else f"[{self.interval[0]:+.3g}, {self.interval[1]:+.3g}]"
        return (
            f"{label} {_num(self.mean_with)} with it over {self.applied_runs} run(s), {_num(self.mean_without)} "
            f"without over {self.baseline_runs}; delta {_num(self.delta, signed=True)} "
            f"(90% interval {interval}; positive means better)"
        )


def _num(value: float | None, *, signed: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:+.3g}" if signed else f"{value:.3g}"


def _moments(values: Moments | list[float]) -> Moments:
    return values if isinstance(values, Moments) else Moments.of(values)


def _status(diff: Difference) -> str:
    if diff.n_with < MIN_RUNS or diff.n_without < MIN_RUNS:
        return "trial"
    if diff.interval is not None and diff.interval[1] < 0:
        return "retired"
    return "active"


def effect_of(
    key: str, domain: str, with_: Moments | list[float], without: Moments | list[float], text: str = ""
) -> LessonEffect:
    """The effect of ``key`` from its target's values (or their moments) with and without it."""
    target = target_of(key)
    diff = welch_difference(_moments(with_), _moments(without))
    if TARGETS[target].lower_is_better:
        diff = diff.flipped()
    return LessonEffect(
        key, stage_of(key), target, text, domain, diff.n_with, diff.n_without,
        diff.mean_with, diff.mean_without, diff.delta, diff.interval, _status(diff),
    )  # fmt: skip


def effects_in(
    index: CritiqueIndex,
    *,
    now: datetime,
    domain: str | None = None,
    keys: Iterable[str] | None = None,
    with_text: bool = True,
) -> tuple[LessonEffect, ...]:
    """The effect of every lesson key (or of ``keys``) in ``domain`` (or every domain).

    ``with_text``: fill in each lesson's newest applied text (selection does not need it).
    """
    latest = now + FUTURE_SLACK
    wanted = sorted(k for k in set(index.keys() if keys is None else keys) if LESSON_KEY.match(k))
    window = {"domain": domain, "future": stamp_of(latest), "latest": latest.timestamp()}
    arms: dict[tuple[str, str], dict[str, Moments]] = {}
    for row_domain, key, arm, count, total, squares in index.arm_sums(wanted, **window):  # type: ignore[arg-type]
        arms.setdefault((row_domain, key), {})[arm] = Moments.from_sums(
            int(count), float(total), float(squares)
        )
    texts = index.newest_texts(wanted, **window) if with_text else {}  # type: ignore[arg-type]
    none = Moments(0, None, None)
    effects = [
        effect_of(
            key,
            where,
            moments.get("applied", none),
            moments.get("withheld", none),
            _shown(texts.get((where, key), "")),
        )
        for (where, key), moments in arms.items()
    ]
    return tuple(sorted(effects, key=lambda e: (e.domain, STAGES.index(e.stage), e.key)))


def _shown(text: str) -> str:
    return sanitize(text, single_line=True, max_chars=300) if text else ""


def lesson_effects(
    meta_dir: Path, *, now: datetime, domain: str | None = None, trust: IndexTrust | None = None
) -> tuple[LessonEffect, ...]:
    """The effect of every lesson key in ``meta_dir`` (of ``domain``, or of every domain) at
    ``now``. ``trust``: the user's key and seals, which let the on-disk index be used."""
    with open_index(Path(meta_dir), trust=trust) as index:
        return effects_in(index, now=now, domain=domain)
