"""``research-agent runs``: the run journal, newest first (every run from its start: running, done,
failed, cancelled, or interrupted when its process died), with the command that resumes a run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ...config import load_settings
from ...errors import InputError
from ...journal.listing import STATUSES, journal_rows
from ..boundary import console as make_console
from ..boundary import guarded, json_failures
from ..run_options import ReportsDir
from ..terminal import dumps_json, echo, markup

__all__ = ["runs_command"]

Status = Annotated[str | None, typer.Option("--status", metavar="STATUS", help=f"Only runs in this state: {', '.join(STATUSES)}.")]
Limit = Annotated[int | None, typer.Option("--limit", metavar="N", min=1, help="At most N runs (the newest).")]
Json = Annotated[bool, typer.Option("--json", help="Print one JSON list on stdout.")]
_COLOURS = {"done": "green", "running": "cyan", "failed": "red", "cancelled": "yellow", "interrupted": "magenta"}


@guarded
def runs_command(status: Status = None, limit: Limit = None, json_output: Json = False, reports_dir: ReportsDir = None) -> None:
    """List the run journal, newest first: every run from its start (running, done, failed, cancelled,
    or interrupted when its process died), and how to resume one (run --resume ID)."""
    with json_failures(json_output):
        if status is not None and status not in STATUSES:
            raise InputError(f"--status {status[:40]!r}: choose one of {', '.join(STATUSES)}")
        folder = reports_dir if reports_dir is not None else load_settings().reports_dir
        rows = journal_rows(Path(folder), status=status, limit=limit)
        if json_output:
            typer.echo(dumps_json(rows))
            return
    if not rows:
        echo(f"no runs in the journal of {folder}" + (f" with status {status}" if status else ""))
        return
    console = make_console()
    for row in rows:
        colour = _COLOURS.get(row["status"], "white")
        console.print(f"{row['short_id']}  [{colour}]{row['status']:<11}[/{colour}] {row['started']}  "
                      f"{row['mode']:<8} {row['front_end']:<7} {markup(row['question'][:80])}",
                      markup=True, soft_wrap=True, highlight=False)  # fmt: skip
        if row.get("error"):
            console.print(f"         {markup(row['error'][:160])}", soft_wrap=True, highlight=False)
        if row.get("resume"):
            console.print(f"         resume: {markup(row['resume'])}", soft_wrap=True, highlight=False)
