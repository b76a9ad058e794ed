"""``research-agent memory``: inspect and manage stored critiques and their lessons.

``app`` is a Typer sub-application (``list``, ``show``, ``lessons``, ``effects``,
``validate``, ``prune``, ``stats``) that the main CLI mounts as ``memory``. These commands, and the
``critique`` command (:mod:`research_agent.cli.critique`), take their collaborators from
a :class:`MemoryDeps` found as the Click context ``obj`` (tests pass fakes that way);
without one, settings come from :func:`research_agent.config.load_settings` and the
model from ``OpenAIChatModel.from_settings``.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from ..config import Settings, load_settings
from ..domains import DOMAINS, parse_domain
from ..errors import InputError, ResearchError
from ..files.state import secret_key
from ..llm import ChatModel, OpenAIChatModel
from ..memory.effects.stats import CritiqueCost, compute_stats, plot_history
from ..memory.lessons.select import preview_lessons
from ..memory.store.files import critique_path, load_all, load_critique, prune_critiques, run_id_from
from ..memory.store.index import list_critiques, open_index
from ..memory.store.schema import DIMENSIONS
from .boundary import guarded
from .critique_view import describe_critique
from .memory_effects import show_effects
from .terminal import dumps_json, echo, markup

__all__ = ["app", "MemoryDeps", "memory_deps", "memory_settings", "echo_json"]

_META_KEY = "research_agent.memory.reports_dir"
LIST_LIMIT = 50  # rows of the memory list table unless --limit says otherwise


def _default_model(settings: Settings) -> ChatModel:
    return OpenAIChatModel.from_settings(settings)


def _default_classify(model: ChatModel, query: str) -> Any:
    from ..stages.classify import classify_domain  # the pipeline's classifier, imported lazily

    return classify_domain(model, query)


@dataclass(frozen=True)
class MemoryDeps:
    """Collaborators of the memory commands; pass one as ``obj`` to replace any of them."""

    load_settings: Callable[[Mapping[str, Any]], Settings] = load_settings
    make_model: Callable[[Settings], ChatModel] = _default_model
    classify: Callable[[ChatModel, str], Any] = _default_classify
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))
    pyplot: Any = None  # matplotlib.pyplot stand-in for tests; None imports the real one


def memory_deps(ctx: typer.Context) -> MemoryDeps:
    """The MemoryDeps of this invocation: the context ``obj``, or the defaults."""
    obj = ctx.find_root().obj
    if isinstance(obj, MemoryDeps):
        return obj
    if isinstance(obj, Settings):
        base = obj
        return MemoryDeps(
            load_settings=lambda o: base.replace(**{k: v for k, v in o.items() if v is not None})
        )
    return MemoryDeps()


def memory_settings(ctx: typer.Context, reports_dir: Path | None = None) -> Settings:
    """Settings for a memory command: ``reports_dir``, else ``memory --reports-dir``, else the default."""
    chosen = reports_dir if reports_dir is not None else ctx.meta.get(_META_KEY)
    return memory_deps(ctx).load_settings({"reports_dir": chosen} if chosen is not None else {})


def _console() -> Console:
    return Console(highlight=False, soft_wrap=False)


def echo_json(data: Any) -> None:
    typer.echo(dumps_json(data, indent=2, default=str))


app = typer.Typer(
    name="memory",
    help="Inspect and manage stored critiques and the lessons drawn from them.",
    no_args_is_help=True,
    add_completion=False,
)


@app.callback()
def _memory(
    ctx: typer.Context,
    reports_dir: Path | None = typer.Option(
        None, "--reports-dir", help="Reports folder (default from settings)."
    ),
) -> None:
    """Inspect and manage stored critiques and the lessons drawn from them."""
    if reports_dir is not None:
        ctx.meta[_META_KEY] = reports_dir


@app.command("list")
@guarded
def list_command(
    ctx: typer.Context,
    json_output: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
    limit: int | None = typer.Option(
        None, "--limit", min=0, help=f"The newest N critiques (0: all; default {LIST_LIMIT} in the table, all in --json)."
    ),
) -> None:
    """List stored critiques, newest first."""
    settings = memory_settings(ctx)
    loaded = list_critiques(settings.meta_dir, key=secret_key(settings.state_dir), now=memory_deps(ctx).clock())
    good = [item.critique for item in loaded if item.critique is not None]
    bad = [item for item in loaded if item.critique is None]
    shown = limit if limit is not None else (0 if json_output else LIST_LIMIT)
    hidden = max(0, len(good) - shown) if shown else 0
    good = good[: len(good) - hidden]
    if json_output:
        echo_json(
            {
                "critiques": [c.as_dict() for c in good],
                "invalid": [{"file": b.name, "reason": b.error} for b in bad],
            }
        )
        return
    if not loaded:
        echo(f"no critiques in {settings.meta_dir}")
        return
    table = Table(title=f"critiques in {markup(settings.meta_dir)}")
    table.add_column("date", no_wrap=True)
    table.add_column("query", overflow="fold", ratio=2)
    for column in ("domain", "mean", "pass", "adaptive"):
        table.add_column(column, no_wrap=True)
    table.add_column("id", overflow="fold", ratio=1)
    for c in good:
        table.add_row(
            markup(c.timestamp[:16].replace("T", " ")),
            markup(c.query[:80]),
            markup(c.query_domain),
            f"{c.mean_score:.2f}",
            "yes" if c.overall_pass else "no",
            "yes" if c.adaptive else "no",
            markup(c.id),
        )
    _console().print(table)
    if hidden:
        echo(f"{hidden:,} older critique(s) not shown; --limit 0 shows them all")
    if bad:
        echo(f"{len(bad)} invalid critique file(s) skipped; run `research-agent memory validate`")


@app.command("show")
@guarded
def show_command(
    ctx: typer.Context,
    critique_id: str = typer.Argument(..., metavar="ID", help="A run id, or critique-<id>.yaml."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON instead of YAML."),
) -> None:
    """Show one critique."""
    settings = memory_settings(ctx)
    run_id = run_id_from(critique_id)
    if run_id is None:
        raise InputError(f"not a critique id: {critique_id[:80]!r}")
    path = critique_path(settings.meta_dir, run_id)
    if not path.exists() and not path.is_symlink():
        raise InputError(f"no critique {run_id} in {settings.meta_dir}")
    try:
        critique = load_critique(path, meta_dir=settings.meta_dir)
    except ResearchError as exc:
        raise InputError(f"{path.name}: {exc}") from None
    if json_output:
        echo_json(critique.as_dict())
    else:
        echo(f"# {path}")
        echo(describe_critique(critique))


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
) -> None:
    """Show the lessons a run of QUERY would get now, and every file left out with its reason."""
    deps = memory_deps(ctx)
    settings = memory_settings(ctx)
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
        key=secret_key(settings.state_dir),
    )
    if json_output:
        echo_json(
            {"domain": chosen, **selection.as_record(), "warnings": list(selection.warnings), "note": note}
        )
        return
    echo(f"domain: {chosen}")
    echo(f"{selection.reason}")
    for number, lesson in enumerate(selection.lessons, start=1):
        echo(f"{number}. {lesson.text}")
        echo(f"   {lesson.key} ({lesson.stage}; target {lesson.target}); critiques: {', '.join(lesson.critique_ids)}")
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
) -> None:
    """Each lesson's effect: its target with and without it, the difference with a 90% interval, its status."""
    settings = memory_settings(ctx)
    now = memory_deps(ctx).clock()
    show_effects(settings.meta_dir, now=now, domain=domain, json_output=json_output, key=secret_key(settings.state_dir))


