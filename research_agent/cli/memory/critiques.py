"""``memory list|show|retry|validate|prune``: the stored critique files themselves (``validate``
also checks the person's ``lessons.yaml``).

Runs are shown by short id and accepted by any reference :mod:`research_agent.run_refs`
resolves (full id, short id, a unique prefix of either, ``latest``, ``latest~N``). ``list``
also shows the runs whose critique failed, with the reason; ``retry`` completes them. What
is listed comes from :mod:`research_agent.memory.store` (the critiques and the failure
records); this module only chooses and draws.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import typer
from rich.table import Table

from ...config import Settings
from ...errors import InputError, ResearchError, error_message
from ...ids import id_timestamp
from ...journal.prune import prune_journal
from ...memory.store.critique_types import Critique
from ...memory.store.failures import FailedCritique, load_failures
from ...memory.store.files import LoadedCritique, critique_path, load_all, load_critique, prune_critiques
from ...memory.store.index.summary import INDEX_NAME
from ...record.passages import prune_passage_stores
from ...run_refs import Runs, UnknownRun, run_file
from ...service.memory import Memory
from ..boundary import guarded, print_error, stderr_console
from ..critique_view import describe_critique
from ..terminal import dumps_json_records, echo, markup, visible_line
from .group import ReportsDirOption, app, console, echo_json, memory_deps, memory_settings
from .lessons_file import validate_lessons_file

__all__ = ["list_command", "show_command", "retry_command", "validate_command", "prune_command", "LIST_LIMIT"]

LIST_LIMIT = 50  # rows of the memory list table unless --limit says otherwise


def _run_date(critique: Critique) -> str:
    """When the critique's run was made (UTC), as the list is ordered: a critique retried later
    keeps its run's place; the critique's own time when its id carries none."""
    when = id_timestamp(critique.id)
    return when.strftime("%Y-%m-%d %H:%M") if when is not None else critique.timestamp[:16].replace("T", " ")


def _critique_table(critiques: Sequence[Critique], shorts: dict[str, str], meta_dir: Path) -> Table:
    table = Table(title=f"critiques in {markup(meta_dir)}, newest run first")
    table.add_column("id", no_wrap=True)
    table.add_column("run date", no_wrap=True)
    table.add_column("query", overflow="fold", ratio=1)
    for column in ("domain", "mean"):
        table.add_column(column, no_wrap=True)
    table.add_column("pass", overflow="fold", max_width=30)
    table.add_column("adaptive", no_wrap=True)
    for c in critiques:
        table.add_row(
            shorts.get(c.id, c.id), markup(_run_date(c)), markup(c.query[:80]),
            markup(c.query_domain), f"{c.mean_score:.2f}", "yes" if c.overall_pass else f"no: {c.fail_reason}",
            "yes" if c.adaptive else "no",
        )  # fmt: skip
    return table


def _failed_table(failed: Sequence[FailedCritique], shorts: dict[str, str]) -> Table:
    table = Table(title="failed critiques (research-agent memory retry ID completes one)")
    table.add_column("id", no_wrap=True)
    table.add_column("failed", no_wrap=True)
    table.add_column("run", overflow="fold", ratio=1)
    table.add_column("reason", overflow="fold", ratio=2)
    for f in failed:
        table.add_row(
            shorts.get(f.run_id, f.run_id), markup(f.failed_at[:16].replace("T", " ")),
            markup(f.run_id.rsplit("_", 1)[0]), markup(visible_line(f.reason)),
        )  # fmt: skip
    return table


def _print_list(loaded: list[LoadedCritique], failed: list[FailedCritique], shorts: dict[str, str],
                meta_dir: Path, limit: int) -> None:  # fmt: skip
    good = [item.critique for item in loaded if item.critique is not None]
    bad = len(loaded) - len(good)
    if not loaded and not failed:
        echo(f"no critiques in {meta_dir}")
        return
    hidden = max(0, len(good) - limit) if limit else 0  # rich draws about 0.5 ms a row
    if good:
        console().print(_critique_table(good[: len(good) - hidden], shorts, meta_dir))
    if hidden:
        echo(f"{hidden:,} older critique(s) not shown; --limit 0 shows them all")
    if failed:
        console().print(_failed_table(failed, shorts))
    if bad:
        echo(f"{bad} invalid critique file(s) skipped; run `research-agent memory validate`")


@app.command("list")
@guarded
def list_command(
    ctx: typer.Context,
    json_output: bool = typer.Option(False, "--json", help="Print JSON instead of a table, one critique to a line."),
    limit: int | None = typer.Option(
        None, "--limit", min=0, help=f"The newest N critiques (0: all; default {LIST_LIMIT} in the table, all in --json)."
    ),
    reports_dir: ReportsDirOption = None,
) -> None:
    """List stored critiques newest first (from the summary index), and the runs whose critique
    failed (with the reason)."""
    settings = memory_settings(ctx, reports_dir)
    loaded = Memory(settings).critiques(now=memory_deps(ctx).clock())
    if json_output and limit:
        valid = [item for item in loaded if item.critique is not None][:limit]
        loaded = valid + [item for item in loaded if item.critique is None]
    failed = load_failures(settings.meta_dir)
    shorts = Runs.scan(settings.reports_dir).shorts()
    if json_output:  # one record to a line: 5,000 critiques indented would take the slow encoder
        typer.echo(
            dumps_json_records(
                {
                    "critiques": [
                        {
                            **item.critique.as_dict(), "short_id": shorts.get(item.critique.id),
                            "not_passed": item.critique.fail_reason,
                        }
                        for item in loaded
                        if item.critique is not None
                    ],
                    "failed": [{**f.as_dict(), "short_id": shorts.get(f.run_id)} for f in failed],
                    "invalid": [{"file": b.name, "reason": b.error} for b in loaded if b.critique is None],
                }
            )
        )
        return
    _print_list(loaded, failed, shorts, settings.meta_dir, LIST_LIMIT if limit is None else limit)


@app.command("show")
@guarded
def show_command(
    ctx: typer.Context,
    critique_id: str = typer.Argument(
        ..., metavar="ID", help="A run's id, short id or a unique prefix of either, latest or latest~N."
    ),
    json_output: bool = typer.Option(False, "--json", help="Print JSON instead of YAML."),
    reports_dir: ReportsDirOption = None,
) -> None:
    """Show one critique (and, on stderr, the background critiques that failed since the last command)."""
    settings = memory_settings(ctx, reports_dir)
    runs = Runs.scan(settings.reports_dir)
    run_id = runs.resolve(critique_id, "critique")
    path = critique_path(settings.meta_dir, run_id)
    try:
        critique = load_critique(path, meta_dir=settings.meta_dir)
    except ResearchError as exc:
        raise InputError(f"{path.name}: {exc}") from None
    critique = Memory(settings).shown_texts(critique, now=memory_deps(ctx).clock())
    if json_output:
        echo_json({**critique.as_dict(), "short_id": runs.short(run_id)})
    else:
        echo(f"# {path} (short id {runs.short(run_id)})")
        echo(describe_critique(critique))
    from ..critique import tell_failed_critiques  # on stderr: stdout keeps the critique alone

    tell_failed_critiques(settings, stderr_console())


def _retry_one(ctx: typer.Context, runs: Runs, run_id: str) -> None:
    """Critique the run ``run_id`` again (its failure record goes when it succeeds) and say how it went."""
    deps = memory_deps(ctx)
    settings = memory_settings(ctx, runs.reports_dir)
    record = run_file(runs.reports_dir, "record", run_id)
    if not record.is_file():
        raise InputError(f"cannot retry {runs.short(run_id)}: its run record {record} is gone")
    from ...memory.critique.judgement import summarize  # imported when used: every command starts lighter
    from ...memory.critique.schedule import critique_now

    critique = critique_now(record, settings, make_model=deps.make_model, now=deps.clock())
    echo(f"{runs.short(run_id)}: " + summarize(critique, path=critique_path(settings.meta_dir, critique.id)))


@app.command("retry")
@guarded
def retry_command(
    ctx: typer.Context,
    refs: list[str] = typer.Argument(
        None, metavar="[ID]...", help="Runs whose critique failed (id, short id, prefix, latest, latest~N)."
    ),
    every: bool = typer.Option(False, "--all", help="Retry every failed critique."),
    reports_dir: ReportsDirOption = None,
) -> None:
    """Critique again the runs whose background critique failed (memory list shows them)."""
    settings = memory_settings(ctx, reports_dir)
    runs = Runs.scan(settings.reports_dir)
    if every == bool(refs):
        raise InputError("name the runs to retry (memory list shows the failed ones), or give --all")
    try:
        chosen = runs.ids("failed") if every else [runs.resolve(ref, "failed") for ref in refs]
    except UnknownRun as exc:
        raise InputError(f"{exc} (a run that never failed is critiqued with: research-agent critique --run ID)") from None
    if not chosen:
        echo(f"no failed critiques in {settings.meta_dir}")
        return
    failures = 0
    for run_id in chosen:
        try:
            _retry_one(ctx, runs, run_id)
        except Exception as exc:  # one failed retry does not stop the others; each says why
            if len(chosen) == 1:
                raise
            failures += 1
            print_error(f"{runs.short(run_id)}: {error_message(exc)}")
    if failures:
        raise typer.Exit(1)


@app.command("validate")
@guarded
def validate_command(
    ctx: typer.Context,
    reports_dir: ReportsDirOption = None,
    rebuild_index: bool = typer.Option(
        False, "--rebuild-index", help="Also rebuild the summary index (meta/index.sqlite) from the files."
    ),
) -> None:
    """Check every critique file and lessons.yaml; exit 1 listing each problem with the reason
    (suspect critiques are named too)."""
    settings = memory_settings(ctx, reports_dir)
    if rebuild_index:
        _rebuild_index(settings)
    loaded = load_all(settings.meta_dir, now=memory_deps(ctx).clock())
    lesson_problems = validate_lessons_file(settings)
    if not loaded:
        echo(f"no critique files in {settings.meta_dir}")
        if lesson_problems:
            raise typer.Exit(1)
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
        for note in item.critique.load_notes if item.critique is not None else ():
            echo(f"warning  {item.name}: {note} (written by an earlier version; the rest still counts)")
        for note in item.critique.edits if item.critique is not None else ():
            echo(f"edited   {item.name}: {note} (the scores count as edited)")
    valid = f"{len(loaded) - bad} valid" + (f" ({suspect} suspect: valid, but they feed no lesson)" if suspect else "")
    echo(f"{valid}, {bad} invalid" + (" (skipped: an invalid file never feeds a lesson)" if bad else ""))
    if bad or lesson_problems:
        raise typer.Exit(1)


def _rebuild_index(settings: Settings) -> None:
    """Drop every row of the summary index and read every critique file again."""
    with Memory(settings).index(rebuild=True) as index:
        where = settings.meta_dir / INDEX_NAME if index.on_disk else "memory (no index file is kept here)"
        echo(f"index rebuilt from {index.last.read} critique file(s) in {where}")


@app.command("prune")
@guarded
def prune_command(
    ctx: typer.Context,
    keep: int | None = typer.Option(
        None, "--keep", min=0, metavar="N",
        help="Critiques (and runs' passage stores) to keep (default: max_critiques, 50).",
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="List what would be deleted; delete nothing."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Delete without asking (needed without a terminal)."),
    reports_dir: ReportsDirOption = None,
) -> None:
    """Delete the oldest critique files, passage stores and done runs' journal entries and checkpoints
    beyond the retention limit (invalid and future-dated files go first). On a terminal it lists them and asks first; --dry-run only lists."""
    settings = memory_settings(ctx, reports_dir)
    limit = settings.max_critiques if keep is None else keep
    if limit == 0:
        typer.echo("retention is off (keep 0): nothing pruned")
        return
    deps = memory_deps(ctx)
    now = deps.clock()
    doomed = [*prune_critiques(settings.meta_dir, limit, now=now, dry_run=True),
              *prune_passage_stores(settings.meta_dir, limit, now=now, dry_run=True),
              *prune_journal(settings.meta_dir, limit, dry_run=True)]  # fmt: skip
    if not doomed:
        echo(f"nothing to prune: at most {limit} kept")
        return
    if dry_run or not yes:
        for path in doomed:
            echo(f"would remove {path.name}")
    if dry_run:
        echo(f"would prune {len(doomed)} file(s) in {settings.meta_dir}; keeping at most {limit}")
        return
    if not yes:
        answer = deps.ask(f"delete these {len(doomed)} file(s) from {settings.meta_dir}?")
        if answer is None:
            raise InputError(f"memory prune would delete {len(doomed)} file(s): pass --yes to delete them "
                             "without a question, or --dry-run to list them")  # fmt: skip
        if not answer:
            echo("nothing deleted")
            raise typer.Exit(1)
    removed = prune_critiques(settings.meta_dir, limit, now=now)
    removed += prune_passage_stores(settings.meta_dir, limit, now=now)
    removed += prune_journal(settings.meta_dir, limit)  # done runs' entries and checkpoints
    for path in removed:
        echo(f"removed {path.name}")
    echo(f"pruned {len(removed)} file(s); keeping at most {limit}")
