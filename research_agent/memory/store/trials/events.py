"""Events beside the trial ledger's rows: decisions as they were taken, and a person's reinstatement.

A :class:`TrialEvent` records a decision (``retired``, ``helpful``: the run at which the evidence
first reached it, that run's number in its domain, the measure that decided it and its numbers
then) or a person's ``reinstated``, which starts a new, separate trial of the key in its domain.
Read back, every field is checked (:func:`event_from_json`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ....ids import is_run_id, parse_zoned_time
from ..files import stamp_of
from ..schema import LESSON_KEY
from ..targets import TARGETS
from .rows import count_field, number_field, optional_field, text_field

__all__ = ["EVENTS", "DECISIONS", "TrialEvent", "event_from_json"]

EVENTS = ("retired", "helpful", "reinstated")
DECISIONS = ("retired", "helpful")


@dataclass(frozen=True)
class TrialEvent:
    """A decision (``retired``, ``helpful``) or a person's ``reinstated`` of lesson ``key`` in
    ``domain``, at ``at`` (UTC, ISO 8601). A decision names the run at which the evidence first
    reached it (``run``, ``number``: its number among the domain's runs), the ``measure`` that
    decided it, and that measure's delta, always-valid interval and runs in each arm then."""

    event: str
    domain: str
    key: str
    at: str
    run: str = ""
    number: int | None = None
    measure: str = ""
    delta: float | None = None
    interval: tuple[float, float] | None = None
    n_with: int = 0
    n_without: int = 0

    @property
    def stamp(self) -> str:
        """The time the event took effect, as a sortable stamp."""
        when = parse_zoned_time(self.at)
        return "" if when is None else stamp_of(when)

    def words(self) -> str:
        """The event in words, e.g. "retired on run 21: lowered the mean score by 0.45 ..."."""
        if self.event == "reinstated":
            return f"reinstated by a person at {self.at[:16].replace('T', ' ')} (a new trial)"
        spec = TARGETS.get(self.measure)
        label = spec.label if spec is not None else "its target"
        on = f" on run {self.number}" if self.number is not None else ""
        if self.delta is None or spec is None:
            return f"{self.event}{on}, on {label} (recorded {self.at[:10]})"
        raised = (self.delta > 0) != spec.lower_is_better
        span = "" if self.interval is None else f" (always-valid interval [{self.interval[0]:+.2f}, {self.interval[1]:+.2f}])"
        return (f"{self.event}{on}: {'raised' if raised else 'lowered'} the {label} by {abs(self.delta):.2f}{span}, "
                f"{self.n_with} run(s) with it and {self.n_without} without (recorded {self.at[:10]})")  # fmt: skip

    def as_json(self) -> dict[str, Any]:
        return {
            "event": self.event, "domain": self.domain, "key": self.key, "at": self.at, "run": self.run,
            "number": self.number, "measure": self.measure, "delta": self.delta,
            "interval": None if self.interval is None else list(self.interval),
            "n_with": self.n_with, "n_without": self.n_without,
        }  # fmt: skip


def event_from_json(data: Any) -> TrialEvent:
    """The event :meth:`TrialEvent.as_json` wrote; ValueError for anything else."""
    if not isinstance(data, Mapping) or data.get("event") not in EVENTS:
        raise ValueError("event: not an event")
    key, run, measure = data.get("key"), data.get("run"), data.get("measure")
    if not isinstance(key, str) or not LESSON_KEY.match(key) or not (run == "" or is_run_id(run)):
        raise ValueError("event: bad key or run")
    if measure != "" and measure not in TARGETS:
        raise ValueError("event: bad measure")
    interval = data.get("interval")
    if interval is not None and (not isinstance(interval, list) or len(interval) != 2):
        raise ValueError("event: bad interval")
    event = TrialEvent(
        data["event"], text_field(data.get("domain"), "domain", limit=40), key, text_field(data.get("at"), "at", limit=40),
        run, optional_field(data.get("number"), count_field, "number"), measure, optional_field(data.get("delta"), number_field, "delta"),
        None if interval is None else (number_field(interval[0], "interval"), number_field(interval[1], "interval")),
        count_field(data.get("n_with"), "n_with"), count_field(data.get("n_without"), "n_without"),
    )  # fmt: skip
    if not event.stamp:
        raise ValueError("event: at is not a time")
    return event
