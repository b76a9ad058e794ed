"""Settling lessons before any reaches a prompt: one lesson per key, no contradictions,
ranked within each stage, at most a few per stage.

* Evidence with the same key merges into one lesson: the critiques behind it are united
  and it keeps the slots of the stronger piece.
* A site is never both preferred (``site:kept:``) and dropped (``site:dropped:``): the
  lesson whose newest critique is newer wins; the other is excluded with the reason.
* Within a stage, lessons rank by weight (how widely the weakness showed), then by the
  order of their templates; :func:`cap_per_stage` keeps the first ``limit`` of each.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ...store.schema import STAGES, key_kind
from ...store.targets import stage_of, target_of
from ..types import Lesson
from .evidence import Evidence, stamp_of_id
from .text import TEMPLATES, lesson_text

__all__ = ["Settled", "merge_same_keys", "settle", "cap_per_stage"]

_ORDER = {name: i for i, name in enumerate(TEMPLATES)}
_OPPOSITE = {"site:kept": "site:dropped", "site:dropped": "site:kept"}


@dataclass(frozen=True)
class Settled:
    """Lessons ranked within each stage (no limit yet), and ``(key, reason)`` for evidence left out."""

    lessons: tuple[Lesson, ...]
    excluded: tuple[tuple[str, str], ...] = ()


def merge_same_keys(evidence: Iterable[Evidence]) -> list[Evidence]:
    """One piece of evidence per key: critique ids united (newest first), the stronger slots kept."""
    merged: dict[str, Evidence] = {}
    for item in evidence:
        seen = merged.get(item.key)
        if seen is None:
            merged[item.key] = item
            continue
        strong, weak = (seen, item) if seen.weight >= item.weight else (item, seen)
        ids = sorted(dict.fromkeys(strong.ids + weak.ids), key=stamp_of_id, reverse=True)
        merged[item.key] = Evidence(item.key, tuple(ids), strong.slots, max(seen.weight, item.weight))
    return list(merged.values())


def _settle_sites(evidence: list[Evidence]) -> tuple[list[Evidence], list[tuple[str, str]]]:
    """Drop the older of a site's ``site:kept`` / ``site:dropped`` pair."""
    by_key = {item.key: item for item in evidence}
    losers: dict[str, str] = {}
    for item in evidence:
        kind = key_kind(item.key)
        if kind not in _OPPOSITE:
            continue
        other = by_key.get(f"{_OPPOSITE[kind]}:{item.key.removeprefix(kind + ':')}")
        if other is None or item.key in losers or other.key in losers:
            continue
        newer, older = (item, other) if (item.newest, item.key) > (other.newest, other.key) else (other, item)
        losers[older.key] = f"contradicted by newer evidence ({newer.key}, from {newer.ids[0]})"
    return [item for item in evidence if item.key not in losers], sorted(losers.items())


def _rank(lesson_weight: tuple[Lesson, float]) -> tuple[int, float, int, str]:
    lesson, weight = lesson_weight
    kind = key_kind(lesson.key) or ""
    order = _ORDER.get(lesson.key, _ORDER.get(kind, len(_ORDER)))
    return STAGES.index(lesson.stage), -weight, order, lesson.key


def settle(evidence: Sequence[Evidence]) -> Settled:
    """Merge same-key evidence, settle contradictions, write the texts and rank them."""
    kept, excluded = _settle_sites(merge_same_keys(evidence))
    written: list[tuple[Lesson, float]] = []
    for item in kept:
        text = lesson_text(item)
        if text is None:
            excluded.append((item.key, "no template accepts its values"))
            continue
        lesson = Lesson(item.key, stage_of(item.key), target_of(item.key), text, item.ids)
        written.append((lesson, item.weight))
    written.sort(key=_rank)
    return Settled(tuple(lesson for lesson, _ in written), tuple(excluded))


def cap_per_stage(
    lessons: Sequence[Lesson], limit: int
) -> tuple[tuple[Lesson, ...], tuple[tuple[str, str], ...]]:
    """The first ``limit`` lessons of each stage, and ``(key, reason)`` for the rest."""
    counts: dict[str, int] = {}
    chosen: list[Lesson] = []
    left: list[tuple[str, str]] = []
    for lesson in lessons:
        counts[lesson.stage] = counts.get(lesson.stage, 0) + 1
        if counts[lesson.stage] <= limit:
            chosen.append(lesson)
        else:
            left.append((lesson.key, f"beyond the {limit} {lesson.stage} lessons a run is given"))
    return tuple(chosen), tuple(left)
