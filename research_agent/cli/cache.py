"""``research-agent cache``: manage the on-disk page cache.

The cache module (and with it the fetcher and httpx, a sixth of the CLI's start-up) is
imported only when the command runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from ..config import Settings, load_settings
from .boundary import guarded
from .terminal import echo

if TYPE_CHECKING:
    from ..fetch.cache import PageCache

__all__ = ["app", "clear_cache"]

app = typer.Typer(help="Manage the cache of fetched web pages.", no_args_is_help=True)


@app.callback()
def _group() -> None:
    """Manage the cache of fetched web pages."""


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
    """Remove cached pages and print how many were removed."""
    removed, cache = clear_cache(load_settings(), expired_only=expired)
    noun = "entry" if removed == 1 else "entries"
    what = "expired " if expired else ""
    echo(f"removed {removed} {what}cache {noun} from {cache.dir}")
