"""PubMed through NCBI's E-utilities: ``esearch`` finds the ids, ``efetch`` reads their records.

Two requests per query, both paced: NCBI allows three requests a second without a key and ten
with one (``NCBI_API_KEY``). Every request names the tool and, when one is set, the contact address
(``mailto``), as NCBI asks. An abstract's labelled parts (BACKGROUND, METHODS...) keep their labels;
an article in PubMed Central has its PMC page (under the ``pmc_url`` setting) as its full text.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping

from ...sources import SearchHit, Work
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
    with_ids,
    year_of,
)
from .polite import Api, ApiProvider

__all__ = ["PubmedProvider", "INTERVAL", "KEYED_INTERVAL"]

INTERVAL = 1 / 3 + 0.01  # NCBI: at most three requests a second without a key
KEYED_INTERVAL = 0.1 + 0.01  # ten a second with one
_MAX_IDS = 50


def _text(node: ET.Element | None, limit: int = MAX_TITLE) -> str:
    return reply_text("".join(node.itertext()), limit) if node is not None else ""


def _abstract(article: ET.Element) -> str:
    parts = []
    for part in article.findall("Abstract/AbstractText"):
        text, label = _text(part, MAX_ABSTRACT), reply_text(part.get("Label"), 60)
        if text:
            parts.append(f"{label}: {text}" if label and label.upper() != "UNLABELLED" else text)
    return reply_text(" ".join(parts), MAX_ABSTRACT)


def _authors(article: ET.Element) -> tuple[str, ...]:
    names = []
    for author in article.findall("AuthorList/Author")[:MAX_AUTHORS]:
        collective = _text(author.find("CollectiveName"))
        name = " ".join(p for p in (_text(author.find("ForeName")), _text(author.find("LastName"))) if p)
        if name or collective:
            names.append(name or collective)
    return tuple(names)


def _year(article: ET.Element) -> int | None:
    issue = article.find("Journal/JournalIssue/PubDate")
    if issue is None:
        return year_of(_text(article.find("ArticleDate/Year"), 8))
    return year_of(_text(issue.find("Year"), 8)) or year_of(_text(issue.find("MedlineDate"), 40))


def work_of(record: ET.Element, pmc_url: str) -> Work | None:
    """The Work of one ``PubmedArticle`` (its PMC article under ``pmc_url``); None when it has no
    article or no PMID."""
    citation = record.find("MedlineCitation")
    article = citation.find("Article") if citation is not None else None
    pmid = pmid_of(_text(citation.find("PMID"), 20)) if citation is not None else ""
    if article is None or not pmid:
        return None
    ids = {a.get("IdType"): _text(a, 300) for a in record.findall("PubmedData/ArticleIdList/ArticleId")}
    pmcid = pmcid_of(ids.get("pmc"))
    work = Work(
        title=_text(article.find("ArticleTitle")),
        authors=_authors(article),
        year=_year(article),
        venue=_text(article.find("Journal/Title")) or _text(article.find("Journal/ISOAbbreviation")),
        abstract=_abstract(article),
        full_text_url=f"{pmc_url.rstrip('/')}/{pmcid}/" if pmcid else "",
        pmid=pmid,
        pmcid=pmcid,
    )
    return with_ids(work, doi=ids.get("doi"))


class PubmedProvider(ApiProvider):
    """PubMed's search; see the module docstring."""

    name = "pubmed"

    def __init__(self, api: Api, base_url: str, pmc_url: str) -> None:
        super().__init__(api, base_url)
        self.pmc_url = pmc_url

    async def search(self, query: str, *, max_results: int) -> list[SearchHit]:
        wanted = max(1, min(int(max_results), _MAX_IDS))
        params = {"db": "pubmed", "term": query, "retmax": wanted, "retmode": "json", "sort": "relevance"}
        found = await self._api.get_json(f"{self.base_url}/esearch.fcgi", params)
        result = as_mapping(as_mapping(found).get("esearchresult"))
        if not isinstance(found, Mapping) or not result:
            raise ProviderError(self.name, "esearch answer has no 'esearchresult'")
        if result.get("ERROR"):
            raise ProviderError(self.name, f"esearch answered with an error: {reply_text(result['ERROR'], 160)}")
        ids = [pmid_of(i) for i in result.get("idlist") or () if pmid_of(i)][:wanted]
        if not ids:
            return []
        root = await self._api.get_xml(
            f"{self.base_url}/efetch.fcgi", {"db": "pubmed", "id": ",".join(ids), "retmode": "xml", "rettype": "abstract"}
        )
        if root.tag != "PubmedArticleSet":
            raise ProviderError(self.name, "efetch answer is not a PubmedArticleSet")
        works = {w.pmid: w for r in root.findall("PubmedArticle") if (w := work_of(r, self.pmc_url)) is not None}
        return hits_of(self.name, ((works.get(i), None) for i in ids))  # in esearch's order of relevance
