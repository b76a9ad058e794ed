"""``memory stats``: per-domain score trends, adaptive against baseline, suspension and collapse."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from ...config import Settings
from ...memory.effects.stats import ClaimTrend, CritiqueCost, MemoryStats, compute_stats, plot_history
from ...memory.lessons.select import SelectionRules, compared_runs
from ...memory.lessons.types import MAX_LESSONS
from ...memory.store.files import load_all
from ...memory.store.schema import DIMENSIONS
from ...service.memory import Memory
from ..boundary import guarded
from ..terminal import echo, markup
from .group import ReportsDirOption, app, console, echo_json, memory_deps, memory_settings

__all__ = ["stats_command"]


def _trend(mean: float | None, delta: float | None) -> str:
    if mean is None:
        return "n/a"
    if delta is None or abs(delta) < 0.05:
        return f"{mean:.1f}"
    return f"{mean:.1f} {'↑' if delta > 0 else '↓'}{abs(delta):.1f}"


def _cost_line(domain: str, cost: CritiqueCost) -> str:
    """What the critiques of ``domain`` spent, as one line."""
    if not cost.recorded:
        return f"critique cost ({domain}): not recorded"
    dollars = "cost unknown" if cost.cost_usd is None else f"${cost.cost_usd:.4f}"
    return (
        f"critique cost ({domain}): {cost.tokens:,} tokens ({cost.prompt_tokens:,} prompt, "
        f"{cost.completion_tokens:,} completion) in {cost.calls} call(s) over {cost.recorded} "
        f"critique(s), {dollars}"
    )


def _claims_line(domain: str, trend: ClaimTrend) -> str:
    """The claim check's unsupported share in ``domain`` over time, as one line."""
    if not trend.runs:
        return f"unsupported claims ({domain}): no run checked its claims"
    line = f"unsupported claims ({domain}): {trend.mean:.0%} of checked claims over {trend.runs} run(s)"
    if trend.earlier is not None and trend.recent is not None:
        line += f"; earlier half {trend.earlier:.0%}, recent half {trend.recent:.0%}"
    return line


def _z(value: float | None) -> str:
    return "-" if value is None else f"{value:+.2f}"


def _print_tables(stats: MemoryStats) -> None:
    """The score trends and the adaptive-versus-baseline comparison, one table each."""
    table = Table(title="critique scores by domain (trend: recent half vs earlier half)")
    for column in ("domain", "n", "pass", "mean", *(d.replace("_", " ") for d in DIMENSIONS)):
        table.add_column(column, overflow="fold")
    for d in stats.domains:
        trends = [_trend(t.mean, t.delta) for t in d.trends]
        table.add_row(markup(d.domain), str(d.count), str(d.passed), f"{d.mean:.2f}", *trends)
    console().print(table)
    compare = Table(title="adaptive vs baseline (z-scores within model_version)")
    for column in ("domain", "adaptive n", "adaptive z", "baseline n", "baseline z", "lessons", "spread"):
        compare.add_column(column, overflow="fold")
    for d in stats.domains:
        c = d.comparison
        state = "suspended" if c.suspended else "active"
        spread = (
            "-"
            if d.collapse.std is None
            else f"{d.collapse.std:.2f}" + (" collapse" if d.collapse.collapsed else "")
        )
        compare.add_row(
            markup(d.domain),
            str(c.adaptive_n),
            _z(c.adaptive_z),
            str(c.baseline_n),
            _z(c.baseline_z),
            state,
            spread,
        )
    console().print(compare)


def _compared(settings: Settings, now: datetime) -> dict[str, list[Any]]:
    """Per domain, the runs its suspension compares, from the trial ledger (as a run's selection reads them)."""
    memory = Memory(settings)
    rules = SelectionRules(now, memory.ttl_days, 10, 3, settings.control_fraction, False, MAX_LESSONS)
    with memory.index() as index:
        ledger = index.ledger()
        return {domain: compared_runs(ledger, domain, rules) for domain in ledger.domains()}


@app.command("stats")
@guarded
def stats_command(
    ctx: typer.Context,
    plot: Path | None = typer.Option(
        None, "--plot", help="Draw the score history into this PNG (needs matplotlib)."
    ),
    json_output: bool = typer.Option(False, "--json", help="Print JSON."),
    reports_dir: ReportsDirOption = None,
) -> None:
    """Per-domain score trends, baseline versus adaptive runs, suspension and collapse; --plot FILE draws them."""
    deps = memory_deps(ctx)
    settings = memory_settings(ctx, reports_dir)
    loaded = load_all(settings.meta_dir, now=deps.clock())
    stats = compute_stats(loaded, _compared(settings, deps.clock()))
    if plot is not None:
        critiques = [item.critique for item in loaded if item.critique is not None]
        plot_history(critiques, plot, pyplot=deps.pyplot)
    if json_output:
        echo_json(stats.as_dict())
        return
    if not stats.domains:
        echo(f"no valid critiques in {settings.meta_dir}")
    else:
        _print_tables(stats)
        for line in [*(_cost_line(d.domain, d.cost) for d in stats.domains),
                     *(_claims_line(d.domain, d.claims) for d in stats.domains)]:  # fmt: skip
            echo(line)
    for warning in stats.warnings:
        echo(f"warning: {warning}")
    if stats.invalid:
        typer.echo(
            f"{len(stats.invalid)} invalid critique file(s) not counted; run `research-agent memory validate`"
        )
    if plot is not None:
        echo(f"plot written to {plot}")
