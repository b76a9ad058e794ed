"""The run record's light parts: a source as the record describes it, an iteration, a corpus
indexed, a sub-query dropped, a fetch that failed.

Kept apart from :mod:`.types` (the record itself, which holds the skeptic's report and the claim
check): a run keeps these as it goes (:mod:`research_agent.run.ledger`,
:mod:`research_agent.run.assembly`) from before its first model call, which must not wait for
the skeptic's and the claim check's modules to load.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from ..fetch.urls import normalize_url, registrable_domain
from ..shapes import Plain, shape
from ..stages.gate import GateDecision

__all__ = [
    "RUN_RECORD_VERSION", "SourceStatus", "IterationDecision", "SourceSummary", "SubQueryCount", "Iteration",
    "CorpusRecord", "FetchFailure", "DroppedSubQuery",
]  # fmt: skip

RUN_RECORD_VERSION = 2


# What became of a source at the relevance gate, and what a pass of writing decided.
SourceStatus = Literal["kept", "dropped", "unscored"]
IterationDecision = Literal["replan", "revise", "proceed", "give_up"]


@dataclass(frozen=True)
class SourceSummary(Plain):
    """One source as the result and the run record describe it."""

    n: int | None  # its number in the report's Sources list; None when not cited
    title: str
    location: str
    site: str
    provider: str
    score: int | None
    reason: str
    status: SourceStatus
    snippet_only: bool
    published: str | None = None  # YYYY-MM-DD, when the page or file gave a date
    sub_queries: tuple[int, ...] = ()  # 1-based indices into the record's sub_queries that found it
    # a scholarly work's (scheme, id): doi, arxiv, pmid...; written as a mapping, only when there are some
    identifiers: tuple[tuple[str, str], ...] = field(default=(), metadata=shape(optional=True, mapping=True))

    @property
    def key(self) -> str:
        """Its identity: the normalised URL, or the path as written."""
        location = self.location or self.title
        return normalize_url(location) if "://" in location else location

    @property
    def site_key(self) -> str:
        """Its site, lowercased; from the location when the record names none."""
        if self.site.strip():
            return self.site.strip().lower()
        return registrable_domain(self.location) if "://" in self.location else self.location


@dataclass(frozen=True)
class SubQueryCount(Plain):
    """What one sub-query (``index``: 1-based in the record's ``sub_queries``) led to:
    distinct sources its searches ``found``, and how many of them the run read (``fetched``)."""

    index: int
    found: int
    fetched: int


@dataclass(frozen=True)
class Iteration(Plain):
    """One pass through plan -> sources -> draft -> review, and what was decided.

    ``scored_count`` and ``kept_count`` count the run's sources so far; ``critical_count``
    and ``warning_count`` the review's issues.
    """

    plan: int
    revision: int
    sub_queries: tuple[str, ...]
    gate: GateDecision
    scored_count: int
    kept_count: int
    viability: int | None
    critical_count: int
    warning_count: int
    decision: IterationDecision
    reason: str
    tokens: int


@dataclass(frozen=True)
class CorpusRecord(Plain):
    """What indexing one corpus folder did before the run."""

    root: str
    documents: int
    indexed: int
    unchanged: int
    removed: int
    skipped: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class FetchFailure:
    location: str
    reason: str


@dataclass(frozen=True)
class DroppedSubQuery(Plain):
    """A sub-query of plan ``plan`` that was not searched: it was no search query (``reason``)."""

    plan: int
    query: str
    reason: str
