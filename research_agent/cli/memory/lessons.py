"""``memory lessons QUERY``: the lessons a run of a question would get now."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import typer

from ...config import Settings
from ...domains import DOMAINS, parse_domain
from ...errors import InputError
from ...interrupts import run_interruptibly
from ...memory.effects.stats import not_collapse
from ...memory.lessons.setting import NOT_OVER_CORPUS, RunSetting
from ...memory.lessons.types import KEPT_WORDS
from ...run_refs import Runs
from ...service.memory import Memory
from ..boundary import guarded
from ..terminal import echo
from .group import MemoryDeps, ReportsDirOption, app, echo_json, memory_deps, memory_settings

__all__ = ["lessons_command"]


def _classify(deps: MemoryDeps, settings: Settings, query: str) -> str:
    result = deps.classify(deps.make_model(settings), query)
    if inspect.isawaitable(result):
        result = run_interruptibly(_await(result))
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
    corpus: list[Path] | None = typer.Option(
        None, "--corpus", exists=True, file_okay=False, dir_okay=True,
        help="As a run over this folder of your own documents would get them (repeatable).",
    ),
    json_output: bool = typer.Option(False, "--json", help="Print JSON."),
    reports_dir: ReportsDirOption = None,
) -> None:
    """Show the lessons a run of QUERY would get now (a web run, or with --corpus a run over your
    documents), and every file and lesson left out with its reason."""
    deps = memory_deps(ctx)
    settings = memory_settings(ctx, reports_dir)
    if domain is not None:
        chosen = parse_domain(domain)
    else:
        chosen = _classify(deps, settings, query)
        if chosen not in DOMAINS:
            raise InputError(f"the classifier returned an unknown domain {chosen[:40]!r}")
    selection, note = Memory(settings).preview(
        chosen, now=deps.clock(), setting=RunSetting.of(corpus, web=False) if corpus else RunSetting(web=True)
    )
    not_over_corpus = [key for key, why in selection.excluded if why == NOT_OVER_CORPUS]
    if json_output:
        echo_json(
            {"domain": chosen, **selection.as_record(), "warnings": list(not_collapse(selection.warnings)), "note": note}
        )
        return
    echo(f"domain: {chosen}")
    echo(f"{selection.reason}")
    shorts = Runs.scan(settings.reports_dir).shorts()
    for number, lesson in enumerate(selection.lessons, start=1):
        critiques = ", ".join(shorts.get(i, i) for i in lesson.critique_ids)
        echo(f"{number}. {lesson.text}")
        source = f"critiques: {critiques}" if lesson.critique_ids else "lessons.yaml"
        if lesson.kept:
            source = f"{KEPT_WORDS}; first given in run {critiques}"
        echo(f"   {lesson.key} ({lesson.origin}; {lesson.stage}; target {lesson.target}); {source}")
    if selection.lessons:
        echo(f"({note})")
    if not_over_corpus:
        echo(f"a run over your own documents does not get: {', '.join(not_over_corpus)} ({NOT_OVER_CORPUS})")
    if selection.excluded:
        typer.echo("excluded:")
        for name, reason in selection.excluded:
            echo(f"  {name}: {reason}")
    for warning in not_collapse(selection.warnings):
        echo(f"warning: {warning}")
