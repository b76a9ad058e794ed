"""The journal as the front ends show it: each run with its short id, as plain data.

``research-agent runs``, the workbench's ``/runs`` page and the MCP resource ``runs://journal`` all
show :func:`journal_rows`: the newest runs first, an interrupted run as such (its process is gone),
and whether it can be resumed, with the command that resumes it.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from ..run_refs import Runs
from .entries import RESUMABLE, STATUSES, JournalEntry, list_entries

__all__ = ["journal_rows", "row_of", "resume_command", "STATUSES"]


def resume_command(run_id: str, reports_dir: Path) -> str:
    """The command that resumes run ``run_id``."""
    return shlex.join(["research-agent", "run", "--resume", run_id, "--reports-dir", str(Path(reports_dir).resolve())])


def row_of(entry: JournalEntry, short: str, reports_dir: Path) -> dict[str, Any]:
    """One run as plain data (what ``runs --json`` prints for it)."""
    row: dict[str, Any] = {
        "id": entry.id, "short_id": short, "question": entry.question, "mode": entry.mode,
        "front_end": entry.front_end, "started": entry.started, "finished": entry.finished or None,
        "status": entry.status, "report": entry.report or None, "error": entry.error or None,
        "resumed": entry.resumed, "resumable": entry.status in RESUMABLE,
    }  # fmt: skip
    if row["resumable"]:
        row["resume"] = resume_command(entry.id, reports_dir)
    return row


def journal_rows(reports_dir: Path, *, status: str | None = None, limit: int | None = None) -> list[dict[str, Any]]:
    """The journal of ``reports_dir``, newest first (see the module's docstring)."""
    reports_dir = Path(reports_dir)
    entries = list_entries(reports_dir / "meta", status=status, limit=limit)
    shorts = Runs.scan(reports_dir).shorts() if entries else {}  # the journal's entries among them
    return [row_of(entry, shorts[entry.id], reports_dir) for entry in entries]
