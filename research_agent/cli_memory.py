"""The ``memory`` commands and the ``critique`` command of the CLI.

``app`` is a Typer sub-application (``list``, ``show``, ``lessons``, ``validate``,
``prune``, ``stats``) that the main CLI mounts as ``memory``; :func:`critique_command`
is registered there as ``critique``. Both take their collaborators from a
:class:`MemoryDeps` found as the Click context ``obj`` (tests pass fakes that way);
without one, settings come from :func:`research_agent.config.load_settings` and the
model from ``OpenAIChatModel.from_settings``.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from .config import Settings, load_settings
from .domains import DOMAINS
from .errors import InputError, ResearchError
from .llm import ChatModel
from .memory.critique import critique_run, summarize
from .memory.lessons import select_lessons
from .memory.safeyaml import dump_yaml
from .memory.schema import DIMENSIONS, Critique
from .memory.stats import CritiqueCost, compute_stats, plot_history
from .memory.store import (
    append_log,
    check_log_file,
    critique_file_name,
    critique_path,
    load_all,
    load_critique,
    prune_critiques,
)
from .terminal import dumps_json, echo, echo_error, markup, visible

__all__ = ["app", "critique_command", "run_critique_and_report", "MemoryDeps"]

logger = logging.getLogger(__name__)

_META_KEY = "research_agent.memory.reports_dir"


def _default_model(settings: Settings) -> ChatModel:
    from .llm import OpenAIChatModel  # written alongside; imported when a model is needed

    return OpenAIChatModel.from_settings(settings)


def _default_classify(model: ChatModel, query: str) -> Any:
    from .stages.classify import classify_domain  # the pipeline's classifier, imported lazily

    return classify_domain(model, query)


@dataclass(frozen=True)
class MemoryDeps:
    """Collaborators of the memory commands; pass one as ``obj`` to replace any of them."""

    load_settings: Callable[[Mapping[str, Any]], Settings] = load_settings
    make_model: Callable[[Settings], ChatModel] = _default_model
    classify: Callable[[ChatModel, str], Any] = _default_classify
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))
    pyplot: Any = None  # matplotlib.pyplot stand-in for tests; None imports the real one


def _deps(ctx: typer.Context) -> MemoryDeps:
    obj = ctx.find_root().obj
    if isinstance(obj, MemoryDeps):
        return obj
    if isinstance(obj, Settings):
        base = obj
        return MemoryDeps(
            load_settings=lambda o: base.replace(**{k: v for k, v in o.items() if v is not None})
        )
    return MemoryDeps()


def _settings(ctx: typer.Context, reports_dir: Path | None = None) -> Settings:
    chosen = reports_dir if reports_dir is not None else ctx.meta.get(_META_KEY)
    return _deps(ctx).load_settings({"reports_dir": chosen} if chosen is not None else {})


def _handle_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn a ResearchError into ``error: <message>`` on stderr and its exit code."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except ResearchError as exc:
            echo_error(exc)
            raise typer.Exit(exc.exit_code) from None

    return wrapper


def _console() -> Console:
    return Console(highlight=False, soft_wrap=False)


def _echo_json(data: Any) -> None:
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


@_handle_errors
def critique_command(
    ctx: typer.Context,
    run: Path = typer.Option(..., "--run", help="A run record: reports/meta/run-<id>.yaml."),
    json_output: bool = typer.Option(False, "--json", help="Print the critique as JSON."),
    reports_dir: Path | None = typer.Option(
        None, "--reports-dir", help="Reports folder (default from settings)."
    ),
) -> None:
    """Critique a finished run and store reports/meta/critique-<id>.yaml next to its record."""
    deps = _deps(ctx)
    check_log_file(Path(run).parent)  # a FIFO there would hang the critique after its model call
    try:
        settings = _settings(ctx, reports_dir)
        model = deps.make_model(settings)
    except ResearchError as exc:
        _log_quietly(run, exc)
        raise
    try:
        critique = asyncio.run(_critique_and_close(run, model, settings, deps.clock()))
    except ResearchError:
        raise  # critique_run has logged it
    except Exception as exc:
        echo_error(f"critique failed unexpectedly: {type(exc).__name__}: {exc}")
        raise typer.Exit(1) from None
    path = critique_path(Path(run).parent, critique.id)
    if json_output:
        _echo_json({**critique.as_dict(), "path": str(path)})
    else:
        echo(summarize(critique, path=path))


async def _critique_and_close(
    run: Path, model: ChatModel, settings: Settings, now: datetime | None
) -> Critique:
    try:
        return await critique_run(run, model, settings=settings, now=now)
    finally:
        close = getattr(model, "aclose", None)
        if close is not None:
            try:
                await close()
            except Exception as exc:  # closing a client must not mask the critique's outcome
                logger.debug("closing the model client failed: %s", exc)


def run_critique_and_report(
    run_record_path: Path,
    settings: Settings,
    *,
    console: Console | None = None,
    model: ChatModel | None = None,
) -> Critique:
    """Critique a run now (``--wait-critique``), print its summary, return it.

    Builds the model from ``settings`` unless one is given. Failures are logged to
    ``critique.log`` and raised; the caller decides how loudly to report them.
    """
    check_log_file(Path(run_record_path).parent)
    try:
        chat = model if model is not None else _default_model(settings)
    except ResearchError as exc:
        _log_quietly(Path(run_record_path), exc)
        raise
    critique = asyncio.run(_critique_and_close(Path(run_record_path), chat, settings, None))
    path = critique_path(Path(run_record_path).parent, critique.id)
    (console or _console()).print(
        visible(summarize(critique, path=path)), highlight=False, markup=False, soft_wrap=True
    )
    return critique


def _log_quietly(run: Path, exc: Exception) -> None:
    try:
        append_log(Path(run).parent, "FAIL", Path(run).name, str(exc))
    except ResearchError as log_exc:
        exc.add_note(f"critique.log could not be written either: {log_exc}")


@app.command("list")
@_handle_errors
def list_command(
    ctx: typer.Context,
    json_output: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """List stored critiques, newest first."""
    settings = _settings(ctx)
    loaded = load_all(settings.meta_dir, now=_deps(ctx).clock())
    good = [item.critique for item in loaded if item.critique is not None]
    bad = [item for item in loaded if item.critique is None]
    if json_output:
        _echo_json(
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
    if bad:
        echo(f"{len(bad)} invalid critique file(s) skipped; run `research-agent memory validate`")


def _id_from(value: str) -> str:
    name = Path(value).name
    run_id = name.removeprefix("critique-").removesuffix(".yaml")
    critique_file_name(run_id)  # raises StorageError for anything that is not a run id
    return run_id


@app.command("show")
@_handle_errors
def show_command(
    ctx: typer.Context,
    critique_id: str = typer.Argument(..., metavar="ID", help="A run id, or critique-<id>.yaml."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON instead of YAML."),
) -> None:
    """Show one critique."""
    settings = _settings(ctx)
    try:
        run_id = _id_from(critique_id)
    except ResearchError:
        raise InputError(f"not a critique id: {critique_id[:80]!r}") from None
    path = critique_path(settings.meta_dir, run_id)
    if not path.exists() and not path.is_symlink():
        raise InputError(f"no critique {run_id} in {settings.meta_dir}")
    try:
        critique = load_critique(path, meta_dir=settings.meta_dir)
    except ResearchError as exc:
        raise InputError(f"{path.name}: {exc}") from None
    if json_output:
        _echo_json(critique.as_dict())
    else:
        echo(f"# {path}")
        echo(dump_yaml(critique.as_dict()).rstrip())


def _classify(deps: MemoryDeps, settings: Settings, query: str) -> str:
    result = deps.classify(deps.make_model(settings), query)
    if inspect.isawaitable(result):
        result = asyncio.run(_await(result))
    return str(result)


async def _await(awaitable: Any) -> Any:
    return await awaitable


@app.command("lessons")
@_handle_errors
def lessons_command(
    ctx: typer.Context,
    query: str = typer.Argument(..., help="The question a run would research."),
    domain: str | None = typer.Option(
        None, "--domain", help=f"Skip classification: one of {', '.join(DOMAINS)}."
    ),
    json_output: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Show the lessons a run of QUERY would get now, and every file left out with its reason."""
    deps = _deps(ctx)
    settings = _settings(ctx)
    if domain is not None:
        chosen = domain.strip().lower().replace("-", "_").replace(" ", "_")
        if chosen not in DOMAINS:
            raise InputError(f"unknown domain {domain!r}: choose one of {', '.join(DOMAINS)}")
    else:
        chosen = _classify(deps, settings, query)
        if chosen not in DOMAINS:
            raise InputError(f"the classifier returned an unknown domain {chosen[:40]!r}")
    selection = select_lessons(
        settings.meta_dir,
        chosen,
        now=deps.clock(),
        ttl_days=settings.lesson_ttl_days,
        control_fraction=0.0,
        rng=random.Random(0),
    )
    note = (
        f"{settings.control_fraction:.0%} of eligible runs are control runs and get no lessons"
        if settings.control_fraction
        else "control runs are off"
    )
    if json_output:
        _echo_json(
            {"domain": chosen, **selection.as_record(), "warnings": list(selection.warnings), "note": note}
        )
        return
    echo(f"domain: {chosen}")
    echo(f"{selection.reason}")
    for number, lesson in enumerate(selection.lessons, start=1):
        echo(f"{number}. {lesson.text}")
        echo(f"   critiques: {', '.join(lesson.critique_ids)}")
    if selection.lessons:
        echo(f"({note})")
    if selection.excluded:
        typer.echo("excluded:")
        for name, reason in selection.excluded:
            echo(f"  {name}: {reason}")
    for warning in selection.warnings:
        echo(f"warning: {warning}")


