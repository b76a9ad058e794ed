"""``research-agent memory``: inspect and manage stored critiques and their lessons.

``app`` is a Typer sub-application that the main CLI mounts as ``memory``: ``list``, ``show``
and ``retry`` (:mod:`.memory_runs`), ``lessons``, ``effects``, ``validate``, ``prune`` (here),
``stats`` (:mod:`.memory_stats`) and ``ab`` (:mod:`.memory_ab`). These commands, and the
``critique`` command (:mod:`research_agent.cli.critique`), take their collaborators and their
reports folder from :mod:`.memory_deps` (a :class:`MemoryDeps` as the Click context ``obj``
replaces any of them; ``--reports-dir`` goes before or after the subcommand).
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import typer

from ..config import Settings
from ..domains import DOMAINS, parse_domain
from ..errors import InputError
from ..memory.lessons.select import preview_lessons
from ..memory.store.files import load_all, prune_critiques
from ..run_refs import Runs
from . import memory_ab, memory_runs, memory_stats
from .boundary import guarded
from .memory_deps import (
    MemoryDeps,
    ReportsDirOption,
    echo_json,
    memory_deps,
    memory_settings,
    remember_reports_dir,
)
from .memory_effects import show_effects
from .terminal import echo

__all__ = ["app", "MemoryDeps", "memory_deps", "memory_settings", "echo_json"]

app = typer.Typer(
    name="memory",
    help="Inspect and manage stored critiques and the lessons drawn from them.",
    no_args_is_help=True,
    add_completion=False,
)


@app.callback()
def _memory(ctx: typer.Context, reports_dir: ReportsDirOption = None) -> None:
    """Inspect and manage stored critiques and the lessons drawn from them.

    `memory stats --plot FILE` draws the score history; `memory retry ID` completes a failed critique.
    """
    remember_reports_dir(ctx, reports_dir)


app.command("list")(memory_runs.list_command)
app.command("show")(memory_runs.show_command)
app.command("retry")(memory_runs.retry_command)


def _classify(deps: MemoryDeps, settings: Settings, query: str) -> str:
    result = deps.classify(deps.make_model(settings), query)
    if inspect.isawaitable(result):
        result = asyncio.run(_await(result))
    return str(result)


async def _await(awaitable: Any) -> Any:
    return await awaitable


@app.command("lessons")
@guarded
def lessons_command(
    ctx: typer.Context,
    query: str = typer.Argument(..., help="The question a run would research."),
    domain: str | None = typer.Option(
        None, "--domain", help=f"Skip classification: one of {', '.join(DOMAINS)}."
    ),
    json_output: bool = typer.Option(False, "--json", help="Print JSON."),
    reports_dir: ReportsDirOption = None,
) -> None:
    """Show the lessons a run of QUERY would get now, and every file left out with its reason."""
    deps = memory_deps(ctx)
    settings = memory_settings(ctx, reports_dir)
    if domain is not None:
        chosen = parse_domain(domain)
    else:
        chosen = _classify(deps, settings, query)
        if chosen not in DOMAINS:
            raise InputError(f"the classifier returned an unknown domain {chosen[:40]!r}")
    selection, note = preview_lessons(
        settings.meta_dir,
        chosen,
        now=deps.clock(),
        ttl_days=settings.lesson_ttl_days,
        control_fraction=settings.control_fraction,
    )
    if json_output:
        echo_json(
            {"domain": chosen, **selection.as_record(), "warnings": list(selection.warnings), "note": note}
        )
        return
    echo(f"domain: {chosen}")
    echo(f"{selection.reason}")
    shorts = Runs.scan(settings.reports_dir).shorts()
    for number, lesson in enumerate(selection.lessons, start=1):
        critiques = ", ".join(shorts.get(i, i) for i in lesson.critique_ids)
        echo(f"{number}. {lesson.text}")
        echo(f"   {lesson.key} ({lesson.stage}; target {lesson.target}); critiques: {critiques}")
    if selection.lessons:
        echo(f"({note})")
    if selection.excluded:
        typer.echo("excluded:")
        for name, reason in selection.excluded:
            echo(f"  {name}: {reason}")
    for warning in selection.warnings:
        echo(f"warning: {warning}")


@app.command("effects")
@guarded
def effects_command(
    ctx: typer.Context,
    domain: str | None = typer.Option(None, "--domain", help=f"Only this domain: one of {', '.join(DOMAINS)}."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON only."),
    reports_dir: ReportsDirOption = None,
) -> None:
    """Each lesson's effect: its target with and without it, the difference with a 90% interval, its status."""
    show_effects(memory_settings(ctx, reports_dir).meta_dir, now=memory_deps(ctx).clock(), domain=domain, json_output=json_output)


@app.command("validate")
@guarded
def validate_command(ctx: typer.Context, reports_dir: ReportsDirOption = None) -> None:
    """Check every critique file; exit 1 listing each invalid one with the reason."""
    settings = memory_settings(ctx, reports_dir)
    loaded = load_all(settings.meta_dir, now=memory_deps(ctx).clock())
    if not loaded:
        echo(f"no critique files in {settings.meta_dir}")
        return
    bad = 0
    for item in loaded:
        if item.critique is None:
            bad += 1
            echo(f"invalid  {item.name}: {item.error}")
        else:
            echo(f"ok       {item.name}")
    echo(f"{len(loaded) - bad} valid, {bad} invalid" + (" (skipped: an invalid file never feeds a lesson)" if bad else ""))
    if bad:
        raise typer.Exit(1)


@app.command("prune")
@guarded
def prune_command(
    ctx: typer.Context,
    keep: int | None = typer.Option(
        None, "--keep", min=0, metavar="N", help="Critiques to keep (default: max_critiques, 50)."
    ),
    reports_dir: ReportsDirOption = None,
) -> None:
    """Delete the oldest critique files beyond the retention limit (invalid and future-dated files go first)."""
    settings = memory_settings(ctx, reports_dir)
    limit = settings.max_critiques if keep is None else keep
    if limit == 0:
        typer.echo("retention is off (keep 0): nothing pruned")
        return
    removed = prune_critiques(settings.meta_dir, limit, now=memory_deps(ctx).clock())
    for path in removed:
        echo(f"removed {path.name}")
    echo(f"pruned {len(removed)} file(s); keeping at most {limit}")


app.command("stats")(memory_stats.stats_command)
app.command("ab")(memory_ab.ab_command)
