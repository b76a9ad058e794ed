"""Sources from what was read: a fetched page, a search snippet, a corpus hit, a scholarly work.

A Source's text is the passages that best match the run's sub-queries, within a
token budget; a source whose page could not be read keeps the search snippet. A
scholarly work's text is its abstract, followed by the passages of its full text that
best match when that could be read.
"""

from __future__ import annotations

from pathlib import Path

from ..sources import Page, SearchHit, Source, Work
from ..text.passages import estimate_tokens, select_passages
from .urls import normalize_url, registrable_domain

__all__ = ["page_source", "snippet_source", "local_source", "work_source", "work_site"]


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


def work_site(work: Work, location: str) -> str:
    """The site a work counts under: a scholarly work is its own (``doi:10.1038/x``), since the
    papers of one journal are not one voice; an encyclopedia article its web site."""
    return work.identity or registrable_domain(location)


def work_source(hit: SearchHit, queries: tuple[str, ...], token_budget: int, page: Page | None = None) -> Source:
    """The Source of a scholarly hit: its abstract, then (when ``page``, its full text, was read) the
    full text's passages best matching ``queries`` in what is left of the budget. It keeps the work's
    link (DOI, arXiv page) as its location whatever address the full text came from."""
    work = hit.work or Work(hit.title)
    abstract = (work.abstract or hit.text or hit.snippet).strip()
    if estimate_tokens(abstract) > token_budget:
        abstract = select_passages(abstract, queries or (work.title,), token_budget=token_budget)
    text = abstract
    left = token_budget - estimate_tokens(abstract)
    if page is not None and left > 50:
        passages = select_passages(page.text, queries or (work.title,), token_budget=left)
        text = "\n\n".join(part for part in (abstract, passages) if part.strip())
    return Source(
        key=normalize_url(hit.location),
        title=work.title or hit.title or hit.location,
        location=hit.location,
        site=work_site(work, hit.location),
        text=text,
        provider=hit.provider,
        published=hit.published,
        sub_queries=queries,
        work=work,
    )
