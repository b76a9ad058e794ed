"""What the summary index keeps of one critique file, made only by the real loader.

A :class:`FileRow` is the outcome of :func:`~research_agent.memory.store.files.load_entry` for
one file, keyed by the file's *signature* (inode, size, mtime, ctime and mode, from
``lstat``): a valid file gives its id, domain, run time, model, mean, pass and whether
it was adaptive; a refused file gives the loader's reason. A valid but suspect critique
(:attr:`~.critique_types.Critique.suspect_reason`) keeps its reason too, and no use rows:
it feeds no lesson, no effect and no suspension. A :class:`UseRow` records a
lesson key the critique applied or withheld, with the value of that key's target in
the critique (:mod:`.targets`; None where it does not apply), so that effects are sums
over one table. Checks that depend on the time of asking (expiry, a date in the future)
are made when the index is read, never stored.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import NamedTuple

from .critique_types import Critique
from .files import CritiqueEntry, load_entry
from .schema import LESSON_KEY
from .targets import measure, target_of

__all__ = ["FileRow", "UseRow", "signature", "rows_for", "ARMS", "MAX_VALUE"]

ARMS = ("applied", "withheld")
MAX_VALUE = 10_000_000  # no target reaches this; anything beyond is not a measurement


class FileRow(NamedTuple):
    """One critique file as the index holds it (``ok`` False: refused, with ``reason``;
    ``ok`` True with a ``reason``: valid but suspect)."""

    name: str
    sig: str
    ok: bool
    reason: str
    run_id: str
    stamp: str  # from the file name: sortable UTC time
    created: float | None  # the critique's own timestamp (seconds since the epoch)
    domain: str
    model: str
    mean: float | None
    passed: bool
    adaptive: bool


class UseRow(NamedTuple):
    """A lesson ``key`` one critique ``applied`` (its run was given it) or ``withheld`` (a
    baseline run held it back), and the value of the key's target in that critique."""

    name: str
    key: str
    arm: str
    stage: str
    text: str
    domain: str
    stamp: str
    created: float
    value: float | None


def signature(info: os.stat_result) -> str:
    """What changes whenever a file is replaced, edited (even with its mtime put back) or swapped for a link."""
    return f"{info.st_ino}:{info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}:{info.st_mode}"


def _value(critique: Critique, key: str) -> float | None:
    value = measure(critique, target_of(key))
    return value if value is not None and math.isfinite(value) and abs(value) <= MAX_VALUE else None


def _uses(name: str, critique: Critique) -> list[UseRow]:
    """Each key the critique applied or withheld, once per arm."""
    created = critique.created_at.timestamp()
    stamp = name.removesuffix(".yaml").rsplit("_", 1)[-1]
    found: dict[tuple[str, str], UseRow] = {}
    for lesson in critique.lessons_applied:
        if lesson.key and LESSON_KEY.match(lesson.key) and (lesson.key, "applied") not in found:
            found[(lesson.key, "applied")] = UseRow(
                name, lesson.key, "applied", lesson.stage or "", lesson.text,
                critique.query_domain, stamp, created, _value(critique, lesson.key),
            )  # fmt: skip
    for key in (w.key for w in critique.lessons_withheld):
        if LESSON_KEY.match(key) and (key, "withheld") not in found:
            found[(key, "withheld")] = UseRow(
                name, key, "withheld", "", "", critique.query_domain, stamp, created, _value(critique, key)
            )
    return list(found.values())


def rows_for(entry: CritiqueEntry, sig: str, meta_dir: Path) -> tuple[FileRow, list[UseRow]]:
    """Load ``entry`` with the real loader and summarise it (or record why it was refused)."""
    loaded = load_entry(entry, meta_dir=meta_dir)
    critique = loaded.critique
    if critique is None:
        reason = loaded.error or "invalid"
        return FileRow(
            entry.name, sig, False, reason, entry.run_id, entry.stamp, None, "", "", None, False, False
        ), []
    suspect = critique.suspect_reason
    row = FileRow(
        entry.name,
        sig,
        True,
        f"suspect: {suspect}" if suspect else "",  # valid, but it teaches nothing
        critique.id,
        entry.stamp,
        critique.created_at.timestamp(),
        critique.query_domain,
        critique.model_version,
        critique.mean_score,
        critique.overall_pass,
        critique.adaptive,
    )
    return row, [] if suspect else _uses(entry.name, critique)
