"""What the program knows exactly about a run and its report (:class:`RunFacts`).

The facts come from the typed run record and the report text, never from a model: the
critique's judge sees them as data, and the tags they justify are added to its own.
Counts of sources are the run record's (one source is one URL or one file).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from ..domains import normalize_domain
from ..record import RunRecord, SourceSummary
from ..stages.skeptic import SkepticFinding
from ..text.passages import tokenize
from ..text.sanitize import sanitize

__all__ = ["RunFacts", "compute_facts"]

_CITATION = re.compile(r"\[(\d{1,3}(?:\s*,\s*\d{1,3})*)\]")
_SKIP_SECTIONS = {"sources", "lessons applied"}
_SEVERITY_ORDER = {"critical": 0, "concern": 1, "observation": 2}


@dataclass(frozen=True)
class RunFacts:
    """What the program knows exactly about a run and its report."""

    query: str
    domain: str
    mode: str
    gate_decision: str
    considered: int
    kept: int
    dropped: int
    unscored: int
    snippet_only: int
    sites: tuple[tuple[str, int], ...]  # (registrable site, kept sources from it), most first
    cited_sources: int
    paragraphs: int
    cited_paragraphs: int
    citations: int
    words: int
    viability: int | None
    findings: tuple[tuple[str, int], ...]  # (severity, count)
    sub_queries: tuple[str, ...]
    unanswered: tuple[str, ...]

    @property
    def distinct_sites(self) -> int:
        return len(self.sites)

    @property
    def top_site_share(self) -> float:
        return self.sites[0][1] / self.kept if self.sites and self.kept else 0.0

    @property
    def answered(self) -> int:
        return len(self.sub_queries) - len(self.unanswered)

    @property
    def citations_per_paragraph(self) -> float:
        return round(self.citations / self.paragraphs, 2) if self.paragraphs else 0.0

    def tags(self) -> tuple[str, ...]:
        """Tags the facts alone justify."""
        out = []
        if self.kept and (self.distinct_sites == 1 or (self.kept >= 3 and self.top_site_share >= 0.6)):
            out.append("single_site")
        if self.kept < 3:
            out.append("few_sources")
        if len(self.sub_queries) >= 2 and self.answered * 2 < len(self.sub_queries):
            out.append("unanswered_sub_queries")
        if self.kept >= 2 and self.snippet_only * 2 > self.kept:
            out.append("snippet_only_sources")
        return tuple(out)

    def as_text(self) -> str:
        """The facts as plain lines (sanitized), for the critique prompt."""
        sites = ", ".join(f"{site} x{count}" if count > 1 else site for site, count in self.sites[:12])
        findings = ", ".join(f"{count} {severity}" for severity, count in self.findings) or "none"
        lines = [
            f"gate decision: {self.gate_decision}",
            f"sources considered: {self.considered}; kept (distinct): {self.kept}; dropped: {self.dropped}; "
            f"unscored: {self.unscored}; read from snippet only: {self.snippet_only}",
            f"distinct sites among kept sources: {self.distinct_sites}" + (f" ({sites})" if sites else ""),
            f"largest share of kept sources from one site: {round(self.top_site_share * 100)}%",
            f"kept sources cited in the report: {self.cited_sources} of {self.kept}",
            f"paragraphs: {self.paragraphs}; with at least one citation: {self.cited_paragraphs}; "
            f"citations per paragraph: {self.citations_per_paragraph}",
            f"report words: {self.words}",
            f"skeptic viability (0-100): {'n/a' if self.viability is None else self.viability}; findings: {findings}",
            f"sub-queries: {len(self.sub_queries)}; answered in the report (by term overlap): {self.answered}",
        ]
        lines += [f"unanswered sub-query: {q}" for q in self.unanswered[:6]]
        return "\n".join(sanitize(line, single_line=True, max_chars=600) for line in lines)


@dataclass(frozen=True)
class _Citations:
    """The citations in the report's body paragraphs."""

    numbers: frozenset[int]  # the source numbers cited
    total: int
    paragraphs: int  # paragraphs with at least one citation


def compute_facts(record: RunRecord, report: str) -> RunFacts:
    """Facts about a run from its record and report text."""
    kept = record.kept_sources
    blocks = body_blocks(report)
    body = "\n".join(blocks)
    cited = _citations(blocks)
    kept_numbers = {s.n for s in kept if s.n is not None}
    return RunFacts(
        query=record.query,
        domain=normalize_domain(record.domain),
        mode=record.mode,
        gate_decision=record.gate_decision,
        considered=record.considered_count,
        kept=record.kept_count,
        dropped=record.dropped_count,
        unscored=record.unscored_count,
        snippet_only=sum(1 for s in kept if s.snippet_only),
        sites=_sites(kept),
        cited_sources=len(cited.numbers & kept_numbers) if kept_numbers else len(cited.numbers),
        paragraphs=len(blocks),
        cited_paragraphs=cited.paragraphs,
        citations=cited.total,
        words=len(body.split()),
        viability=record.skeptic.viability,
        findings=_findings_by_severity(record.skeptic.findings),
        sub_queries=record.sub_queries,
        unanswered=_unanswered(record.sub_queries, body),
    )


def body_blocks(report: str) -> list[str]:
    """Paragraph-like blocks of the report body, without headings, Sources or Lessons Applied."""
    blocks: list[str] = []
    skipping = False
    for block in re.split(r"\n\s*\n", _strip_front_matter(report)):
        kept_lines: list[str] = []
        for line in block.strip().splitlines():
            if line.lstrip().startswith("#"):
                skipping = line.strip().lstrip("#").strip().lower() in _SKIP_SECTIONS
                continue
            if not skipping and line.strip():
                kept_lines.append(line)
        if kept_lines:
            blocks.append("\n".join(kept_lines))
    return blocks


def _strip_front_matter(text: str) -> str:
    if text.startswith("---\n"):
        end = text.find("\n---", 4)
        if end != -1:
            return text[end + 4 :].lstrip("\n")
    return text


def _citations(blocks: Sequence[str]) -> _Citations:
    numbers: set[int] = set()
    total = paragraphs = 0
    for block in blocks:
        found = [int(n) for group in _CITATION.findall(block) for n in group.split(",")]
        total += len(found)
        paragraphs += bool(found)
        numbers.update(found)
    return _Citations(frozenset(numbers), total, paragraphs)


def _sites(kept: Sequence[SourceSummary]) -> tuple[tuple[str, int], ...]:
    """(site, kept sources from it), most first, then by name."""
    counts = Counter(s.site_key for s in kept)
    return tuple(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def _findings_by_severity(findings: Sequence[SkepticFinding]) -> tuple[tuple[str, int], ...]:
    severities = Counter(str(f.severity) for f in findings if f.severity)
    return tuple(sorted(severities.items(), key=lambda kv: (_SEVERITY_ORDER.get(kv[0], 3), kv[0])))


def _unanswered(sub_queries: Sequence[str], body: str) -> tuple[str, ...]:
    """Sub-queries whose longer terms mostly do not appear in the report body."""
    body_terms = set(tokenize(body))
    unanswered = []
    for query in sub_queries:
        terms = {t for t in tokenize(query) if len(t) > 2}
        if terms and len(terms & body_terms) / len(terms) < 0.5:
            unanswered.append(query)
    return tuple(unanswered)
