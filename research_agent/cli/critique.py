"""``research-agent critique --run RECORD``, and how a run's critique is told on the terminal.

The work is memory's (:func:`research_agent.memory.critique.schedule.critique_now`, the same
function ``--wait-critique`` and the detached worker use); this module only prints.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console

from ..config import Settings
from ..errors import InputError
from ..memory.store.files import critique_path
from ..run_refs import Runs, named_run_id, resolve_run, run_file, short_id
from .boundary import guarded
from .memory import echo_json, memory_deps, memory_settings
from .memory.group import ReportsDirOption
from .terminal import echo, markup, one_line, visible

if TYPE_CHECKING:
    from ..memory.critique.schedule import Scheduled

__all__ = ["critique_command", "print_scheduled", "record_path"]


def record_path(run: str, settings: Settings) -> Path:
    """The run record ``--run`` names: a record file, or a run reference resolved in the reports folder.

    A report (``.md``) is refused with the record to pass instead.
    """
    path = Path(run)
    if path.suffix.lower() in (".md", ".markdown", ".html", ".pdf"):
        hint = ""
        run_id = named_run_id(path.name)
        if run_id is not None:
            hint = f", or its id: research-agent critique --run {short_id(run_id, Runs.scan(settings.reports_dir).ids())}"
        raise InputError(f"{run} is a report: pass its run record (reports/meta/run-<id>.yaml){hint}")
    if path.exists() or path.is_symlink() or len(path.parts) > 1 or path.suffix.lower() in (".yaml", ".yml"):
        return path  # a file (read_run_record says what is wrong with it)
    return run_file(settings.reports_dir, "record", resolve_run(settings.reports_dir, run, "record"))


@guarded
def critique_command(
    ctx: typer.Context,
    run: str = typer.Option(
        ..., "--run", metavar="RUN",
        help="A run record (reports/meta/run-<id>.yaml), or a run's id, short id, unique prefix, latest or latest~N.",
    ),
    json_output: bool = typer.Option(False, "--json", help="Print the critique as JSON."),
    reports_dir: ReportsDirOption = None,
) -> None:
    """Critique a finished run and store reports/meta/critique-<id>.yaml next to its record."""
    deps = memory_deps(ctx)
    settings = memory_settings(ctx, reports_dir)
    record = record_path(run, settings)
    from ..memory.critique.judgement import summarize  # imported when used: every command starts lighter
    from ..memory.critique.schedule import critique_now

    critique = critique_now(record, settings, make_model=deps.make_model, now=deps.clock())
    path = critique_path(record.parent, critique.id)
    if json_output:
        echo_json({**critique.as_dict(), "short_id": short_id(critique.id, Runs.scan(settings.reports_dir).ids()),
                   "path": str(path)})  # fmt: skip
    else:
        echo(summarize(critique, path=path))


def print_scheduled(scheduled: Scheduled, console: Console) -> None:
    """Tell what became of a run's critique: its summary when waited for, or why there is none."""
    if scheduled.state == "done" and scheduled.critique is not None:
        from ..memory.critique.judgement import summarize

        summary = summarize(scheduled.critique, path=scheduled.path)
        console.print(visible(summary), highlight=False, markup=False, soft_wrap=True)
    elif scheduled.state == "failed":
        console.print(
            f"[yellow]critique failed:[/yellow] {markup(one_line(scheduled.error))}", markup=True, soft_wrap=True
        )
    elif scheduled.state == "not_started":
        console.print(
            f"[yellow]could not start the critique:[/yellow] {markup(one_line(scheduled.error))}",
            markup=True,
            soft_wrap=True,
        )
