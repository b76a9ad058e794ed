"""``research-agent critique --run RECORD``, and how a run's critique is told on the terminal.

The work is memory's (:func:`research_agent.memory.critique.schedule.critique_now`, the same
function ``--wait-critique`` and the detached worker use); this module only prints.
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from ..memory.critique.judgement import summarize
from ..memory.critique.schedule import Scheduled, critique_now
from ..memory.store.files import critique_path
from .boundary import guarded
from .memory import echo_json, memory_deps, memory_settings
from .terminal import echo, markup, one_line, visible

__all__ = ["critique_command", "print_scheduled"]


@guarded
def critique_command(
    ctx: typer.Context,
    run: Path = typer.Option(..., "--run", help="A run record: reports/meta/run-<id>.yaml."),
    json_output: bool = typer.Option(False, "--json", help="Print the critique as JSON."),
    reports_dir: Path | None = typer.Option(
        None, "--reports-dir", help="Reports folder (default from settings)."
    ),
) -> None:
    """Critique a finished run and store reports/meta/critique-<id>.yaml next to its record."""
    deps = memory_deps(ctx)
    critique = critique_now(
        run,
        lambda: memory_settings(ctx, reports_dir),
        make_model=deps.make_model,
        now=deps.clock(),
    )
    path = critique_path(Path(run).parent, critique.id)
    if json_output:
        echo_json({**critique.as_dict(), "path": str(path)})
    else:
        echo(summarize(critique, path=path))


def print_scheduled(scheduled: Scheduled, console: Console) -> None:
    """Tell what became of a run's critique: its summary when waited for, or why there is none."""
    if scheduled.state == "done" and scheduled.critique is not None:
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
