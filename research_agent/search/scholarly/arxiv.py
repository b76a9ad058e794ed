"""arXiv: ``GET {url}/query?search_query=...``, the Atom API (no key; one request every three seconds).

A free-text query becomes ``all:<term> AND all:<term> ...`` over its first significant words (at
most :data:`MAX_TERMS`): arXiv's query syntax is Lucene's, so every other character is dropped. An
entry's PDF is its full text; its venue is the journal reference when the authors gave one, else
"arXiv preprint arXiv:<id>". An error comes back as a feed whose one entry is the error.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from ...sources import SearchHit, Work
from ..base import ProviderError
from .identity import (
    MAX_ABSTRACT,
    MAX_AUTHORS,
    MAX_TITLE,
    arxiv_of,
    hits_of,
    preprint_venue,
    reply_text,
    web_url_of,
    with_ids,
    year_of,
)
from .polite import ApiProvider

__all__ = ["ArxivProvider", "arxiv_query", "INTERVAL", "MAX_TERMS"]

INTERVAL = 3.0  # arXiv's API terms: no more than one request every three seconds
MAX_TERMS = 5
_NS = {"atom": "http://www.w3.org/2005/Atom", "arxiv": "http://arxiv.org/schemas/atom"}
_TERM = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*")
_STOP = frozenset(
    "a an and are as at be by can do does for from has have how in into is it its of on or that the their "
    "this to vs was what when where which who why will with".split()
)
_OPERATORS = frozenset({"and", "or", "andnot"})


def arxiv_query(query: str) -> str:
    """``all:w1 AND all:w2 ...`` for the first :data:`MAX_TERMS` significant words of ``query``; "" when
    it has none."""
    terms = []
    for word in _TERM.findall(query):
        word = word.strip("-").lower()
        if len(word) > 1 and word not in _STOP and word not in _OPERATORS and word not in terms:
            terms.append(word)
    return " AND ".join(f"all:{term}" for term in terms[:MAX_TERMS])


def _text(entry: ET.Element, path: str, limit: int = MAX_TITLE) -> str:
    found = entry.find(path, _NS)
    return reply_text("".join(found.itertext()), limit) if found is not None else ""


def _pdf(entry: ET.Element) -> str:
    for link in entry.findall("atom:link", _NS):
        if link.get("title") == "pdf" or link.get("type") == "application/pdf":
            return web_url_of(link.get("href"))
    return ""


def work_of(entry: ET.Element) -> Work:
    """The Work one Atom entry describes."""
    arxiv = arxiv_of(_text(entry, "atom:id"))
    authors = [reply_text("".join(a.itertext())) for a in entry.findall("atom:author/atom:name", _NS)]
    journal = _text(entry, "arxiv:journal_ref")
    work = Work(
        title=_text(entry, "atom:title"),
        authors=tuple(a for a in authors if a)[:MAX_AUTHORS],
        year=year_of(_text(entry, "atom:published", 40)),
        venue=journal or preprint_venue(arxiv),
        abstract=_text(entry, "atom:summary", MAX_ABSTRACT),
        full_text_url=_pdf(entry),
    )
    return with_ids(work, doi=_text(entry, "arxiv:doi"), arxiv=arxiv)


class ArxivProvider(ApiProvider):
    """arXiv's search; see the module docstring."""

    name = "arxiv"

    async def search(self, query: str, *, max_results: int) -> list[SearchHit]:
        search = arxiv_query(query)
        if not search:
            return []
        wanted = max(1, min(int(max_results), 50))
        params = {"search_query": search, "start": 0, "max_results": wanted, "sortBy": "relevance"}
        root = await self._api.get_xml(f"{self.base_url}/query", params)
        if root.tag != f"{{{_NS['atom']}}}feed":
            raise ProviderError(self.name, "answer is not an Atom feed")
        entries = root.findall("atom:entry", _NS)[:wanted]
        for entry in entries:
            if "/api/errors" in _text(entry, "atom:id"):
                raise ProviderError(self.name, f"answered with an error: {_text(entry, 'atom:summary', 160)}")
        return hits_of(self.name, ((work_of(e), _text(e, "atom:published", 40) or None) for e in entries))
