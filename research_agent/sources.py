"""What search finds, what a fetch reads, and what the later stages read."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from urllib.parse import quote

from .text.controls import one_line

__all__ = ["SearchHit", "Document", "Page", "Source", "ScoredSource", "Work", "WORK_IDS"]

# A work's identifiers, best first: the first one it has gives its link and its identity.
WORK_IDS = ("doi", "arxiv", "pmid", "pmcid", "openalex", "s2")
_LINKS = {
    "doi": "https://doi.org/{}",
    "arxiv": "https://arxiv.org/abs/{}",
    "pmid": "https://pubmed.ncbi.nlm.nih.gov/{}/",
    "pmcid": "https://pmc.ncbi.nlm.nih.gov/articles/{}/",
    "openalex": "https://openalex.org/{}",
    "s2": "https://www.semanticscholar.org/paper/{}",
}


def _sentence(text: str) -> str:
    """``text`` on one line, ending as a sentence ends ("Title" -> "Title.", "Why?" stays)."""
    text = one_line(text)
    return text if not text or text[-1] in ".?!" else text + "."


@dataclass(frozen=True)
class Work:
    """What a scholarly search result says about the work itself (or, for an encyclopedia
    article, its title and page). Identifiers are normalised by the provider that read them
    (:mod:`research_agent.search.scholarly.identity`); ``abstract`` is the text in hand and
    ``full_text_url`` an open-access PDF or full-text page, read when it can be."""

    title: str
    authors: tuple[str, ...] = ()
    year: int | None = None
    venue: str = ""
    abstract: str = ""
    full_text_url: str = ""
    page_url: str = ""  # the link of a work with no identifier (an encyclopedia article)
    doi: str = ""
    arxiv: str = ""
    pmid: str = ""
    pmcid: str = ""
    openalex: str = ""
    s2: str = ""

    @property
    def identifiers(self) -> dict[str, str]:
        """The identifiers it has, by scheme (``doi``, ``arxiv``, ...), best first."""
        return {name: value for name in WORK_IDS if (value := getattr(self, name))}

    @property
    def identity(self) -> str:
        """Its best identifier as ``scheme:value`` (``doi:10.1038/x``); "" without one."""
        return next((f"{name}:{value}" for name, value in self.identifiers.items()), "")

    @property
    def link(self) -> str:
        """Where a reader finds it: its DOI, its arXiv abstract page, its PubMed page... in that order."""
        for name, value in self.identifiers.items():
            return _LINKS[name].format(quote(value, safe="/:;()._-"))
        return self.page_url

    @property
    def citation(self) -> str:
        """"Author et al. (Year). Title. Venue." as plain text (the caller escapes it); a work
        without authors reads "Title. (Year). Venue."."""
        names = [one_line(a) for a in self.authors if a.strip()]
        who = f"{names[0]} et al." if len(names) > 2 else " and ".join(names)
        year = f"({self.year})." if self.year else ("(n.d.)." if who else "")
        parts = [f"{who} {year}", _sentence(self.title) or "Untitled."] if who else [_sentence(self.title) or "Untitled.", year]
        return " ".join(p for p in [*parts, _sentence(self.venue)] if p)

    def merged(self, other: Work) -> Work:
        """This work completed by ``other`` (the same work from another provider): a field left
        empty here takes the other's value, and the longer abstract wins."""
        changes = {f.name: getattr(other, f.name) for f in fields(self) if not getattr(self, f.name)}
        if len(other.abstract) > len(self.abstract):
            changes["abstract"] = other.abstract
        return replace(self, **changes)


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
    work: Work | None = None  # what a scholarly provider knows of the work (its text is the abstract)


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
    domain for web pages, and the path itself for local files: the site a file counts under
    is its corpus's first folder, named by :func:`research_agent.memory.critique.site_names.source_site`
    (the one rule of the gate, the run record and the critique facts). ``text`` holds the
    passages the later stages read.
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
    work: Work | None = None  # a scholarly work: cited as researchers cite it

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
