"""Sources from what was read: a fetched page, a search snippet, a corpus hit.

A Source's text is the passages that best match the run's sub-queries, within a
token budget; a source whose page could not be read keeps the search snippet.
"""

from __future__ import annotations

from pathlib import Path

from ..sources import Page, SearchHit, Source
from ..text.passages import estimate_tokens, select_passages
from .urls import normalize_url, registrable_domain

__all__ = ["page_source", "snippet_source", "local_source"]


def page_source(hit: SearchHit, page: Page, queries: tuple[str, ...], token_budget: int) -> Source:
    """The Source of a fetched page: its passages best matching ``queries``."""
    text = select_passages(page.text, queries or (hit.title,), token_budget=token_budget)
    return Source(
        key=normalize_url(hit.location),
        title=page.title or hit.title or hit.location,
        location=page.final_url,
        site=registrable_domain(page.final_url),
        text=text or page.text[: max(1, token_budget) * 4],
        provider=hit.provider,
        published=page.date or hit.published,
        sub_queries=queries,
    )


def snippet_source(hit: SearchHit, queries: tuple[str, ...]) -> Source:
    """The snippet-only Source of a web hit whose page could not be read."""
    return Source(
        key=normalize_url(hit.location),
        title=hit.title or hit.location,
        location=hit.location,
        site=registrable_domain(hit.location),
        text=hit.snippet,
        provider=hit.provider,
        snippet_only=True,
        published=hit.published,
        sub_queries=queries,
    )


def local_source(hit: SearchHit, queries: tuple[str, ...], token_budget: int) -> Source:
    """The Source of a corpus hit, which already carries its best passages."""
    try:
        key = str(Path(hit.location).expanduser().resolve())
    except (OSError, RuntimeError, ValueError):
        key = hit.location
    text = hit.text or hit.snippet
    if estimate_tokens(text) > token_budget:
        text = select_passages(text, queries or (hit.title,), token_budget=token_budget)
    return Source(
        key=key,
        title=hit.title or Path(key).name,
        location=hit.location,
        site=key,
        text=text,
        provider=hit.provider,
        published=hit.published,
        sub_queries=queries,
    )
