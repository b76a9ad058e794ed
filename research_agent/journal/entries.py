"""The run journal's entries: ``reports/meta/journal-<id>.json``, one file per run, written atomically.

An entry is written when a run starts (``running``) and again when it ends (``done``, ``failed``,
``cancelled``). While it runs, its process holds an exclusive lock on ``journal-<id>.lock``
(:mod:`research_agent.files.locks`); the lock goes with the process, however it dies. So an entry
that still says ``running`` while nobody holds its lock belongs to a process that died: it reads
as ``interrupted``, whenever it is read, with no timer involved (:func:`read_entry`).

The entry also keeps what resuming the run needs: its settings (no secret among them), the seed
of its lesson draw, and how many times it was resumed. Files under ``reports/`` may come from
anywhere: an entry is read size-capped and shape-checked, and one that fails is passed over; it is
signed with the user's key (:mod:`.signing`), and only an entry whose signature checks can be
resumed (:func:`signed_entry`).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import InputError, StorageError
from ..files.atomic import atomic_write_text
from ..files.locks import held
from ..files.safefile import read_text_capped
from ..ids import is_run_id
from ..text.controls import one_line
from .signing import checks, mac

__all__ = [
    "JournalEntry", "STATUSES", "ENDED", "RESUMABLE", "entry_path", "lock_path", "write_entry", "read_entry",
    "list_entries", "remove_entry", "iter_ids", "signed_entry",
]  # fmt: skip

STATUSES = ("running", "done", "failed", "cancelled", "interrupted")
ENDED = ("done", "failed", "cancelled")  # what a run that ended in its own process writes
RESUMABLE = ("interrupted", "failed", "cancelled")
MAX_ENTRY_BYTES = 256 * 1024
FRONT_ENDS = ("cli", "batch", "eval", "web", "mcp", "library")


@dataclass(frozen=True)
class JournalEntry:
    """One run as the journal knows it. ``status``: one of :data:`STATUSES`; ``report``: the report's
    path once written ("" before); ``error``: why it failed, one line. ``settings``: what resuming
    needs to run it alike (:mod:`.settings_snapshot`); ``seed``: its lesson draw's."""

    id: str
    question: str
    mode: str
    front_end: str
    started: str
    status: str = "running"
    finished: str = ""
    report: str = ""
    error: str = ""
    settings: dict[str, Any] = field(default_factory=dict)
    seed: int = 0
    resumed: int = 0  # times the run was resumed
    reused: int = 0  # model answers and searches the last resume took from the checkpoints

    def to_json(self, key: bytes | None = None) -> str:
        """The entry as its file holds it, signed with ``key`` (None: unsigned, never resumable)."""
        data: dict[str, Any] = {"schema_version": 1, **asdict(self)}
        if key is not None:
            data["mac"] = mac(key, "entry", entry_path(Path("."), self.id).name, asdict(self))
        return json.dumps(data, indent=1, ensure_ascii=False) + "\n"

    @classmethod
    def from_data(cls, data: Any) -> JournalEntry:
        """The entry ``data`` holds; ValueError when it is not one."""
        if not isinstance(data, dict):
            raise ValueError("not a mapping")
        kinds = {name: f.type for name, f in cls.__dataclass_fields__.items()}
        values = {name: data[name] for name in kinds if name in data}
        for name, value in values.items():
            want = {"str": str, "int": int, "dict[str, Any]": dict}[str(kinds[name])]
            if not isinstance(value, want) or isinstance(value, bool):
                raise ValueError(f"{name} has the wrong type")
        entry = cls(**values)
        if not is_run_id(entry.id) or entry.status not in STATUSES:
            raise ValueError("not a run id, or an unknown status")
        return entry

    def ended(self, status: str, *, finished: str, report: str = "", error: str = "") -> JournalEntry:
        return replace(self, status=status, finished=finished, report=report, error=one_line(error)[:500])


def entry_path(meta_dir: Path, run_id: str) -> Path:
    return Path(meta_dir) / f"journal-{run_id}.json"


def lock_path(meta_dir: Path, run_id: str) -> Path:
    return Path(meta_dir) / f"journal-{run_id}.lock"


def write_entry(meta_dir: Path, entry: JournalEntry, key: bytes | None = None) -> Path:
    """Write ``entry`` atomically (a reader sees the old entry or the new one, never half), signed
    with ``key`` (the user's: only a signed entry can be resumed)."""
    return atomic_write_text(entry_path(meta_dir, entry.id), entry.to_json(key))


def signed_entry(meta_dir: Path, run_id: str, key: bytes) -> bool:
    """Whether the entry of ``run_id`` is as research-agent wrote it under ``key``, the user's."""
    path = entry_path(meta_dir, run_id)
    try:
        data = json.loads(read_text_capped(path, max_bytes=MAX_ENTRY_BYTES, inside=meta_dir))
        entry = JournalEntry.from_data(data)
    except (OSError, StorageError, InputError, ValueError, TypeError):
        return False
    return entry.id == run_id and checks(key, "entry", path.name, asdict(entry), data.get("mac"))


def read_entry(meta_dir: Path, run_id: str) -> JournalEntry | None:
    """The entry of ``run_id`` (None when there is none, or it cannot be read), ``interrupted`` when
    it says ``running`` and no process holds its lock."""
    entry = _load(entry_path(meta_dir, run_id), meta_dir)
    if entry is None or entry.status != "running" or held(lock_path(meta_dir, run_id)):
        return entry
    again = _load(entry_path(meta_dir, run_id), meta_dir)  # it may have ended as the lock was looked at
    if again is None or again.status != "running":
        return again
    return replace(again, status="interrupted")


def _load(path: Path, meta_dir: Path) -> JournalEntry | None:
    try:
        return JournalEntry.from_data(json.loads(read_text_capped(path, max_bytes=MAX_ENTRY_BYTES, inside=meta_dir)))
    except (OSError, StorageError, InputError, ValueError, TypeError):
        return None


def _ids(meta_dir: Path) -> list[str]:
    try:
        names = os.listdir(meta_dir)
    except OSError:
        return []
    ids = [n.removeprefix("journal-").removesuffix(".json") for n in names if n.startswith("journal-") and n.endswith(".json")]
    return sorted((i for i in ids if is_run_id(i)), key=lambda i: (i.rsplit("_", 1)[-1], i), reverse=True)


def list_entries(meta_dir: Path, *, status: str | None = None, limit: int | None = None) -> list[JournalEntry]:
    """The journal's entries, newest first (by the time in the id); only those of ``status`` when
    given; at most ``limit``. Entries that cannot be read are passed over."""
    found: list[JournalEntry] = []
    for run_id in _ids(meta_dir):
        entry = read_entry(meta_dir, run_id)
        if entry is None or (status is not None and entry.status != status):
            continue
        found.append(entry)
        if limit is not None and len(found) >= limit:
            break
    return found


def remove_entry(meta_dir: Path, run_id: str) -> None:
    """Remove the entry of ``run_id`` and its lock file (pruning a run's files)."""
    for path in (entry_path(meta_dir, run_id), lock_path(meta_dir, run_id)):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def iter_ids(meta_dir: Path) -> Iterator[str]:
    """The run ids the journal has an entry for, newest first."""
    yield from _ids(meta_dir)
