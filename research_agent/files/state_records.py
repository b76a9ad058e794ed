"""Small JSON records in the user state folder, read safely and changed under a lock.

A record is one JSON object in a file of :func:`~research_agent.files.state.state_folder`
(the trusted hashes of lesson files, the person's decisions on the critic's proposals).
Reading refuses anything but a regular file under :data:`MAX_RECORD_BYTES`; a record that
does not parse as a JSON object is a :class:`~research_agent.errors.StorageError` naming
the file, never silently replaced. :func:`update_record` holds an exclusive ``flock`` on
``<name>.lock`` while it reads, changes and atomically writes the record, so two commands
run at once never lose each other's change.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..errors import StorageError
from .atomic import atomic_write_bytes
from .locks import exclusive_lock
from .safefile import UnsafeFile, read_text_capped
from .state import state_folder

__all__ = ["MAX_RECORD_BYTES", "read_record", "update_record", "locked"]

MAX_RECORD_BYTES = 1024 * 1024


def read_record(state_dir: Path, name: str) -> dict[str, Any]:
    """The record ``name`` in the state folder; ``{}`` when there is none yet."""
    path = state_folder(state_dir) / name
    if not os.path.lexists(path):
        return {}
    try:
        text = read_text_capped(path, max_bytes=MAX_RECORD_BYTES, inside=path.parent)
    except UnsafeFile as exc:
        raise StorageError(f"cannot read {path}: {exc}") from None
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise StorageError(f"{path} is not a JSON object; move it aside to start it afresh")
    return data


@contextlib.contextmanager
def locked(state_dir: Path, name: str) -> Iterator[None]:
    """Hold the exclusive lock ``<name>.lock`` of the state folder (for a change that spans
    several files, such as writing a lesson file and recording its hash)."""
    with exclusive_lock(state_folder(state_dir) / f"{name}.lock", mode=0o600):
        yield


def update_record(state_dir: Path, name: str, change: Callable[[dict[str, Any]], Any]) -> Any:
    """Apply ``change`` to the record ``name`` (it edits the dict in place) and write it back
    atomically, private to the user, all under the record's lock; return what ``change`` returned."""
    folder = state_folder(state_dir)
    with locked(state_dir, name):
        data = read_record(state_dir, name)
        result = change(data)
        text = json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
        if len(text.encode("utf-8")) > MAX_RECORD_BYTES:
            raise StorageError(f"{folder / name} would pass {MAX_RECORD_BYTES // 1024} KiB; not written")
        atomic_write_bytes(folder / name, text.encode("utf-8"), mode=0o600)
    return result