@app.command("validate")
@_handle_errors
def validate_command(ctx: typer.Context) -> None:
    """Check every critique file; exit 1 listing each invalid one with the reason."""
    settings = _settings(ctx)
    loaded = load_all(settings.meta_dir, now=_deps(ctx).clock())
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
    echo(f"{len(loaded) - bad} valid, {bad} invalid")
    if bad:
        raise typer.Exit(1)


@app.command("prune")
@_handle_errors
def prune_command(
    ctx: typer.Context,
    keep: int | None = typer.Option(
        None, "--keep", min=0, help="Critiques to keep (default: max_critiques)."
    ),
) -> None:
    """Delete the oldest critique files beyond the retention limit (invalid and future-dated files go first)."""
    settings = _settings(ctx)
    limit = settings.max_critiques if keep is None else keep
    if limit == 0:
        typer.echo("retention is off (keep 0): nothing pruned")
        return
    removed = prune_critiques(settings.meta_dir, limit, now=_deps(ctx).clock())
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
@_handle_errors
def stats_command(
    ctx: typer.Context,
    plot: Path | None = typer.Option(
        None, "--plot", help="Draw the score history into this PNG (needs matplotlib)."
    ),
    json_output: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Per-domain score trends, baseline versus adaptive runs, suspension and collapse."""
    deps = _deps(ctx)
    settings = _settings(ctx)
    loaded = load_all(settings.meta_dir, now=deps.clock())
    stats = compute_stats(loaded)
    if plot is not None:
        critiques = [item.critique for item in loaded if item.critique is not None]
        plot_history(critiques, plot, pyplot=deps.pyplot)
    if json_output:
        _echo_json(stats.as_dict())
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
