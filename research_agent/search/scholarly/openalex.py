"""OpenAlex: ``GET {url}/works?search=...``, the catalogue of scholarly works (no key needed to try it).

OpenAlex sends abstracts as an inverted index (word -> positions); :func:`abstract_text` puts the
words back in order. A contact address (``mailto``) joins OpenAlex's polite pool; an API key
(``OPENALEX_API_KEY``) lifts the small daily allowance keyless callers get. The full text is the
work's open-access PDF or page (``best_oa_location.pdf_url``, else ``open_access.oa_url``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ...sources import SearchHit, Work
from ..base import ProviderError
from .identity import (
    MAX_ABSTRACT,
    MAX_AUTHORS,
    MAX_TITLE,
    as_mapping,
    hits_of,
    openalex_of,
    pmcid_of,
    pmid_of,
    preprint_venue,
    reply_text,
    web_url_of,
    with_ids,
    year_of,
)
from .polite import ApiProvider

__all__ = ["OpenAlexProvider", "abstract_text", "INTERVAL"]

INTERVAL = 0.1  # OpenAlex allows 100 requests a second; ten is polite
MAX_POSITION = 20_000  # an abstract is a few hundred words; a position past this is not one
_FIELDS = (
    "id,doi,display_name,publication_year,publication_date,authorships,primary_location,"
    "best_oa_location,open_access,abstract_inverted_index,ids"
)


def abstract_text(index: object) -> str:
    """The abstract an inverted index (``{"word": [0, 5], ...}``) stands for; "" when it is not one."""
    if not isinstance(index, Mapping):
        return ""
    slots: dict[int, str] = {}
    for word, positions in index.items():
        if not isinstance(word, str) or not isinstance(positions, list):
            continue
        for position in positions:
            if isinstance(position, int) and not isinstance(position, bool) and 0 <= position < MAX_POSITION:
                slots[position] = word
    return reply_text(" ".join(slots[p] for p in sorted(slots)), MAX_ABSTRACT)


def _authors(row: Mapping[str, Any]) -> tuple[str, ...]:
    names = []
    for authorship in row.get("authorships") or ():
        name = reply_text(as_mapping(as_mapping(authorship).get("author")).get("display_name"))
        if name:
            names.append(name)
        if len(names) >= MAX_AUTHORS:
            break
    return tuple(names)


def work_of(row: Mapping[str, Any]) -> Work:
    """The Work one OpenAlex result describes."""
    ids = as_mapping(row.get("ids"))
    primary = as_mapping(row.get("primary_location"))
    best = as_mapping(row.get("best_oa_location"))
    full_text = web_url_of(best.get("pdf_url")) or web_url_of(as_mapping(row.get("open_access")).get("oa_url"))
    work = Work(
        title=reply_text(row.get("display_name") or row.get("title"), MAX_TITLE),
        authors=_authors(row),
        year=year_of(row.get("publication_year")),
        venue=reply_text(as_mapping(primary.get("source")).get("display_name")),
        abstract=abstract_text(row.get("abstract_inverted_index")),
        full_text_url=full_text,
        pmid=pmid_of(ids.get("pmid")),
        pmcid=pmcid_of(ids.get("pmcid")),
        openalex=openalex_of(row.get("id")),
    )
    work = with_ids(work, doi=row.get("doi"), arxiv=primary.get("landing_page_url"))
    if work.arxiv and as_mapping(primary.get("source")).get("type") == "repository":  # "arXiv (Cornell University)"
        return replace(work, venue=preprint_venue(work.arxiv))
    return work


class OpenAlexProvider(ApiProvider):
    """OpenAlex's works search; see the module docstring."""

    name = "openalex"

    async def search(self, query: str, *, max_results: int) -> list[SearchHit]:
        per_page = max(1, min(int(max_results), 50))
        data = await self._api.get_json(
            f"{self.base_url}/works", {"search": query, "per-page": per_page, "select": _FIELDS}
        )
        if not isinstance(data, Mapping) or not isinstance(data.get("results"), list):
            raise ProviderError(self.name, "answer has no 'results' list")
        rows = [row for row in data["results"][:per_page] if isinstance(row, Mapping)]
        return hits_of(self.name, ((work_of(row), reply_text(row.get("publication_date"), 32) or None) for row in rows))
