"""``research-agent cache``: manage the on-disk page cache.

The cache module (and with it the fetcher and httpx, a sixth of the CLI's start-up) is
imported only when the command runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ..config import Settings, load_settings
from .boundary import guarded
from .terminal import echo

if TYPE_CHECKING:
    from ..fetch.cache import PageCache

__all__ = ["app", "clear_cache"]

app = typer.Typer(help="Manage the cache of fetched web pages (corpus indexes are kept).", no_args_is_help=True)


@app.callback()
def _group() -> None:
    """Manage the cache of fetched web pages."""


def corpus_indexes(cache_dir: Path) -> list[Path]:
    """The corpus index files kept in ``cache_dir`` (``corpus/<digest>.sqlite``)."""
    folder = Path(cache_dir) / "corpus"
    return sorted(p for p in folder.glob("*.sqlite") if p.is_file()) if folder.is_dir() else []


def clear_cache(settings: Settings, *, expired_only: bool = False) -> tuple[int, PageCache]:
    """Remove cached pages (all, or only expired ones); return (count removed, cache)."""
    from ..fetch.cache import PageCache

    cache = PageCache.for_settings(settings)
    removed = cache.prune_expired() if expired_only else cache.clear()
    return removed, cache


@app.command("clear")
@guarded
def clear(
    expired: bool = typer.Option(False, "--expired", help="Remove only entries older than the cache TTL."),
) -> None:
    """Remove cached web pages and print how many were removed; corpus indexes are kept."""
    settings = load_settings()
    removed, cache = clear_cache(settings, expired_only=expired)
    noun = "page" if removed == 1 else "pages"
    what = "expired " if expired else ""
    echo(f"removed {removed} {what}cached web {noun} from {cache.dir}")
    indexes = corpus_indexes(settings.cache_dir)
    if indexes:
        noun = "index" if len(indexes) == 1 else "indexes"
        echo(f"kept {len(indexes)} corpus {noun} in {indexes[0].parent} (a run or `corpus index` refreshes them; "
             "delete that folder to rebuild them from scratch)")
