"""The critique's ``facts:`` block, computed exactly from a run record and its report.

:func:`measure_run` is the only place the block is built. Counts are of sources (one URL
or one file). What a record written before a measure existed cannot tell is left at its
most cautious reading: no per-sub-query counts (``sub_queries`` empty, ``unanswered`` 0),
``found`` equal to the sources read, ``capped_by_user`` false, and citations counted but
none judged weak (the text the writer received was not kept), and no claim facts. Every value is bounded to
what the critique schema allows, so a hand-edited record cannot make the file invalid.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from datetime import date, datetime

from ...ids import iso_date, parse_zoned_time
from ...measures import (
    CitationFacts,
    ClaimFacts,
    CritiqueFacts,
    RecencyFacts,
    SiteCounts,
    SiteFacts,
    SourceCounts,
    SubQueryFacts,
    is_unanswered,
)
from ...record import RunRecord, SourceSummary
from ...text.sanitize import sanitize
from .citation_support import MAX_WEAK_PAIRS, cited_sentence_count
from .site_names import corpus_ids, site_name

__all__ = ["measure_run", "MAX_COUNT", "MAX_SITES", "MAX_SUB_QUERIES"]

MAX_COUNT = 100_000
MAX_SITES = 50
MAX_SUB_QUERIES = 30
MAX_CORPORA = 20
_MAX_QUERY = 300


def _n(value: int) -> int:
    return max(0, min(int(value), MAX_COUNT))


def measure_run(record: RunRecord, report: str, *, now: datetime) -> CritiqueFacts:
    """The facts of the run in ``record`` whose final report is ``report``.

    Ages are counted from the run's start (``now`` for a record that has none).
    """
    sub_queries = _sub_queries(record)
    return CritiqueFacts(
        sources=_sources(record),
        sites=_sites(record),
        sub_queries=sub_queries,
        unanswered=sum(1 for q in sub_queries if is_unanswered(q, capped=record.capped_by_user)),
        citations=_citations(record, report),
        recency=_recency(record.kept_sources, parse_zoned_time(record.started) or now),
        corpora=corpus_ids([c.root for c in record.corpus])[:MAX_CORPORA],
        claims=_claims(record),
    )


def _sources(record: RunRecord) -> SourceCounts:
    fetched = record.considered_count
    found = record.found_count if record.found_count is not None else fetched
    return SourceCounts(
        found=_n(max(found, fetched)),
        fetched=_n(fetched),
        kept=_n(record.kept_count),
        dropped=_n(record.dropped_count),
        unscored=_n(record.unscored_count),
        cited=_n(record.cited_count),
        capped_by_user=record.capped_by_user,
    )


def _dropped_sources(record: RunRecord) -> list[SourceSummary]:
    """One entry per dropped source (never one that is also kept)."""
    kept = {s.key for s in record.kept_sources}
    seen: dict[str, SourceSummary] = {}
    for source in record.sources:
        if source.status == "dropped" and source.key not in kept:
            seen.setdefault(source.key, source)
    return list(seen.values())


def _sites(record: RunRecord) -> SiteFacts:
    roots = [c.root for c in record.corpus if c.root]
    kept, dropped, cited = Counter[str](), Counter[str](), Counter[str]()
    for source in record.kept_sources:
        name = site_name(source, roots)
        kept[name] += 1
        cited[name] += source.n is not None
    for source in _dropped_sources(record):
        dropped[site_name(source, roots)] += 1
    order = sorted(set(kept) | set(dropped), key=lambda s: (-kept[s], -cited[s], -dropped[s], s))
    total = sum(kept.values())
    top = order[0] if total else None
    return SiteFacts(
        distinct=_n(len(kept)),
        top=top,
        top_share=round(kept[top] / total, 2) if top is not None else 0.0,
        per_site=tuple(SiteCounts(s, _n(kept[s]), _n(dropped[s]), _n(cited[s])) for s in order[:MAX_SITES]),
        truncated=len(order) > MAX_SITES,  # else the kept counts add up to sources.kept
    )


def _final_plan(record: RunRecord) -> tuple[str, ...]:
    """The sub-queries of the run's last plan (all of them for a record without iterations)."""
    for iteration in reversed(record.iterations):
        if iteration.sub_queries:
            return iteration.sub_queries
    return record.sub_queries


def _sub_queries(record: RunRecord) -> tuple[SubQueryFacts, ...]:
    """Per sub-query of the last plan: sources its searches found, kept and cited (1-based index
    in that plan); empty when the record does not say which sub-query found which source."""
    if record.sub_query_counts is None:
        return ()
    index = {query: i for i, query in enumerate(record.sub_queries, start=1)}
    found = {c.index: c.found for c in record.sub_query_counts}
    fetched = {c.index: c.fetched for c in record.sub_query_counts}
    kept = record.kept_sources
    out = []
    for position, query in enumerate(_final_plan(record)[:MAX_SUB_QUERIES], start=1):
        i = index.get(query)
        mine = [s for s in kept if i is not None and i in s.sub_queries]
        out.append(
            SubQueryFacts(
                index=position,
                query=sanitize(query, single_line=True, max_chars=_MAX_QUERY),
                found=_n(found.get(i, 0) if i is not None else 0),
                kept=_n(len(mine)),
                cited=_n(sum(1 for s in mine if s.n is not None)),
                fetched=_n(fetched.get(i, 0) if i is not None else 0),
            )
        )
    return tuple(out)


def _citations(record: RunRecord, report: str) -> CitationFacts:
    support = record.citation_support
    if support is None:
        return CitationFacts(
            sentences=_n(cited_sentence_count(report)), weakly_supported=0, weakly_supported_share=0.0
        )
    sentences = _n(support.sentences)
    weak = min(_n(support.weakly_supported), sentences)
    pairs = tuple(
        p for p in support.weak_pairs if 1 <= p.sentence <= MAX_COUNT and 1 <= p.source <= MAX_COUNT
    )
    return CitationFacts(
        sentences=sentences,
        weakly_supported=weak,
        weakly_supported_share=round(weak / sentences, 2) if sentences else 0.0,
        weak_pairs=pairs[:MAX_WEAK_PAIRS],
    )


def _claims(record: RunRecord) -> ClaimFacts | None:
    """The claim check's counts (``checked`` 0 and no share when it did not run); None for a
    record from before the check, or of a run that reached no draft."""
    if record.claim_check is None:
        return None
    facts = record.claim_check.facts()
    counts = {k: _n(getattr(facts, k)) for k in ("checked", "supported", "partial", "unsupported")}
    return ClaimFacts(**counts, unsupported_share=facts.unsupported_share)


def _recency(kept: Sequence[SourceSummary], when: datetime) -> RecencyFacts:
    """Kept sources with a date: their median age in days at ``when``, the oldest and newest year."""
    dates = [d for d in (_date(s.published) for s in kept) if d is not None and d.year >= 1000]
    if not dates:
        return RecencyFacts()
    today = when.date()
    ages = [max(0, (today - d).days) for d in dates]
    return RecencyFacts(
        dated=_n(len(dates)),
        median_age_days=min(round(statistics.median(ages)), 1_000_000),
        oldest_year=min(d.year for d in dates),
        newest_year=max(d.year for d in dates),
    )


def _date(text: str | None) -> date | None:
    value = iso_date(text)
    return None if value is None else date.fromisoformat(value)
