"""``memory effects``: each lesson's measured effect, as a table a person can read, or JSON.

The numbers come from :func:`research_agent.memory.lessons.effects_view.lesson_effects` (the
same function the MCP server calls); this module only draws them: one table per domain, one
row per lesson with its target in words, its current text, the keys it cannot be told apart
from, and a legend. With ``--json`` stdout carries nothing but the JSON list.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from ...domains import DOMAINS, parse_domain
from ...memory.effects.lesson_effects import MIN_RUNS, NO_EFFECT_RUNS, LessonEffect
from ...memory.lessons.effects_view import lesson_effects
from ...memory.store.targets import TARGETS
from ..boundary import guarded
from ..terminal import dumps_json, echo, markup
from .group import app, memory_deps, memory_settings

__all__ = ["effects_command", "show_effects"]

_STATUS_WORDS = {
    "measuring": "measuring",
    "active": "active",
    "no-effect": "no effect (ranked last)",
    "retired": "retired (not given)",
}
LEGEND = (
    "with / without: the mean of the lesson's target in runs given it, and in runs that were eligible "
    "and withheld it (its own random trial, or a whole-run control); n counts those runs.",
    "delta: with minus without, turned so that + always means better; 90% interval: where the true "
    "difference lies, 9 times in 10.",
    "estimate: paired over the questions asked in both arms (at least 5), else Welch's over all runs.",
    f"measuring: fewer than {MIN_RUNS} runs in an arm; retired: after {MIN_RUNS} in each, the whole "
    f"interval lies below zero (no longer given until new runs without it lift it); no effect: after "
    f"{NO_EFFECT_RUNS} runs the interval still contains zero.",
    "never apart from: keys given and withheld together in every one of this lesson's runs, so their "
    "effects cannot be told apart (trials separate them over time).",
)


def _number(value: float | None, *, signed: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:+.2f}" if signed else f"{value:.2f}"


def _interval(effect: LessonEffect) -> str:
    if effect.interval is None:
        return "-"
    lo, hi = effect.interval
    return f"[{lo:+.2f}, {hi:+.2f}]"


def _estimate(effect: LessonEffect) -> str:
    if effect.method == "paired":
        return f"paired over {effect.paired_questions} questions"
    return "Welch (unpaired)"


def _lesson_cell(effect: LessonEffect) -> str:
    target = TARGETS[effect.target]
    better = "lower is better" if target.lower_is_better else "higher is better"
    lines = [f"[bold]{markup(effect.key)}[/bold] ({effect.stage})", f"target: {target.label} ({better})"]
    if effect.text:
        lines.append(f"[dim]{markup(effect.text)}[/dim]")
    if effect.confounded_with:
        lines.append(f"never apart from: {markup(', '.join(effect.confounded_with))}")
    return "\n".join(lines)


def _table(domain: str, effects: Sequence[LessonEffect]) -> Table:
    table = Table(title=f"lesson effects in {markup(domain)}", show_lines=True, title_justify="left")
    table.add_column("lesson", overflow="fold", ratio=3)
    for column in ("with", "without", "delta", "90% interval", "estimate", "status"):
        table.add_column(column, overflow="fold", ratio=1)
    for e in effects:
        table.add_row(
            _lesson_cell(e),
            f"{_number(e.mean_with)}\nn={e.applied_runs}",
            f"{_number(e.mean_without)}\nn={e.baseline_runs}",
            _number(e.delta, signed=True),
            _interval(e),
            _estimate(e),
            _STATUS_WORDS.get(e.status, e.status),
        )
    return table


def show_effects(
    meta_dir: Path, *, now: datetime, domain: str | None, json_output: bool, ttl_days: float = 30
) -> None:
    """Print the effects of the lessons in ``meta_dir`` (of ``domain``, or of every domain)."""
    chosen = parse_domain(domain) if domain is not None else None
    effects = lesson_effects(meta_dir, now=now, domain=chosen, ttl_days=ttl_days)
    if json_output:
        typer.echo(dumps_json([e.as_dict() for e in effects], indent=2))
        return
    if not effects:
        where = f" in {chosen}" if chosen else ""
        echo(f"no lesson has been given or withheld yet{where} ({meta_dir})")
        return
    console = Console(highlight=False, soft_wrap=False)
    for where in dict.fromkeys(e.domain for e in effects):
        console.print(_table(where, [e for e in effects if e.domain == where]))
    for line in LEGEND:
        echo(line)


@app.command("effects")
@guarded
def effects_command(
    ctx: typer.Context,
    domain: str | None = typer.Option(None, "--domain", help=f"Only this domain: one of {', '.join(DOMAINS)}."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON only."),
) -> None:
    """Each lesson's effect: its target with and without it, the difference with a 90% interval,
    the keys it was never apart from, and its status."""
    settings = memory_settings(ctx)
    show_effects(
        settings.meta_dir,
        now=memory_deps(ctx).clock(),
        domain=domain,
        json_output=json_output,
        ttl_days=settings.lesson_ttl_days,
    )
