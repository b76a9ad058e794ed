"""The ``facts:`` block of a critique file: what the program measured exactly about a run.

These are typed, frozen views of the block's content, built only from content that
passed the critique schema (see ``critique.schema.json``) and written back in the same
shape. Counts are counts of sources (one URL or one file). A site is a registrable host
name for web pages and the corpus-relative folder for local files. ``None`` in
:class:`RecencyFacts` means no kept source carried a date.

The types live at the package root because both the run record (which stores the citation
support the run measured) and memory (which writes the whole block) hold them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .shapes import Plain, shape

__all__ = [
    "SourceCounts",
    "SiteCounts",
    "SiteFacts",
    "SubQueryFacts",
    "WeakPair",
    "CitationFacts",
    "RecencyFacts",
    "ClaimFacts",
    "CritiqueFacts",
    "is_unanswered",
]


@dataclass(frozen=True)
class SourceCounts:
    """How many sources each step saw; ``capped_by_user``: the user's own cap cut the list."""

    found: int
    fetched: int
    kept: int
    dropped: int
    unscored: int
    cited: int
    capped_by_user: bool = False


@dataclass(frozen=True)
class SiteCounts:
    """One site's pages in the run: kept, dropped by relevance, and cited in the report."""

    site: str
    kept: int
    dropped: int
    cited: int


@dataclass(frozen=True)
class SiteFacts:
    """Distinct sites among the kept sources, the top one and its share, and every site's counts."""

    distinct: int
    top: str | None
    top_share: float
    per_site: tuple[SiteCounts, ...] = ()
    # per_site was cut at its limit (written only then); otherwise its kept counts add up
    truncated: bool = field(default=False, metadata=shape(optional=True))


@dataclass(frozen=True)
class SubQueryFacts:
    """One sub-query (1-based ``index`` in the final plan) and what it led to. ``fetched``:
    how many of its sources were read (None in files written before it was measured); a
    sub-query the user's cap left unread is not unanswered."""

    index: int
    query: str
    found: int
    kept: int
    cited: int
    fetched: int | None = field(default=None, metadata=shape(optional=True))


def is_unanswered(query: SubQueryFacts, *, capped: bool) -> bool:
    """A sub-query that kept nothing, unless the user's cap left it unread (nothing of what it
    found was fetched): a sub-query the cap skipped was never asked to answer."""
    if query.kept:
        return False
    return not (capped and query.fetched == 0 and query.found > 0)


@dataclass(frozen=True)
class WeakPair:
    """A weakly supported citation: the report's ``sentence`` (1-based) citing ``source`` (its number)."""

    sentence: int
    source: int


@dataclass(frozen=True)
class CitationFacts:
    """Cited sentences, and how many of them cite a source that does not state their key terms."""

    sentences: int
    weakly_supported: int
    weakly_supported_share: float
    weak_pairs: tuple[WeakPair, ...] = ()


@dataclass(frozen=True)
class RecencyFacts:
    """Kept sources that carry a date, their median age in days, and the oldest and newest year."""

    dated: int = 0
    median_age_days: int | None = None
    oldest_year: int | None = None
    newest_year: int | None = None


@dataclass(frozen=True)
class ClaimFacts(Plain):
    """The claim check: cited sentences checked against their passages, and the verdicts.
    ``unsupported_share`` is None when nothing was checked."""

    checked: int = 0
    supported: int = 0
    partial: int = 0
    unsupported: int = 0
    unsupported_share: float | None = None


