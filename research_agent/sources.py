"""What search finds, what a fetch reads, and what the later stages read."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SearchHit", "Document", "Page", "Source", "ScoredSource"]


@dataclass(frozen=True)
class SearchHit:
    """One search result from one provider.

    ``location`` is a URL for web providers and an absolute file path for the local
    corpus. ``text`` is set when the provider already holds the best passages (the
    local corpus); web hits are fetched later.
    """

    title: str
    location: str
    snippet: str
    provider: str
    text: str = ""
    published: str | None = None


@dataclass(frozen=True)
class Document:
    """The title and text extracted from one document's bytes (a page or a corpus file).

    ``title`` may be empty: the caller names the document then (its URL, its file
    name). ``date`` is only looked for when asked; ``site_name`` comes from an HTML
    page's own metadata.
    """

    title: str
    text: str
    date: str | None = None
    site_name: str = ""


@dataclass(frozen=True)
class Page:
    """A fetched, extracted web page. ``text`` is the full main text, unsanitized.

    ``addresses`` are every address it was fetched from, all redirect hops: the address
    guard's evidence when the page is later served from the cache.
    """

    url: str
    final_url: str
    title: str
    date: str | None
    site_name: str
    text: str
    from_cache: bool = False
    addresses: tuple[str, ...] = ()


@dataclass(frozen=True)
class Source:
    """A document the run will read: one URL or one file, however many passages matched.

    ``key`` is its identity (normalised URL or resolved path); ``site`` the registrable
    domain for web pages, and the path itself for local files (each document counts as
    its own site). ``text`` holds the passages the later stages read.
    """

    key: str
    title: str
    location: str
    site: str
    text: str
    provider: str
    snippet_only: bool = False
    published: str | None = None
    sub_queries: tuple[str, ...] = ()

    @property
    def is_file(self) -> bool:
        return self.provider == "local"


@dataclass(frozen=True)
class ScoredSource:
    """A source with its relevance verdict. ``score`` is None when unscored."""

    source: Source
    score: int | None
    reason: str

    @property
    def unscored(self) -> bool:
        return self.score is None
