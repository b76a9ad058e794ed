"""Render a report draft to markdown, and write reports and run records atomically."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from .fsutil import atomic_write_text
from .sanitize import sanitize
from .sources import Source
from .stages.skeptic import SkepticReport
from .stages.synthesize import ReportDraft

__all__ = [
    "ReportMeta",
    "render_report",
    "render_insufficient",
    "renumber_citations",
    "write_yaml",
    "yaml_text",
    "CITATION",
]

# [3] or [2, 5] but not a markdown link label like [3](http://...)
CITATION = re.compile(r"\[(\d{1,3}(?:\s*,\s*\d{1,3})*)\](?!\()")


@dataclass(frozen=True)
class ReportMeta:
    """What the front matter says about a run."""

    query: str
    mode: str
    date: str
    model: str
    gate_decision: str

    def front_matter(self) -> str:
        data = {
            "query": self.query,
            "mode": self.mode,
            "date": self.date,
            "model": self.model,
            "gate_decision": self.gate_decision,
        }
        return "---\n" + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=1000) + "---\n"


def renumber_citations(texts: Sequence[str], source_count: int) -> tuple[list[str], list[int]]:
    """Renumber citations by first appearance; drop numbers with no source.

    Returns the rewritten texts and, for each new number (1-based, in order), the old
    1-based number it stands for. Sources never cited are thereby dropped.
    """
    order: list[int] = []
    for text in texts:
        for match in CITATION.finditer(text):
            for part in match.group(1).split(","):
                old = int(part)
                if 1 <= old <= source_count and old not in order:
                    order.append(old)
    new_of = {old: i + 1 for i, old in enumerate(order)}

    def replace(match: re.Match[str]) -> str:
        numbers = []
        for part in match.group(1).split(","):
            new = new_of.get(int(part))
            if new is not None and new not in numbers:
                numbers.append(new)
        return f"[{', '.join(map(str, numbers))}]" if numbers else ""

    rewritten = [re.sub(r"[ \t]+([.,;:])", r"\1", CITATION.sub(replace, t)) for t in texts]
    return rewritten, order


def _source_line(n: int, source: Source) -> str:
    title = sanitize(source.title, max_chars=200, single_line=True) or source.location
    note = " (search snippet only)" if source.snippet_only else ""
    return f"{n}. {title} — {source.location}{note}"


def _adversarial(skeptic: SkepticReport | None, mode: str) -> str:
    if skeptic is None:
        return f"The skeptic pass is skipped in {mode} mode; claims were not independently challenged."
    lines = []
    if skeptic.viability is not None:
        lines.append(f"Viability of the answer from these sources: {skeptic.viability}/100.")
    else:
        lines.append("The skeptic gave no viability score.")
    if not skeptic.findings:
        lines.append("\nThe skeptic found no problems with the draft.")
    for finding in skeptic.findings:
        lines.append(
            f"- **{finding.severity}** ({finding.lens}): \u201c{finding.claim}\u201d. {finding.reason}"
            + (f" Response: {finding.fix}" if finding.fix else "")
        )
    return "\n".join(lines)


def render_report(
    draft: ReportDraft,
    sources: Sequence[Source],
    *,
    meta: ReportMeta,
    skeptic: SkepticReport | None,
    limitations: Sequence[str] = (),
    lessons_markdown: str = "",
    final: bool = True,
) -> tuple[str, tuple[Source, ...]]:
    """Render ``draft`` to markdown; return it with the sources it cites, in citation order.

    With ``final`` the citations are renumbered so every ``[n]`` resolves to one entry
    of Sources and no entry is unused. Without it (a draft for review), numbering is
    left exactly as the writer gave it, so lint can see citations that resolve nowhere.
    """
    texts = [draft.executive_summary, *draft.key_findings, *(body for _, body in draft.sections), *draft.limitations]
    if final:
        texts, order = renumber_citations(texts, len(sources))
        cited = tuple(sources[i - 1] for i in order)
    else:
        cited = tuple(sources)
    summary, rest = texts[0], texts[1:]
    findings = rest[: len(draft.key_findings)]
    bodies = rest[len(draft.key_findings) : len(draft.key_findings) + len(draft.sections)]
    draft_limits = rest[len(draft.key_findings) + len(draft.sections) :]

    parts = [meta.front_matter(), f"# {draft.title}\n", "## Executive Summary\n", summary.strip() + "\n"]
    parts.append("## Key Findings\n")
    parts.append("\n".join(f"- {f.strip()}" for f in findings) + "\n")
    for (heading, _), body in zip(draft.sections, bodies, strict=True):
        parts.append(f"## {heading}\n")
        parts.append(body.strip() + "\n")
    parts.append("## Adversarial Analysis\n")
    parts.append(_adversarial(skeptic, meta.mode) + "\n")
    parts.append("## Limitations & Gaps\n")
    all_limits = [x.strip() for x in (*draft_limits, *limitations) if x.strip()]
    parts.append(("\n".join(f"- {x}" for x in all_limits) if all_limits else "- None noted by the writer.") + "\n")
    parts.append("## Sources\n")
    if cited:
        parts.append("\n".join(_source_line(n, s) for n, s in enumerate(cited, start=1)) + "\n")
    else:
        parts.append("No source was cited.\n")
    if lessons_markdown.strip():
        parts.append(lessons_markdown.strip() + "\n")
    return "\n".join(parts), cited


def render_insufficient(
    *,
    meta: ReportMeta,
    reason: str,
    sub_queries: Sequence[str],
    examined: Sequence[tuple[Source, int | None, str]],
    failures: Sequence[str] = (),
    lessons_markdown: str = "",
) -> str:
    """An honest short report for a run whose sources cannot support an answer."""
    verdict = "Not enough data" if meta.gate_decision == "insufficient_data" else "No relevant findings"
    parts = [
        meta.front_matter(),
        f"# {verdict}: {sanitize(meta.query, max_chars=160, single_line=True)}\n",
        "## Executive Summary\n",
        "This run could not find sources that support an answer, so it does not offer one. "
        f"Reason: {reason}.\n",
        "## What Was Searched\n",
        "\n".join(f"- {q}" for q in sub_queries) + "\n" if sub_queries else "- No search was run.\n",
        "## Sources Examined\n",
    ]
    if examined:
        lines = []
        for source, score, why in examined:
            shown = "unscored" if score is None else f"relevance {score}/5"
            lines.append(f"- {sanitize(source.title, max_chars=160, single_line=True)} — {source.location} ({shown}: {why})")
        parts.append("\n".join(lines) + "\n")
    else:
        parts.append("- None could be read.\n")
    if failures:
        parts.append("## Search Problems\n")
        parts.append("\n".join(f"- {f}" for f in failures) + "\n")
    parts.append("## Limitations & Gaps\n")
    parts.append(
        "- The question may need sources this run could not reach: try other search providers, "
        "a broader corpus, or a more specific question.\n"
    )
    if lessons_markdown.strip():
        parts.append(lessons_markdown.strip() + "\n")
    return "\n".join(parts)


def yaml_text(data: dict[str, Any]) -> str:
    """``data`` as human-readable YAML (the run record's format)."""
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, default_flow_style=False, width=100)


def write_yaml(path: Path, data: dict[str, Any]) -> Path:
    """Write ``data`` as human-readable YAML, atomically."""
    return atomic_write_text(path, yaml_text(data))
