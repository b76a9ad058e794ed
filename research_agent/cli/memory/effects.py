"""``memory effects``: each lesson's measured effect, as a table or JSON.

The numbers come from :func:`research_agent.memory.effects.lesson_effects.lesson_effects` (the same
function the MCP server calls); this module only draws them. With ``--json`` stdout
carries nothing but the JSON list.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from ...domains import DOMAINS, parse_domain
from ...memory.effects.lesson_effects import MIN_RUNS, LessonEffect, lesson_effects
from ...memory.store.index import IndexTrust
from ..boundary import guarded
from ..terminal import dumps_json, echo, markup
from .group import app, memory_deps, memory_settings

__all__ = ["effects_command", "show_effects"]


def _number(value: float | None, *, signed: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:+.3g}" if signed else f"{value:.3g}"


def _interval(effect: LessonEffect) -> str:
    if effect.interval is None:
        return "-"
    lo, hi = effect.interval
    return f"[{lo:+.3g}, {hi:+.3g}]"


def _table(domain: str, effects: Sequence[LessonEffect]) -> Table:
    table = Table(
        title=f"lesson effects in {markup(domain)} (delta: with minus without; positive means better)"
    )
    for column in ("lesson (target)", "stage", "with", "without", "delta", "90% interval", "status"):
        table.add_column(column, overflow="fold")
    for e in effects:
        table.add_row(
            f"{markup(e.key)}\n  {e.target}",
            e.stage,
            f"{_number(e.mean_with)} (n={e.applied_runs})",
            f"{_number(e.mean_without)} (n={e.baseline_runs})",
            _number(e.delta, signed=True),
            _interval(e),
            e.status,
        )
    return table


def show_effects(
    meta_dir: Path, *, now: datetime, domain: str | None, json_output: bool, trust: IndexTrust | None = None
) -> None:
    """Print the effects of the lessons in ``meta_dir`` (of ``domain``, or of every domain);
    ``trust``: the user's key and seals, which let the on-disk index be used."""
    chosen = parse_domain(domain) if domain is not None else None
    effects = lesson_effects(meta_dir, now=now, domain=chosen, trust=trust)
    if json_output:
        typer.echo(dumps_json([e.as_dict() for e in effects], indent=2))
        return
    if not effects:
        where = f" in {chosen}" if chosen else ""
        echo(f"no lesson has been applied or held back yet{where} ({meta_dir})")
        return
    console = Console(highlight=False, soft_wrap=False)
    for where in dict.fromkeys(e.domain for e in effects):
        console.print(_table(where, [e for e in effects if e.domain == where]))
    echo(
        f"trial: fewer than {MIN_RUNS} runs with or without the lesson; retired: after {MIN_RUNS} of each, "
        "the whole interval lies below zero (later runs are not given it until new evidence lifts it)"
    )


@app.command("effects")
@guarded
def effects_command(
    ctx: typer.Context,
    domain: str | None = typer.Option(None, "--domain", help=f"Only this domain: one of {', '.join(DOMAINS)}."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON only."),
) -> None:
    """Each lesson's effect: its target with and without it, the difference with a 90% interval, its status."""
    settings = memory_settings(ctx)
    now = memory_deps(ctx).clock()
    show_effects(settings.meta_dir, now=now, domain=domain, json_output=json_output, trust=IndexTrust(settings.state_dir))
