"""A critique's derived values, computed when the file is read: what a person may edit by hand.

The meta YAML is for people to read, and they will edit it. A critique's *scores* are its
judgement: a score a person changes by hand is honoured. The values derived from them are never
trusted from the file: ``mean_score`` (the mean of the applicable scores) and ``overall_pass`` (that
mean at least 3.0, none below 2, and a report its own review did not reject) follow from the scores,
and ``source_count`` and ``dropped_count`` from the measured ``facts`` (sources kept, dropped; in a
version-3 file: earlier versions counted them otherwise and keep their own). Each
is recomputed on reading (:func:`derived_values`); where the file says otherwise, the change is named
as an edit ("edited by hand: mean recomputed (3.60 in the file, 4.20 from the scores), verdict
unchanged (pass)"), which ``memory validate`` reports as an edit, not an error.

:func:`scores_digest` is a short hash of the scores themselves: the summary index keeps it per file,
and the trial ledger per run (:class:`~.trials.rows.TrialRow` ``digest``), so that any score edit,
even one that leaves the mean and the verdict as they were, is seen the next time memory is read.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .schema import DIMENSIONS, is_pass, mean_of

__all__ = ["Derived", "derived_values", "scores_digest", "scores_of", "EDITED"]

EDITED = "edited by hand"  # how every note on a hand edit begins


def scores_digest(scores: Sequence[int | None]) -> str:
    """A short hash of the five scores in :data:`~.schema.DIMENSIONS` order (None: not applicable)."""
    text = json.dumps([None if s is None else int(s) for s in scores], separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class Derived:
    """A critique's derived values as computed from its scores and facts, and the edits found."""

    mean_score: float
    overall_pass: bool
    source_count: int
    dropped_count: int
    edits: tuple[str, ...] = ()


def _verdict(passed: bool) -> str:
    return "pass" if passed else "fail"


def _score_edit(data: Mapping[str, Any], mean: float, passed: bool) -> str | None:
    """The note on a mean or verdict that differs from what the scores give (None: they agree)."""
    said_mean, said_pass = float(data["mean_score"]), bool(data["overall_pass"])
    mean_moved = not math.isclose(said_mean, mean, abs_tol=0.011)
    if not mean_moved and said_pass == passed:
        return None
    verdict = (f"verdict unchanged ({_verdict(passed)})" if said_pass == passed
               else f"verdict changed ({_verdict(said_pass)} in the file, {_verdict(passed)} from the scores)")  # fmt: skip
    if mean_moved:
        return f"{EDITED}: mean recomputed ({said_mean:.2f} in the file, {mean:.2f} from the scores), {verdict}"
    return f"{EDITED}: overall_pass recomputed from the scores, {verdict}"


def derived_values(data: Mapping[str, Any]) -> Derived:
    """The derived values of valid critique content ``data`` (see the module docstring). The counts
    come from ``facts`` in a version-3 file; a file of an earlier version keeps its own (they were
    counted otherwise then)."""
    scores = data["scores"]
    mean, passed = mean_of(scores), is_pass(scores, data.get("review"))
    edits = [note] if (note := _score_edit(data, mean, passed)) is not None else []
    counts = {"source_count": int(data["source_count"]), "dropped_count": int(data["dropped_count"])}
    sources: Any = (data.get("facts") or {}).get("sources") if data["schema_version"] >= 3 else None
    for name, measured in (("source_count", "kept"), ("dropped_count", "dropped")) if sources is not None else ():
        value = int(sources[measured])
        if value != counts[name]:
            edits.append(f"{EDITED}: {name} recomputed ({counts[name]} in the file, {value} from facts.sources.{measured})")
        counts[name] = value
    return Derived(mean, passed, counts["source_count"], counts["dropped_count"], tuple(edits))


def scores_of(values: Mapping[str, int | None]) -> tuple[int | None, ...]:
    """The scores in :data:`~.schema.DIMENSIONS` order."""
    return tuple(values.get(d) for d in DIMENSIONS)