@app.command("validate")
@guarded
def validate_command(
    ctx: typer.Context,
    rebuild_index: bool = typer.Option(
        False, "--rebuild-index", help="Also rebuild the summary index (meta/index.sqlite) from the files."
    ),
) -> None:
    """Check every critique file; exit 1 listing each invalid one with the reason."""
    settings = memory_settings(ctx)
    if rebuild_index:
        _rebuild_index(settings)
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


def _rebuild_index(settings: Settings) -> None:
    """Drop every row of the summary index and read every critique file again."""
    with open_index(settings.meta_dir, key=secret_key(settings.state_dir), rebuild=True) as index:
        where = f"{settings.meta_dir / 'index.sqlite'}" if index.on_disk else "memory (no index file is kept here)"
        echo(f"index rebuilt from {index.last.read} critique file(s) in {where}")


@app.command("prune")
@guarded
def prune_command(
    ctx: typer.Context,
    keep: int | None = typer.Option(
        None, "--keep", min=0, help="Critiques to keep (default: max_critiques)."
    ),
) -> None:
    """Delete the oldest critique files beyond the retention limit (invalid and future-dated files go first)."""
    settings = memory_settings(ctx)
    limit = settings.max_critiques if keep is None else keep
    if limit == 0:
        typer.echo("retention is off (keep 0): nothing pruned")
        return
    removed = prune_critiques(settings.meta_dir, limit, now=memory_deps(ctx).clock())
    for path in removed:
        echo(f"removed {path.name}")
    echo(f"pruned {len(removed)} file(s); keeping at most {limit}")


def _trend(mean: float, delta: float | None) -> str:
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


def _z(value: float | None) -> str:
    return "-" if value is None else f"{value:+.2f}"


@app.command("stats")
@guarded
def stats_command(
    ctx: typer.Context,
    plot: Path | None = typer.Option(
        None, "--plot", help="Draw the score history into this PNG (needs matplotlib)."
    ),
    json_output: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Per-domain score trends, baseline versus adaptive runs, suspension and collapse."""
    deps = memory_deps(ctx)
    settings = memory_settings(ctx)
    loaded = load_all(settings.meta_dir, now=deps.clock())
    stats = compute_stats(loaded)
    if plot is not None:
        critiques = [item.critique for item in loaded if item.critique is not None]
        plot_history(critiques, plot, pyplot=deps.pyplot)
    if json_output:
        echo_json(stats.as_dict())
        return
    if not stats.domains:
        echo(f"no valid critiques in {settings.meta_dir}")
    else:
        table = Table(title="critique scores by domain (trend: recent half vs earlier half)")
        for column in ("domain", "n", "pass", "mean", *(d.replace("_", " ") for d in DIMENSIONS)):
            table.add_column(column, overflow="fold")
        for d in stats.domains:
            trends = [_trend(t.mean, t.delta) for t in d.trends]
            table.add_row(markup(d.domain), str(d.count), str(d.passed), f"{d.mean:.2f}", *trends)
        _console().print(table)
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
        _console().print(compare)
        for d in stats.domains:
            typer.echo(_cost_line(d.domain, d.cost))
    for warning in stats.warnings:
        echo(f"warning: {warning}")
    if stats.invalid:
        typer.echo(
            f"{len(stats.invalid)} invalid critique file(s) not counted; run `research-agent memory validate`"
        )
    if plot is not None:
        echo(f"plot written to {plot}")
