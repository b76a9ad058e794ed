"""Critiques that failed, kept visible: one small record per run, ``meta/failed-critique-<id>.yaml``.

A background critique has no terminal to tell. When it fails (the endpoint is down, the answer
cannot be read, the process could not even start), :func:`log_failure` appends the ``FAIL`` line
to ``critique.log`` and writes a failure record with the reason and the time, atomically. A
later critique of the same run that succeeds removes it (:func:`clear_failure`). ``memory list``
shows the records (:func:`load_failures`) and ``memory retry`` completes them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from ...errors import ResearchError, StorageError
from ...files.atomic import atomic_write_text
from ...files.safeyaml import UnsafeYaml, dump_yaml, load_yaml_text, read_capped
from ...ids import format_utc, is_run_id
from ...run_refs import KINDS, run_file
from ...shapes import Plain, shape
from ...text.sanitize import sanitize
from .files import append_log

__all__ = ["FailedCritique", "failure_path", "record_failure", "clear_failure", "load_failures", "log_failure"]

_MAX_BYTES = 16 * 1024
_MAX_REASON = 500


@dataclass(frozen=True)
class FailedCritique(Plain):
    """A run whose critique failed: why, and when (UTC, ``2026-11-22T09:58:36.000000Z``)."""

    run_id: str = field(metadata=shape(key="id"))
    reason: str
    failed_at: str


def failure_path(meta_dir: Path, run_id: str) -> Path:
    """``<meta>/failed-critique-<id>.yaml``."""
    return Path(meta_dir) / run_file(Path("."), "failed", run_id).name


def record_failure(meta_dir: Path, run_id: str, reason: str, *, now: datetime | None = None) -> Path:
    """Write (or replace) the failure record of run ``run_id``; return its path."""
    text = sanitize(reason or "unknown error", single_line=True)[:_MAX_REASON]
    data = {"id": run_id, "failed_at": format_utc(now or datetime.now(UTC)), "reason": text}
    header = "# research-agent: this run's critique failed; `research-agent memory retry <id>` completes it\n"
    return atomic_write_text(failure_path(meta_dir, run_id), header + dump_yaml(data))


def clear_failure(meta_dir: Path, run_id: str) -> bool:
    """Remove the failure record of ``run_id`` (after a critique succeeded); True if there was one."""
    try:
        failure_path(meta_dir, run_id).unlink()
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise StorageError(f"cannot remove {failure_path(meta_dir, run_id)}: {exc.strerror or exc}") from None
    return True


def _load_one(meta_dir: Path, run_id: str) -> FailedCritique:
    path = failure_path(meta_dir, run_id)
    try:
        data = load_yaml_text(read_capped(path, max_bytes=_MAX_BYTES, within=Path(meta_dir)))
    except UnsafeYaml as exc:
        return FailedCritique(run_id, f"(unreadable failure record: {exc})", "")
    if not isinstance(data, dict):
        return FailedCritique(run_id, "(unreadable failure record)", "")
    reason, when = data.get("reason"), data.get("failed_at")
    return FailedCritique(
        run_id,
        sanitize(reason, single_line=True)[:_MAX_REASON] if isinstance(reason, str) else "(no reason recorded)",
        when if isinstance(when, str) and len(when) <= 40 else "",
    )


def load_failures(meta_dir: Path) -> list[FailedCritique]:
    """Every failure record in ``meta_dir``, newest run first (only the listing and these small files)."""
    _folder, prefix, suffix, _ = KINDS["failed"]
    try:
        with os.scandir(meta_dir) as entries:
            names = [e.name for e in entries if e.name.startswith(prefix) and e.name.endswith(suffix)]
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise StorageError(f"cannot list {meta_dir}: {exc.strerror or exc}") from None
    ids = [name[len(prefix) : len(name) - len(suffix)] for name in names]
    ids = sorted((i for i in ids if is_run_id(i)), key=lambda i: (i.rsplit("_", 1)[-1], i), reverse=True)
    return [_load_one(Path(meta_dir), run_id) for run_id in ids]


def log_failure(meta_dir: Path, subject: str, run_id: str | None, message: str, *, now: datetime | None = None) -> None:
    """A critique failed: the ``FAIL`` line in ``critique.log`` and, when the run is known, its
    failure record. Raises StorageError naming whichever could not be written."""
    problems = []
    for write in (
        lambda: append_log(meta_dir, "FAIL", subject, message, now=now),
        lambda: record_failure(meta_dir, run_id, message, now=now) if run_id else None,
    ):
        try:
            write()
        except ResearchError as exc:
            problems.append(str(exc))
    if problems:
        raise StorageError("; ".join(problems))
