"""A work's identifiers, read and normalised, its search hit, and one work found twice made one.

Identifiers come from outside (an API's reply), so each is checked against its form before it is
kept: a DOI is ``10.<registrant>/<suffix>`` (lower-cased: DOIs are case-insensitive), an arXiv id
is new-style ``2101.00001`` or old-style ``hep-th/9901001`` (the version dropped: the abstract
page shows the latest), a PMID digits, a PMCID ``PMC`` and digits. arXiv's own DOIs
(``10.48550/arXiv.<id>``) are read as the arXiv id, so a preprint links to its abstract page and
meets the same preprint found by arXiv itself.

:func:`unify_works` runs over every hit of a search round: hits that share a DOI, an arXiv id, a
PMID or a PMCID (directly or through a third hit) are one work, completed from each provider's
fields, at one address (its best identifier's link), so the round's merge keeps it once.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ...fetch.urls import is_web_url
from ...sources import SearchHit, Work
from ...text.controls import one_line, without_controls

__all__ = [
    "doi_of",
    "arxiv_of",
    "pmid_of",
    "pmcid_of",
    "with_ids",
    "work_hit",
    "hits_of",
    "unify_works",
    "reply_text",
    "as_mapping",
    "year_of",
    "openalex_of",
    "web_url_of",
    "preprint_venue",
    "MAX_ABSTRACT",
    "MAX_AUTHORS",
    "MAX_TITLE",
]

MAX_TITLE = 300
MAX_ABSTRACT = 8000
MAX_AUTHORS = 50
_SNIPPET = 500

_DOI = re.compile(r"^10\.\d{4,9}/\S{1,250}$")
_DOI_PREFIX = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)", re.I)
_ARXIV_DOI = re.compile(r"^10\.48550/arxiv\.(.+)$", re.I)
_ARXIV_NEW = re.compile(r"^(\d{4}\.\d{4,5})(?:v\d+)?$")
_ARXIV_OLD = re.compile(r"^([a-z][a-z-]*(?:\.[a-z]{2})?/\d{7})(?:v\d+)?$", re.I)
_ARXIV_PREFIX = re.compile(r"^(?:arxiv:\s*|https?://(?:www\.|export\.)?arxiv\.org/(?:abs|pdf)/)", re.I)
_PMCID = re.compile(r"^(?:PMC)?(\d{1,12})$", re.I)
_OPENALEX = re.compile(r"^W\d{1,12}$")
_YEAR = re.compile(r"^(\d{4})(?:\D|$)")


def reply_text(value: object, limit: int = MAX_TITLE) -> str:
    """A reply's text field on one line, without terminal escapes, controls or bidi overrides (whole sequences,
    so no ``[31m`` is left behind), cut at ``limit`` characters ("" for anything but text or a number)."""
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        return ""
    return one_line(without_controls(str(value)))[:limit]


def as_mapping(value: object) -> Mapping[str, Any]:
    """``value`` when it is a JSON object, else an empty one (a reply's shape is never trusted)."""
    return value if isinstance(value, Mapping) else {}


def year_of(value: object) -> int | None:
    """A publication year from a number or a date (``2021``, ``"2021-05-01"``), or None."""
    if isinstance(value, str) and (match := _YEAR.match(value.strip())):
        value = int(match.group(1))
    return value if isinstance(value, int) and not isinstance(value, bool) and 1000 < value < 3000 else None


def doi_of(value: object) -> str:
    """The DOI in ``value`` (``10.1038/nature14539``, lower-cased), or "" when it holds none."""
    text = _DOI_PREFIX.sub("", reply_text(value, 400)).lower()
    return text if _DOI.match(text) and not _ARXIV_DOI.match(text) else ""


def arxiv_of(value: object) -> str:
    """The arXiv id in ``value`` (an id, ``arXiv:...``, an abstract or PDF address, or arXiv's DOI),
    without its version; "" when it holds none."""
    text = reply_text(value, 400)
    doi = _ARXIV_DOI.match(_DOI_PREFIX.sub("", text))
    text = doi.group(1) if doi else _ARXIV_PREFIX.sub("", text).removesuffix(".pdf")
    match = _ARXIV_NEW.match(text) or _ARXIV_OLD.match(text)
    return match.group(1).lower() if match else ""


def pmid_of(value: object) -> str:
    """A PubMed id (digits, from an id or a ``pubmed.ncbi.nlm.nih.gov/<id>`` address), or ""."""
    text = reply_text(value, 200).rstrip("/").rpartition("/")[2]
    return text if text.isdigit() and len(text) <= 12 and text.isascii() else ""


def pmcid_of(value: object) -> str:
    """A PubMed Central id as ``PMC<digits>`` (from an id or an address), or ""."""
    text = reply_text(value, 200).rstrip("/").rpartition("/")[2]
    match = _PMCID.match(text) if text.isascii() else None
    return f"PMC{match.group(1)}" if match else ""


def openalex_of(value: object) -> str:
    """An OpenAlex work id (``W2741809807``, from an id or its address), or ""."""
    text = reply_text(value, 200).rpartition("/")[2]
    return text if _OPENALEX.match(text) else ""


def web_url_of(value: object) -> str:
    """An absolute http(s) address (a full text's), or ""."""
    text = reply_text(value, 2000)
    return text if is_web_url(text) else ""


def preprint_venue(arxiv: str) -> str:
    """How an arXiv preprint's venue is cited: "arXiv preprint arXiv:2101.00001"."""
    return f"arXiv preprint arXiv:{arxiv}" if arxiv else ""


def with_ids(work: Work, *, doi: object = None, arxiv: object = None) -> Work:
    """``work`` with the DOI and arXiv id read from ``doi`` and ``arxiv`` (an arXiv DOI counts as the id)."""
    return replace(work, doi=doi_of(doi), arxiv=arxiv_of(arxiv) or arxiv_of(doi))


def work_hit(provider: str, work: Work, published: str | None = None) -> SearchHit | None:
    """The search hit of ``work``: at its link, with its abstract as the text in hand; None when it
    has no link (no identifier and no page)."""
    link = work.link
    if not is_web_url(link):
        return None
    return SearchHit(
        title=work.title or link,
        location=link,
        snippet=work.abstract[:_SNIPPET],
        provider=provider,
        text=work.abstract,
        published=published or (str(work.year) if work.year else None),
        work=work,
    )


def hits_of(provider: str, works: Iterable[tuple[Work | None, str | None]]) -> list[SearchHit]:
    """The hits of ``(work, published)`` pairs, in order, leaving out those without a work or a link."""
    hits = (work_hit(provider, work, published) for work, published in works if work is not None)
    return [hit for hit in hits if hit is not None]


def _keys(work: Work | None) -> list[str]:
    if work is None:
        return []
    return [f"{name}:{value}" for name, value in work.identifiers.items()]


class _Groups:
    """Union-find over identifier keys: keys seen on one work are one group."""

    def __init__(self) -> None:
        self._parent: dict[str, str] = {}

    def find(self, key: str) -> str:
        root = key
        while self._parent.setdefault(root, root) != root:
            root = self._parent[root]
        while key != root:  # path compression
            self._parent[key], key = root, self._parent[key]
        return root

    def join(self, keys: Sequence[str]) -> None:
        for key in keys[1:]:
            a, b = self.find(keys[0]), self.find(key)
            if a != b:
                self._parent[b] = a


def unify_works(lists: Sequence[Sequence[SearchHit]]) -> list[list[SearchHit]]:
    """``lists`` with every hit of one work (shared identifiers) at one address and one merged
    Work; hits without a scholarly work are left as they are. Order is kept."""
    groups = _Groups()
    for hits in lists:
        for hit in hits:
            groups.join(_keys(hit.work))
    merged: dict[str, Work] = {}
    for hits in lists:
        for hit in hits:
            keys = _keys(hit.work)
            if keys and hit.work is not None:
                root = groups.find(keys[0])
                merged[root] = merged[root].merged(hit.work) if root in merged else hit.work

    def one(hit: SearchHit) -> SearchHit:
        keys = _keys(hit.work)
        if not keys:
            return hit
        work = merged[groups.find(keys[0])]
        return replace(
            hit, title=work.title or hit.title, location=work.link, snippet=work.abstract[:_SNIPPET],
            text=work.abstract, work=work,
        )  # fmt: skip

    return [[one(hit) for hit in hits] for hits in lists]
