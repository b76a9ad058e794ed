"""``research-agent corpus``: index local document folders and search them.

    research-agent corpus index DIR [DIR...]
    research-agent corpus search "query" --corpus DIR [--corpus DIR2] [--limit 10] [--json]

The index lives in the cache folder (``RESEARCH_AGENT_CACHE_DIR``, or ``--cache-dir``),
never inside the corpus.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn
from rich.table import Table

from ..config import load_settings
from ..errors import InputError
from ..interrupts import run_interruptibly
from ..search.corpus_index import IndexStats
from ..search.local import LocalSearchProvider
from .boundary import console, guarded
from .terminal import dumps_json, markup

__all__ = ["app"]

app = typer.Typer(
    help="Index folders of your own documents (.md .txt .rst .html, .pdf with the pdf extra) and search them.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

CacheDirOption = Annotated[
    Path | None,
    typer.Option("--cache-dir", metavar="DIR",
                 help="Where indexes are kept (default: RESEARCH_AGENT_CACHE_DIR or the XDG cache)."),
]


def _cache_dir(option: Path | None) -> Path:
    if option is not None:
        return option.expanduser()
    return load_settings().cache_dir


def _skipped_text(stats: IndexStats) -> str:
    if not stats.skipped:
        return "-"
    return ", ".join(f"{count} {reason.replace('_', ' ')}" for reason, count in stats.skipped.items())


def _summary(stats: IndexStats) -> Table:
    """One folder's refresh as a two-column table, readable at any terminal width (the folder is
    printed above it, whole: a title would wrap at the table's width)."""
    table = Table(show_header=False, box=None, padding=(0, 2))
    table.add_column("what", style="bold")
    table.add_column("value", overflow="fold")
    for what, value in (
        ("documents", stats.documents),
        ("passages", stats.passages),
        ("indexed", stats.indexed),
        ("unchanged", stats.unchanged),
        ("removed", stats.removed),
        ("skipped", _skipped_text(stats)),
        ("seconds", f"{stats.seconds:.2f}"),
    ):
        table.add_row(what, markup(value))
    if stats.rebuilt:
        table.add_row("note", "the index was damaged and has been rebuilt")
    return table


def _prepare_with_a_bar(provider: LocalSearchProvider) -> list[IndexStats]:
    """Refresh every folder's index, with a progress bar per folder on a terminal's stderr."""
    err = console(stderr=True)
    if not err.is_terminal:
        return provider.prepare()
    with Progress(
        TextColumn("indexing {task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        console=err,
        transient=True,
    ) as bar:
        tasks: dict[Path, TaskID] = {}

        def progress(root: Path, done: int, total: int) -> None:
            if root not in tasks:
                tasks[root] = bar.add_task(markup(root.name or str(root)), total=total)
            bar.update(tasks[root], completed=done)

        return provider.prepare(progress=progress)


@app.command("index")
@guarded
def index_command(
    dirs: Annotated[list[Path], typer.Argument(metavar="DIR...", help="Corpus folders to index (or refresh).")],
    cache_dir: CacheDirOption = None,
    show_skipped: Annotated[bool, typer.Option("--show-skipped", help="List every skipped file and why.")] = False,
    exclude: Annotated[
        list[str] | None,
        typer.Option("--exclude", metavar="GLOB", help="Keep files matching this gitignore-style pattern out of "
                     "the index (repeatable; the index remembers them until the next `corpus index`)."),
    ] = None,
) -> None:
    """Build or refresh the index of each folder and print what changed.

    Sphinx build files (_sources/, _static/, genindex*, search.html, py-modindex.html) and the
    patterns of a .research-ignore file in the folder (gitignore syntax) are skipped too.
    """
    out = console(highlight=False)
    provider = LocalSearchProvider(dirs, _cache_dir(cache_dir), token_budget=1, index_exclude=list(exclude or ()))
    all_stats = _prepare_with_a_bar(provider)
    for stats in all_stats:
        out.print(f"[bold]{markup(stats.root)}[/bold]", soft_wrap=True)
        out.print(_summary(stats))
    if show_skipped:
        for stats in all_stats:
            for path, reason in stats.skipped_files:
                out.print(f"skipped {markup(stats.root / path)}: {markup(reason.replace('_', ' '))}", soft_wrap=True)


@app.command("search")
@guarded
def search_command(
    query: Annotated[str, typer.Argument(help="What to look for (free text; no query syntax).")],
    corpus: Annotated[
        list[Path], typer.Option("--corpus", help="A corpus folder (repeatable); refreshed before searching.")
    ],
    limit: Annotated[int, typer.Option("--limit", min=1, max=200, help="How many files to show.")] = 10,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON list instead of text.")] = False,
    cache_dir: CacheDirOption = None,
    exclude: Annotated[
        list[str] | None,
        typer.Option("--exclude", metavar="GLOB", help="Leave out files matching this pattern (repeatable)."),
    ] = None,
) -> None:
    """Search corpus folders: one result per file, best first."""
    out = console(highlight=False)
    if not query.strip():
        raise InputError("the search query is empty")
    settings = load_settings()
    folder = cache_dir.expanduser() if cache_dir is not None else settings.cache_dir
    provider = LocalSearchProvider(corpus, folder, token_budget=settings.mode.source_tokens, query_exclude=exclude or ())
    provider.prepare()
    hits = run_interruptibly(provider.search(query, max_results=limit))
    if as_json:
        payload = [
            {"rank": rank, "title": h.title, "path": h.location, "snippet": h.snippet, "text": h.text}
            for rank, h in enumerate(hits, 1)
        ]
        typer.echo(dumps_json(payload, indent=2))
        return
    if not hits:
        out.print(f"no matches for {markup(query)}", soft_wrap=True)
        return
    for rank, hit in enumerate(hits, 1):
        out.print(f"[bold]{rank}. {markup(hit.title)}[/bold]", soft_wrap=True)
        out.print(f"   [dim]{markup(hit.location)}[/dim]", soft_wrap=True)
        out.print(f"   {markup(hit.snippet)}", soft_wrap=True)