@dataclass(frozen=True)
class CritiqueFacts(Plain):
    """The whole ``facts:`` block, in the file's key order. ``corpora``: the ids of the local corpora
    the run searched; ``claims``: the claim check (None when the run made none); both written only
    when present."""

    sources: SourceCounts
    sites: SiteFacts
    sub_queries: tuple[SubQueryFacts, ...]
    unanswered: int
    citations: CitationFacts
    recency: RecencyFacts
    corpora: tuple[str, ...] = field(default=(), metadata=shape(optional=True))
    claims: ClaimFacts | None = field(default=None, metadata=shape(optional=True))

    @property
    def open_sub_queries(self) -> int:
        """Unanswered sub-queries, not counting those the user's cap left unread (see
        :func:`is_unanswered`); the stored count where ``fetched`` was not measured."""
        if not self.sub_queries or any(q.fetched is None for q in self.sub_queries):
            return self.unanswered
        return sum(1 for q in self.sub_queries if is_unanswered(q, capped=self.sources.capped_by_user))

    @property
    def asked_sub_queries(self) -> int:
        """Sub-queries the run asked to answer: all but those the user's cap left unread."""
        if any(q.fetched is None for q in self.sub_queries):
            return len(self.sub_queries)
        capped = self.sources.capped_by_user
        return sum(1 for q in self.sub_queries if q.kept or not (capped and q.fetched == 0 and q.found > 0))

    def per_site_problem(self) -> str | None:
        """Why ``sites.per_site`` cannot be trusted: its kept counts must add up to ``sources.kept``
        unless the list was cut at its limit (``truncated``). None when they do."""
        per_site = self.sites.per_site
        if not per_site:
            return None
        total = sum(p.kept for p in per_site)
        if total == self.sources.kept or (self.sites.truncated and total <= self.sources.kept):
            return None
        return f"its kept counts add up to {total}, not to sources.kept ({self.sources.kept})"

    def without_per_site(self) -> CritiqueFacts:
        """The same facts with no per-site counts (what an inconsistent list loads as)."""
        sites = SiteFacts(self.sites.distinct, self.sites.top, self.sites.top_share)
        return CritiqueFacts(
            self.sources, sites, self.sub_queries, self.unanswered, self.citations, self.recency,
            self.corpora, self.claims,
        )  # fmt: skip

    @classmethod
    def from_valid(cls, data: Mapping[str, Any]) -> CritiqueFacts:
        """Build from a block that already passed the critique schema."""
        s, st, c, r = data["sources"], data["sites"], data["citations"], data["recency"]
        return cls(
            sources=SourceCounts(**{k: int(s[k]) for k in _COUNT_KEYS}, capped_by_user=bool(s["capped_by_user"])),
            sites=SiteFacts(
                distinct=int(st["distinct"]),
                top=st["top"],
                top_share=float(st["top_share"]),
                per_site=tuple(
                    SiteCounts(p["site"], int(p["kept"]), int(p["dropped"]), int(p["cited"])) for p in st["per_site"]
                ),
                truncated=bool(st.get("truncated", False)),
            ),
            sub_queries=tuple(
                SubQueryFacts(
                    int(q["index"]), q["query"], int(q["found"]), int(q["kept"]), int(q["cited"]),
                    fetched=_int_or_none(q.get("fetched")),
                )
                for q in data["sub_queries"]
            ),
            unanswered=int(data["unanswered"]),
            citations=CitationFacts(
                sentences=int(c["sentences"]),
                weakly_supported=int(c["weakly_supported"]),
                weakly_supported_share=float(c["weakly_supported_share"]),
                weak_pairs=tuple(WeakPair(int(p["sentence"]), int(p["source"])) for p in c["weak_pairs"]),
            ),
            recency=RecencyFacts(
                dated=int(r["dated"]),
                median_age_days=_int_or_none(r["median_age_days"]),
                oldest_year=_int_or_none(r["oldest_year"]),
                newest_year=_int_or_none(r["newest_year"]),
            ),
            corpora=tuple(data.get("corpora", ())),
            claims=_claims_from(data.get("claims")),
        )


_COUNT_KEYS = ("found", "fetched", "kept", "dropped", "unscored", "cited")


def _claims_from(data: Mapping[str, Any] | None) -> ClaimFacts | None:
    if data is None:
        return None
    share = data["unsupported_share"]
    counts = {k: int(data[k]) for k in ("checked", "supported", "partial", "unsupported")}
    return ClaimFacts(**counts, unsupported_share=None if share is None else float(share))


def _int_or_none(value: Any) -> int | None:
    return None if value is None else int(value)
