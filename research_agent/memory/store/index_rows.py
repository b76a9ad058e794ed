"""What the summary index keeps of one critique file, made only by the real loader.

A :class:`FileRow` is the outcome of :func:`~research_agent.memory.store.files.load_entry` for
one file, keyed by the file's *signature* (inode, size, mtime, ctime and mode, from
``lstat``): a valid file gives its id, domain, run time, model, mean, pass and whether
it was adaptive; a refused file gives the loader's reason. A valid but suspect critique
(:attr:`~.critique_types.Critique.suspect_reason`) keeps its reason too, and no use rows:
it feeds no lesson, no effect and no suspension. A :class:`UseRow` records a
lesson key the critique applied or withheld, with the value of that key's target in
the critique (:mod:`.targets`; None where it does not apply), so that effects are sums
over one table. A run that went without lessons because its memory could not be read
(``lessons: unavailable``) has no use rows and is marked unavailable: it was not randomly
withheld, so it belongs to neither arm of any comparison. The critique itself is kept as
JSON (:class:`Parsed` ``body``) for ``memory list``. Checks that depend on the time of
asking (expiry, a date in the future) are made when the index is read, never stored.

``stored()`` gives each row's values as SQLite hands them back (0/1 for booleans, floats
for REAL columns), which is what a file row's MAC covers (:mod:`.index_sign`); a use row's
covers ``signed()``.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import NamedTuple

from .critique_types import Critique
from .files import CritiqueEntry, load_entry
from .schema import LESSON_KEY
from .targets import measure, target_of

__all__ = ["FileRow", "UseRow", "Parsed", "signature", "rows_for", "ARMS", "MAX_VALUE"]

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
    available: bool = True  # False: the run went without lessons because memory could not be read
    nuses: int = 0  # how many use rows the file has (a deleted or added use row shows here)

    def stored(self) -> tuple[object, ...]:
        """The row as SQLite hands it back."""
        return (
            self.name, self.sig, int(self.ok), self.reason, self.run_id, self.stamp, _real(self.created),
            self.domain, self.model, _real(self.mean), int(self.passed), int(self.adaptive),
            int(self.available), int(self.nuses),
        )  # fmt: skip


def _real(value: float | None) -> float | None:
    """A REAL column's value as read back (an int becomes a float; -0.0 is stored as 0)."""
    return None if value is None else float(value) + 0.0


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

    def stored(self) -> tuple[object, ...]:
        """The row as SQLite hands it back."""
        return (*self[:7], _real(self.created), _real(self.value))

    def signed(self) -> tuple[object, ...]:
        """What the row's MAC covers: its own values. Its domain and times are its file's,
        whose row is signed; a use row moved to another domain or time changes its file's
        count of rows there, which is checked (see :mod:`.index`)."""
        return (self.name, self.key, self.arm, self.stage, self.text, _real(self.value))


class Parsed(NamedTuple):
    """What the index keeps of one file: its row, its use rows, and the critique as JSON
    (None for a refused file)."""

    file: FileRow
    uses: list[UseRow]
    body: str | None


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


def rows_for(entry: CritiqueEntry, sig: str, meta_dir: Path) -> Parsed:
    """Load ``entry`` with the real loader and summarise it (or record why it was refused)."""
    loaded = load_entry(entry, meta_dir=meta_dir)
    critique = loaded.critique
    if critique is None:
        reason = loaded.error or "invalid"
        return Parsed(
            FileRow(entry.name, sig, False, reason, entry.run_id, entry.stamp, None, "", "", None, False, False),
            [],
            None,
        )
    suspect = critique.suspect_reason
    # neither a suspect critique nor a run that could not read its memory is evidence of an effect
    uses = _uses(entry.name, critique) if critique.lessons_available and not suspect else []
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
        critique.lessons_available,
        len(uses),
    )
    return Parsed(row, uses, json.dumps(critique.as_dict(), separators=(",", ":")))
