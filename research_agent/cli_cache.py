"""``research-agent cache``: manage the on-disk page cache."""

from __future__ import annotations

import typer

from .config import Settings, load_settings
from .errors import ResearchError
from .fetch.cache import PageCache
from .terminal import echo, echo_error

__all__ = ["app", "clear_cache"]

app = typer.Typer(help="Manage the cache of fetched web pages.", no_args_is_help=True)


@app.callback()
def _group() -> None:
    """Manage the cache of fetched web pages."""


def clear_cache(settings: Settings, *, expired_only: bool = False) -> tuple[int, PageCache]:
    """Remove cached pages (all, or only expired ones); return (count removed, cache)."""
    cache = PageCache.for_settings(settings)
    removed = cache.prune_expired() if expired_only else cache.clear()
    return removed, cache


@app.command("clear")
def clear(
    expired: bool = typer.Option(False, "--expired", help="Remove only entries older than the cache TTL."),
) -> None:
    """Remove cached pages and print how many were removed."""
    try:
        removed, cache = clear_cache(load_settings(), expired_only=expired)
    except ResearchError as exc:
        echo_error(exc)
        raise typer.Exit(exc.exit_code) from None
    noun = "entry" if removed == 1 else "entries"
    what = "expired " if expired else ""
    echo(f"removed {removed} {what}cache {noun} from {cache.dir}")
