"""``memory list|show|validate|prune``: the stored critique files themselves."""

from __future__ import annotations

import typer
from rich.table import Table

from ...config import Settings
from ...errors import InputError, ResearchError
from ...memory.store.files import critique_path, load_all, load_critique, prune_critiques, run_id_from
from ...memory.store.index import INDEX_NAME, IndexTrust, list_critiques, open_index
from ...record.passages import prune_passage_stores
from ..boundary import guarded
from ..critique_view import describe_critique
from ..terminal import echo, markup
from .group import app, console, echo_json, memory_deps, memory_settings

__all__ = ["list_command", "show_command", "validate_command", "prune_command", "LIST_LIMIT"]

LIST_LIMIT = 50  # rows of the memory list table unless --limit says otherwise


@app.command("list")
@guarded
def list_command(
    ctx: typer.Context,
    json_output: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
    limit: int | None = typer.Option(
        None, "--limit", min=0, help=f"The newest N critiques (0: all; default {LIST_LIMIT} in the table, all in --json)."
    ),
) -> None:
    """List stored critiques, newest first (answered from the summary index)."""
    settings = memory_settings(ctx)
    loaded = list_critiques(settings.meta_dir, trust=IndexTrust(settings.state_dir), now=memory_deps(ctx).clock())
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
    console().print(table)
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


@app.command("validate")
@guarded
def validate_command(
    ctx: typer.Context,
    rebuild_index: bool = typer.Option(
        False, "--rebuild-index", help="Also rebuild the summary index (meta/index.sqlite) from the files."
    ),
) -> None:
    """Check every critique file; exit 1 listing each invalid one with the reason (suspect ones are named too)."""
    settings = memory_settings(ctx)
    if rebuild_index:
        _rebuild_index(settings)
    loaded = load_all(settings.meta_dir, now=memory_deps(ctx).clock())
    if not loaded:
        echo(f"no critique files in {settings.meta_dir}")
        return
    bad = suspect = 0
    for item in loaded:
        if item.critique is None:
            bad += 1
            echo(f"invalid  {item.name}: {item.error}")
        elif item.critique.suspect_reason:
            suspect += 1
            echo(f"suspect  {item.name}: {item.critique.suspect_reason}")
        else:
            echo(f"ok       {item.name}")
    valid = f"{len(loaded) - bad} valid" + (f" ({suspect} suspect: valid, but they feed no lesson)" if suspect else "")
    echo(f"{valid}, {bad} invalid" + (" (skipped: an invalid file never feeds a lesson)" if bad else ""))
    if bad:
        raise typer.Exit(1)


def _rebuild_index(settings: Settings) -> None:
    """Drop every row of the summary index and read every critique file again."""
    with open_index(settings.meta_dir, trust=IndexTrust(settings.state_dir), rebuild=True) as index:
        where = settings.meta_dir / INDEX_NAME if index.on_disk else "memory (no index file is kept here)"
        echo(f"index rebuilt from {index.last.read} critique file(s) in {where}")


@app.command("prune")
@guarded
def prune_command(
    ctx: typer.Context,
    keep: int | None = typer.Option(
        None, "--keep", min=0, help="Critiques (and runs' passage stores) to keep (default: max_critiques)."
    ),
) -> None:
    """Delete the oldest critique files and passage stores beyond the retention limit (invalid and
    future-dated files go first)."""
    settings = memory_settings(ctx)
    limit = settings.max_critiques if keep is None else keep
    if limit == 0:
        typer.echo("retention is off (keep 0): nothing pruned")
        return
    now = memory_deps(ctx).clock()
    removed = prune_critiques(settings.meta_dir, limit, now=now)
    removed += prune_passage_stores(settings.meta_dir, limit, now=now)
    for path in removed:
        echo(f"removed {path.name}")
    echo(f"pruned {len(removed)} file(s); keeping at most {limit}")
