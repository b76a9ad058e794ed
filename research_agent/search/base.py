"""The SearchProvider protocol and what a round of searching returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ..errors import ProviderError
from ..sources import SearchHit

__all__ = ["SearchProvider", "SearchResults", "ProviderFailure", "ProviderError"]


@runtime_checkable
class SearchProvider(Protocol):
    """Anything that answers a query with hits. ``name`` is its registry name."""

    name: str

    async def search(self, query: str, *, max_results: int) -> list[SearchHit]: ...


@dataclass(frozen=True)
class ProviderFailure:
    provider: str
    query: str
    reason: str


@dataclass(frozen=True)
class SearchResults:
    """Hits for every sub-query, merged across providers, plus who failed."""

    hits: dict[str, tuple[SearchHit, ...]]  # sub-query -> hits
    failures: tuple[ProviderFailure, ...] = ()
