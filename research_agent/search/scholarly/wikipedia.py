"""Wikipedia: the MediaWiki search API of one language's Wikipedia (no key).

One request per query: ``generator=search`` finds the articles and ``prop=extracts`` brings each
one's introduction as plain text, the text in hand; the article's page is its full text. Wikimedia
asks API clients to send requests one at a time and to say who they are (the User-Agent carries
the project's address and the ``mailto`` setting). An article is cited as "Title. Wikipedia.",
linked to its page; it counts under its site (wikipedia.org) like any web page.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ...sources import SearchHit, Work
from ..base import ProviderError
from .identity import MAX_ABSTRACT, MAX_TITLE, as_mapping, hits_of, reply_text, web_url_of
from .polite import ApiProvider

__all__ = ["WikipediaProvider", "api_url", "valid_language", "INTERVAL"]

INTERVAL = 0.1  # one request at a time; no published limit for reads
_LANGUAGE = re.compile(r"^[a-z]{2,3}(?:-[a-z]{2,8}){0,2}$|^simple$")


def valid_language(language: str) -> bool:
    """Whether ``language`` is the form of a Wikipedia's language code (``en``, ``de``, ``zh-yue``, ``simple``)."""
    return bool(_LANGUAGE.match(language))


def api_url(base_url: str, language: str) -> str:
    """The MediaWiki API address: ``base_url`` when set, else ``https://<language>.wikipedia.org/w/api.php``."""
    return base_url.strip() or f"https://{language}.wikipedia.org/w/api.php"


def work_of(page: Mapping[str, object]) -> Work:
    """The Work (an encyclopedia article, no identifier) of one result page."""
    url = web_url_of(page.get("fullurl") or page.get("canonicalurl"))
    return Work(
        title=reply_text(page.get("title"), MAX_TITLE),
        venue="Wikipedia",
        abstract=reply_text(page.get("extract"), MAX_ABSTRACT),
        full_text_url=url,
        page_url=url,
    )


def _rank(page: Mapping[str, object]) -> int:
    index = page.get("index")
    return index if isinstance(index, int) and not isinstance(index, bool) else 1 << 30


class WikipediaProvider(ApiProvider):
    """Wikipedia's search; see the module docstring."""

    name = "wikipedia"

    async def search(self, query: str, *, max_results: int) -> list[SearchHit]:
        limit = max(1, min(int(max_results), 20))  # extracts come for at most 20 pages at once
        params = {
            "action": "query", "format": "json", "formatversion": 2, "generator": "search", "gsrsearch": query,
            "gsrlimit": limit, "gsrnamespace": 0, "prop": "extracts|info", "exintro": 1, "explaintext": 1,
            "exlimit": limit, "inprop": "url", "redirects": 1,
        }  # fmt: skip
        data = await self._api.get_json(self.base_url, params)
        if not isinstance(data, Mapping):
            raise ProviderError(self.name, "answer is not a JSON object")
        if isinstance(data.get("error"), Mapping):
            error = as_mapping(data["error"])
            raise ProviderError(self.name, f"answered with an error: {reply_text(error.get('info') or error.get('code'), 160)}")
        pages = as_mapping(data.get("query")).get("pages", [])  # no 'query' at all: nothing found
        if not isinstance(pages, list):
            raise ProviderError(self.name, "answer's 'query.pages' is not a list")
        ordered = sorted((p for p in pages if isinstance(p, Mapping)), key=_rank)[:limit]
        return hits_of(self.name, ((work_of(page), None) for page in ordered))
