"""What the program knows exactly about a run and its report (:class:`RunFacts`).

The facts come from the typed run record and the report text, never from a model: the
critique file stores their measured part as its ``facts:`` block
(:class:`~research_agent.measures.CritiqueFacts`, built by
:func:`~research_agent.memory.critique.measured.measure_run`), the critic sees all of them as data,
and the tags they justify are added to the critic's own.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from ...domains import normalize_domain
from ...measures import CritiqueFacts
from ...record import RunRecord
from ...stages.skeptic import SkepticFinding
from ...text.report_body import body_blocks
from ...text.sanitize import sanitize
from .measured import measure_run

__all__ = ["RunFacts", "compute_facts", "body_blocks"]

_CITATION = re.compile(r"\[(\d{1,3}(?:\s*,\s*\d{1,3})*)\]")
_SEVERITY_ORDER = {"critical": 0, "concern": 1, "observation": 2}
_SHOWN_SITES = 12
_SHOWN_SUB_QUERIES = 10


@dataclass(frozen=True)
class RunFacts:
    """What the program knows exactly about a run and its report.

    ``measured`` is the critique's ``facts:`` block; ``support_measured`` is False for a
    record written before citation support was measured (its weak count then says nothing).
    """

    query: str
    domain: str
    mode: str
    gate_decision: str
    measured: CritiqueFacts
    support_measured: bool
    snippet_only: int  # kept sources read from their search snippet only
    paragraphs: int
    cited_paragraphs: int
    citations: int
    words: int
    viability: int | None
    findings: tuple[tuple[str, int], ...]  # (severity, count)

    def tags(self) -> tuple[str, ...]:
        """Tags the facts alone justify. ``few_sources`` is not among them when the user's own
        source limit cut the list: the shortfall was asked for."""
        m = self.measured
        kept, sites = m.sources.kept, m.sites
        out = []
        if kept and (sites.distinct == 1 or (kept >= 3 and sites.top_share >= 0.6)):
            out.append("single_site")
        if kept < 3 and not m.sources.capped_by_user:
            out.append("few_sources")
        if len(m.sub_queries) >= 2 and m.unanswered * 2 > len(m.sub_queries):
            out.append("unanswered_sub_queries")
        if kept >= 2 and self.snippet_only * 2 > kept:
            out.append("snippet_only_sources")
        if self.support_measured and m.citations.sentences >= 4 and m.citations.weakly_supported_share > 0.5:
            out.append("unsupported_claims")
        return tuple(out)

    def as_text(self) -> str:
        """The facts as plain lines (sanitized), for the critique prompt."""
        lines = [f"gate decision: {self.gate_decision}", *self._source_lines(), *self._sub_query_lines()]
        lines += [*self._citation_lines(), self._recency_line()]
        findings = ", ".join(f"{count} {severity}" for severity, count in self.findings) or "none"
        lines += [
            f"report words: {self.words}; paragraphs: {self.paragraphs}, with a citation: {self.cited_paragraphs}",
            f"skeptic viability (0-100): {'n/a' if self.viability is None else self.viability}; findings: {findings}",
        ]
        return "\n".join(sanitize(line, single_line=True, max_chars=600) for line in lines)

    def _source_lines(self) -> list[str]:
        s, st = self.measured.sources, self.measured.sites
        cap = "yes: the user's own source limit cut the list" if s.capped_by_user else "no"
        lines = [
            f"sources found by the searches: {s.found}; read: {s.fetched}; kept: {s.kept}; dropped: {s.dropped}; "
            f"unscored: {s.unscored}; cited in the report: {s.cited}; kept but read from a snippet only: "
            f"{self.snippet_only}",
            f"capped by the user: {cap}",
            f"distinct sites among kept sources: {st.distinct}"
            + (f"; largest: {st.top} with {round(st.top_share * 100)}% of kept sources" if st.top else ""),
        ]
        lines += [
            f"site {p.site}: kept {p.kept}, dropped {p.dropped}, cited {p.cited}"
            for p in st.per_site[:_SHOWN_SITES]
        ]
        return lines

    def _sub_query_lines(self) -> list[str]:
        m = self.measured
        if not m.sub_queries:
            return ["sub-queries: which sub-query found which source was not recorded for this run"]
        lines = [f"sub-queries: {len(m.sub_queries)}; with no kept source (unanswered): {m.unanswered}"]
        lines += [
            f"sub-query {q.index} (found {q.found}, kept {q.kept}, cited {q.cited}): {q.query}"
            for q in m.sub_queries[:_SHOWN_SUB_QUERIES]
        ]
        return lines

    def _citation_lines(self) -> list[str]:
        c = self.measured.citations
        if not self.support_measured:
            return [
                f"cited sentences: {c.sentences}; support in the cited sources: not measured for this run"
            ]
        pairs = ", ".join(f"sentence {p.sentence} citing [{p.source}]" for p in c.weak_pairs) or "none"
        return [
            f"cited sentences: {c.sentences}; weakly supported (most key terms absent from the cited source): "
            f"{c.weakly_supported} ({round(c.weakly_supported_share * 100)}%); examples: {pairs}",
            *self._claim_lines(),
        ]

    def _claim_lines(self) -> list[str]:
        claims = self.measured.claims
        if claims is None:
            return []
        if not claims.checked:
            return ["claim check (cited sentences against their passages, by the model): none checked"]
        return [
            f"claim check (cited sentences against their passages, by the model): {claims.checked} checked; "
            f"{claims.supported} supported, {claims.partial} partly, {claims.unsupported} unsupported "
            "(each unsupported one removed, re-cited or marked [Disputed] before the report went out)"
        ]

    def _recency_line(self) -> str:
        r = self.measured.recency
        if not r.dated:
            return "source dates: no kept source carries a date"
        return (
            f"source dates: {r.dated} kept source(s) dated; median age {r.median_age_days} days; "
            f"years {r.oldest_year}-{r.newest_year}"
        )


def compute_facts(record: RunRecord, report: str, *, now: datetime | None = None) -> RunFacts:
    """Facts about a run from its record and report text; ages are counted from the run's
    start (``now``, default the current time, for a record without one)."""
    blocks = body_blocks(report)
    cited_numbers = [[int(n) for group in _CITATION.findall(b) for n in group.split(",")] for b in blocks]
    return RunFacts(
        query=record.query,
        domain=normalize_domain(record.domain),
        mode=record.mode,
        gate_decision=record.gate_decision,
        measured=measure_run(record, report, now=now or datetime.now(UTC)),
        support_measured=record.citation_support is not None,
        snippet_only=sum(1 for s in record.kept_sources if s.snippet_only),
        paragraphs=len(blocks),
        cited_paragraphs=sum(1 for numbers in cited_numbers if numbers),
        citations=sum(len(numbers) for numbers in cited_numbers),
        words=sum(len(b.split()) for b in blocks),
        viability=record.skeptic.viability,
        findings=_findings_by_severity(record.skeptic.findings),
    )


def _findings_by_severity(findings: Sequence[SkepticFinding]) -> tuple[tuple[str, int], ...]:
    severities = Counter(str(f.severity) for f in findings if f.severity)
    return tuple(sorted(severities.items(), key=lambda kv: (_SEVERITY_ORDER.get(kv[0], 3), kv[0])))
