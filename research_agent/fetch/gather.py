"""Turn search hits into the sources a run reads: merge, bound, fetch.

One URL or one file is one source, however many sub-queries or passages found it.
Sources are taken round-robin across sub-queries so every sub-query is represented
before any gets a second source, up to the run's source limit.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from ..sources import SearchHit, Source
from ..text.passages import estimate_tokens
from .outcome import FetchStats
from .reading import work_source
from .urls import normalize_url, registrable_domain

__all__ = ["SourceReader", "Gathered", "gather_sources", "source_key"]


class SourceRead(Protocol):
    @property
    def source(self) -> Source: ...  # snippet-only when the page could not be read

    @property
    def failure(self) -> Any: ...  # None, or why the page could not be read (has .reason)


class SourceReader(Protocol):
    """Reads a web hit into a Source: research_agent.fetch.Fetcher. ``stats`` is what it did so far
    (for the run record); ``aclose`` frees what it holds."""

    async def read_source(self, hit: SearchHit, *, queries: Sequence[str], token_budget: int) -> SourceRead: ...

    @property
    def stats(self) -> FetchStats: ...

    async def aclose(self) -> None: ...


@dataclass(frozen=True)
class Gathered:
    sources: tuple[Source, ...]
    candidates: int  # distinct sources the search found, before the limit
    fetch_failures: tuple[tuple[str, str], ...] = ()  # (location, reason)


def source_key(hit: SearchHit) -> str:
    if hit.provider == "local":
        return str(Path(hit.location).resolve())
    return normalize_url(hit.location)


def _memo_keys() -> Callable[[SearchHit], str]:
    """:func:`source_key` remembered per (provider, location) for one gathering: a local
    hit's key resolves its path, and every hit is keyed several times."""
    known: dict[tuple[str, str], str] = {}

    def key(hit: SearchHit) -> str:
        seen = (hit.provider, hit.location)
        if seen not in known:
            known[seen] = source_key(hit)
        return known[seen]

    return key


def _merge_text(texts: Iterable[str], token_budget: int) -> str:
    seen: list[str] = []
    used = 0
    for text in texts:
        for passage in text.split("\n\n"):
            passage = passage.strip()
            if not passage or passage in seen:
                continue
            cost = estimate_tokens(passage)
            if seen and used + cost > token_budget:
                continue
            seen.append(passage)
            used += cost
    return "\n\n".join(seen)


def _pick(
    hits: Mapping[str, Sequence[SearchHit]], limit: int, exclude: set[str], key_of: Callable[[SearchHit], str]
) -> tuple[list[list[SearchHit]], int]:
    """Group hits by source key and choose up to ``limit`` groups round-robin."""
    groups: dict[str, list[SearchHit]] = {}
    queries_of: dict[str, list[str]] = {}
    for query, query_hits in hits.items():
        for hit in query_hits:
            key = key_of(hit)
            groups.setdefault(key, []).append(hit)
            queries_of.setdefault(key, []).append(query)
    candidates = [k for k in groups if k not in exclude]
    chosen: list[str] = []
    columns = [[key_of(h) for h in query_hits] for query_hits in hits.values()]
    depth = max((len(c) for c in columns), default=0)
    for rank in range(depth):
        for column in columns:
            if len(chosen) >= limit:
                break
            if rank < len(column):
                key = column[rank]
                if key not in exclude and key not in chosen:
                    chosen.append(key)
    return [groups[k] for k in chosen], len(candidates)


async def gather_sources(
    hits: Mapping[str, Sequence[SearchHit]],
    *,
    limit: int,
    token_budget: int,
    reader: SourceReader | None,
    exclude: set[str] | None = None,
) -> Gathered:
    """Choose at most ``limit`` sources from ``hits`` and read them.

    Local hits already carry their best passages, scholarly hits their abstract (``reader``
    reads a work's open full text). Web hits are read by ``reader``; without one (or when
    reading fails) a web hit is kept as snippet-only.
    """
    key_of = _memo_keys()
    groups, candidates = _pick(hits, limit, exclude or set(), key_of)
    failures: list[tuple[str, str]] = []

    async def build(group: list[SearchHit]) -> Source | None:
        first = group[0]
        key = key_of(first)
        queries = tuple(dict.fromkeys(q for q, hs in hits.items() for h in hs if key_of(h) == key))
        if first.provider == "local":
            text = _merge_text((h.text for h in group), token_budget)
            return Source(
                key=key,
                title=first.title,
                location=first.location,
                site=key,
                text=text or first.snippet,
                provider="local",
                published=first.published,
                sub_queries=queries,
            )
        if first.work is not None and (reader is None or not first.work.full_text_url):
            return work_source(first, queries, token_budget)  # the abstract is the text in hand
        if reader is not None:
            result = await reader.read_source(first, queries=queries, token_budget=token_budget)
            if result.failure is not None:  # a work's full text fails at its own address
                failures.append((getattr(result.failure, "url", "") or first.location, str(result.failure.reason)))
            return result.source if result.source.sub_queries else replace(result.source, sub_queries=queries)
        failures.append((first.location, "not_fetched"))
        snippet = _merge_text((h.snippet for h in group), token_budget)
        if not snippet:
            return None
        return Source(
            key=key,
            title=first.title or first.location,
            location=first.location,
            site=registrable_domain(first.location),
            text=snippet,
            provider=first.provider,
            snippet_only=True,
            published=first.published,
            sub_queries=queries,
        )

    built = await asyncio.gather(*(build(g) for g in groups))
    sources = tuple(s for s in built if s is not None and s.text.strip())
    return Gathered(sources=sources, candidates=candidates, fetch_failures=tuple(failures))

