"""Scholarly search providers: papers with their abstracts in hand, and encyclopedia articles.

Each provider answers a query with :class:`~research_agent.sources.SearchHit` objects that carry a
:class:`~research_agent.sources.Work` (title, authors, year, venue, identifiers, abstract, an
open-access full-text address). The fetcher reads that full text when it can and falls back to the
abstract (:func:`research_agent.fetch.reading.work_source`); the report cites the work as
researchers do, linked to its DOI or arXiv page.

* :mod:`.identity`        identifiers read and normalised (DOI, arXiv id, PMID, PMCID); a work's hit;
                          the same work found by two providers made one (:func:`.identity.unify_works`)
* :mod:`.polite`          one API's requests: paced to its published limit, ``Retry-After`` honoured,
                          replies read through the bounded reader (:mod:`research_agent.search.reply`)
* :mod:`.openalex`        OpenAlex works search (abstracts rebuilt from the inverted index)
* :mod:`.arxiv`           arXiv's Atom API
* :mod:`.pubmed`          NCBI E-utilities: esearch, then efetch
* :mod:`.semanticscholar` Semantic Scholar's Graph API paper search
* :mod:`.wikipedia`       the MediaWiki search API (intro extracts; the article is the full text)
* :mod:`.build`           the providers from Settings, their checks, and doctor's one small query

Nothing here is imported by a run that does not use these providers, except :mod:`.identity`
(plain Python, no HTTP client).
"""

from __future__ import annotations

__all__ = ["SCHOLARLY_PROVIDERS", "ACADEMIC", "ACADEMIC_PROVIDERS"]

ACADEMIC = "academic"  # --search academic: the four paper indexes, not Wikipedia
ACADEMIC_PROVIDERS = ("openalex", "arxiv", "pubmed", "semanticscholar")
SCHOLARLY_PROVIDERS = (*ACADEMIC_PROVIDERS, "wikipedia")
