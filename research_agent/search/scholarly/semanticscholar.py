"""Semantic Scholar: ``GET {url}/paper/search?query=...``, its Graph API's relevance search.

Without a key, every caller shares one pool (published as 100 requests per five minutes): one
request every three seconds keeps within it. A key (``SEMANTIC_SCHOLAR_API_KEY``, sent as
``x-api-key``) gets one request a second of its own. The full text is the paper's open-access PDF.
Hyphens are read as spaces: the search finds nothing for hyphenated terms.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...sources import SearchHit, Work
from ...text.controls import one_line
from ..base import ProviderError
from .identity import (
    MAX_ABSTRACT,
    MAX_AUTHORS,
    MAX_TITLE,
    as_mapping,
    hits_of,
    pmcid_of,
    pmid_of,
    reply_text,
    web_url_of,
    with_ids,
    year_of,
)
from .polite import ApiProvider

__all__ = ["SemanticScholarProvider", "INTERVAL", "KEYED_INTERVAL"]

INTERVAL = 3.0  # the keyless pool: 100 requests per 5 minutes, shared
KEYED_INTERVAL = 1.0  # a key's own rate: one request a second
_FIELDS = "title,abstract,authors,year,venue,externalIds,openAccessPdf,publicationDate"
_S2_ID = frozenset("0123456789abcdef")


def _authors(row: Mapping[str, Any]) -> tuple[str, ...]:
    authors = given if isinstance(given := row.get("authors"), list) else []
    names = (reply_text(as_mapping(a).get("name")) for a in authors[:MAX_AUTHORS])
    return tuple(n for n in names if n)


def _paper_id(value: object) -> str:
    text = reply_text(value, 64).lower()
    return text if len(text) == 40 and set(text) <= _S2_ID else ""


def work_of(row: Mapping[str, Any]) -> Work:
    """The Work one search result describes."""
    ids = as_mapping(row.get("externalIds"))
    work = Work(
        title=reply_text(row.get("title"), MAX_TITLE),
        authors=_authors(row),
        year=year_of(row.get("year")) or year_of(row.get("publicationDate")),
        venue=reply_text(row.get("venue")),
        abstract=reply_text(row.get("abstract"), MAX_ABSTRACT),
        full_text_url=web_url_of(as_mapping(row.get("openAccessPdf")).get("url")),
        pmid=pmid_of(ids.get("PubMed")),
        pmcid=pmcid_of(ids.get("PubMedCentral")),
        s2=_paper_id(row.get("paperId")),
    )
    return with_ids(work, doi=ids.get("DOI"), arxiv=ids.get("ArXiv"))


class SemanticScholarProvider(ApiProvider):
    """Semantic Scholar's paper search; see the module docstring."""

    name = "semanticscholar"

    async def search(self, query: str, *, max_results: int) -> list[SearchHit]:
        limit = max(1, min(int(max_results), 100))
        params = {"query": one_line(query.replace("-", " ")), "limit": limit, "fields": _FIELDS}
        data = await self._api.get_json(f"{self.base_url}/paper/search", params)
        if not isinstance(data, Mapping) or not isinstance(data.get("total", 0), int):
            raise ProviderError(self.name, "answer is not a search result")
        rows = data.get("data", [])  # an empty result has no 'data' at all
        if not isinstance(rows, list):
            raise ProviderError(self.name, "answer's 'data' is not a list")
        rows = [row for row in rows[:limit] if isinstance(row, Mapping)]
        return hits_of(self.name, ((work_of(row), reply_text(row.get("publicationDate"), 32) or None) for row in rows))
