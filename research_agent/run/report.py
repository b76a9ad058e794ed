"""Render a report draft to markdown: the drafts the review reads, the final report, and the short
report of a run that found too little."""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import yaml

from ..review.markdown import ADVERSARIAL_TITLE, LIMITATIONS_TITLE, is_reserved_heading
from ..sources import Source
from ..stages.skeptic import SkepticReport
from ..stages.writing.synthesize import ReportDraft
from ..text.citations import CITATION, REMOVED_MARK, renumber, strip_citations
from ..text.controls import one_line
from ..text.mdsafe import code_span, defang_markdown, location_markdown, plain_text, plain_text_with_citations

__all__ = [
    "ReportMeta",
    "RenderedReport",
    "compose_report",
    "render_insufficient",
    "renumber_citations",
    "published_lines",
    "CITATION",
]


@dataclass(frozen=True)
class ReportMeta:
    """What the front matter says about a run. ``review`` is ``rejected`` for a report the
    tool's own review rejected (``open_critical`` issues left), else empty (no key written)."""

    query: str
    mode: str
    date: str
    model: str
    gate_decision: str
    id: str = ""  # the run's id: a report copied elsewhere still finds its run record and passages
    review: str = ""
    open_critical: int = 0

    def front_matter(self) -> str:
        """YAML front matter; the query on one line (a line "---" in it would end the block)."""
        data: dict[str, object] = {
            **({"id": self.id} if self.id else {}),
            "query": one_line(self.query),
            "mode": self.mode,
            "date": self.date,
            "model": self.model,
            "gate_decision": self.gate_decision,
        }
        if self.review:
            data.update(review=self.review, open_critical=self.open_critical)
        return "---\n" + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=1000) + "---\n"


def renumber_citations(texts: Sequence[str], source_count: int) -> tuple[list[str], list[int]]:
    """Renumber citations by first appearance; drop numbers with no source.

    Returns the rewritten texts and, for each new number (1-based, in order), the old
    1-based number it stands for. Sources never cited are thereby dropped.
    """
    result = renumber(texts, source_count)
    return list(result.texts), list(result.order)


@dataclass(frozen=True)
class RenderedReport:
    """A rendered report, the sources its Sources list holds (in order), and the number of
    citations that resolved to no source and were removed."""

    markdown: str
    cited: tuple[Source, ...]
    citations_removed: int = 0


_REMOVED_NOTE = (
    "Some citations pointed to sources that do not exist and were removed; a sentence left "
    f"without any citation by that is marked \u201c{REMOVED_MARK}\u201d."
)


def _source_name(source: Source, *, max_chars: int = 200) -> str:
    """How Sources names a source, inert: its title; a scholarly work as researchers cite it
    ("Author et al. (Year). Title. Venue.")."""
    name = source.work.citation if source.work is not None else source.title
    return plain_text(name, max_chars=max_chars + (200 if source.work is not None else 0)) or "Untitled source"


def _source_line(n: int, source: Source) -> str:
    note = " (search snippet only)" if source.snippet_only else ""
    return f"{n}. {_source_name(source)} \u2014 {location_markdown(source.location)}{note}"


def _viability_line(skeptic: SkepticReport) -> str:
    """What the report says of the skeptic's viability: the score, why it is held lower or set
    aside, or that there is none (none given, or one that was no whole number from 0 to 100)."""
    if skeptic.unfounded:  # a low score with no finding behind it: never beside "found no problems"
        return (f"The skeptic rated viability {skeptic.viability}/100 without naming a problem behind the "
                "score, so the score was set aside.")  # fmt: skip
    if skeptic.viability is not None and skeptic.said is not None:
        return (f"Viability of the answer from these sources: {skeptic.viability}/100 (held there while critical "
                f"issues stay open; the skeptic said {skeptic.said}).")  # fmt: skip
    if skeptic.viability is not None:
        return f"Viability of the answer from these sources: {skeptic.viability}/100."
    if skeptic.unusable:
        return (f"The skeptic's viability score was unusable ({plain_text(skeptic.unusable)} is no whole number "
                "from 0 to 100), so the answer is unscored.")  # fmt: skip
    return "The skeptic gave no viability score."


def _adversarial_lines(skeptic: SkepticReport | None, mode: str) -> list[str]:
    """The Adversarial Analysis, one text per line; the skeptic's citations stay citations."""
    if skeptic is None:
        return [f"The skeptic pass is skipped in {mode} mode; claims were not independently challenged."]
    if skeptic.unavailable:
        return ["The skeptic gave no usable answer; claims were not independently challenged."]
    lines = [_viability_line(skeptic)]
    if skeptic.dropped:
        lines += ["", f"{skeptic.dropped} of the skeptic's findings said nothing readable (debris) and are not shown."]
    elif not skeptic.findings and not skeptic.unfounded:
        lines += ["", "The skeptic found no problems with the draft."]
    for finding in skeptic.findings:
        claim = plain_text_with_citations(finding.claim, max_chars=600)
        reason = plain_text_with_citations(finding.reason, max_chars=600)
        fix = plain_text_with_citations(finding.fix, max_chars=600)
        lines.append(
            f"- **{plain_text(finding.severity)}** ({plain_text(finding.lens)}): \u201c{claim}\u201d. {reason}"
            + (f" Response: {fix}" if fix else "")
        )
    return lines


def _heading(text: str, fallback: str, *, max_chars: int = 150) -> str:
    """A writer's heading as inert text that the lint never mistakes for Sources."""
    text = one_line(strip_citations(text))
    shown = plain_text(text, max_chars=max_chars) or fallback
    return f"{shown} (notes)" if is_reserved_heading(text) else shown


def _title(query: str) -> str:
    """The report's H1: the question as asked, on one line and inert (never the writer's own title)."""
    return plain_text(one_line(query), max_chars=200) or "Research report"


def _split(texts: Sequence[str], sizes: Sequence[int]) -> list[list[str]]:
    groups, start = [], 0
    for size in sizes:
        groups.append(list(texts[start : start + size]))
        start += size
    return groups


def compose_report(
    draft: ReportDraft,
    sources: Sequence[Source],
    *,
    meta: ReportMeta,
    skeptic: SkepticReport | None,
    limitations: Sequence[str] = (),
    lessons_markdown: str = "",
    final: bool = True,
    notice: str = "",
) -> RenderedReport:
    """Render ``draft`` to markdown with every outside string made inert; its H1 is the question.

    ``notice`` is the program's own markdown, shown first under the title; a writer's limitation, once.

    With ``final`` every part (summary, findings, bodies, the skeptic's findings, the
    writer's and the given ``limitations``) is renumbered through one map: Sources lists
    exactly the sources cited above it, in order of first citation, and a citation that
    resolves to no source is removed (counted in ``citations_removed``). Without it (a
    draft for review) the numbering stays as the writer gave it and Sources lists all
    ``sources``, so lint can see citations that resolve nowhere.
    """
    groups = [
        [defang_markdown(draft.executive_summary)],
        [defang_markdown(one_line(f)) for f in draft.key_findings],
        [defang_markdown(body) for _, body in draft.sections],
        _adversarial_lines(skeptic, meta.mode),
        [defang_markdown(x) for x in dict.fromkeys(one_line(x) for x in draft.limitations if x.strip())]
        + [plain_text_with_citations(x) for x in limitations if x.strip()],
    ]
    flat = [text for group in groups for text in group]
    removed = 0
    if final:
        result = renumber(flat, len(sources))
        flat, removed = list(result.texts), result.removed
        cited = tuple(sources[i - 1] for i in result.order)
    else:
        cited = tuple(sources)
    (summary,), findings, bodies, adversarial, limits = _split(flat, [len(g) for g in groups])
    if removed:
        limits.append(_REMOVED_NOTE)

    parts = [meta.front_matter(), f"# {_title(meta.query)}\n"]
    if notice.strip():
        parts.append(notice.strip() + "\n")
    parts += ["## Executive Summary\n", summary.strip() + "\n", "## Key Findings\n"]
    parts.append("\n".join(f"- {f.strip()}" for f in findings) + "\n")
    for i, ((heading, _), body) in enumerate(zip(draft.sections, bodies, strict=True), start=1):
        parts += [f"## {_heading(heading, f'Section {i}')}\n", body.strip() + "\n"]
    parts += [f"## {ADVERSARIAL_TITLE}\n", "\n".join(adversarial) + "\n", f"## {LIMITATIONS_TITLE}\n"]
    shown_limits = [x.strip() for x in limits if x.strip()]
    parts.append(("\n".join(f"- {x}" for x in shown_limits) if shown_limits else "- None noted by the writer.") + "\n")
    parts.append("## Sources\n")
    if cited:
        parts.append("\n".join(_source_line(n, s) for n, s in enumerate(cited, start=1)) + "\n")
    else:
        parts.append("No source was cited.\n")
    if lessons_markdown.strip():
        parts.append(lessons_markdown.strip() + "\n")
    return RenderedReport("\n".join(parts), cited, removed)


def published_lines(reviewed: str, published: str) -> Callable[[int], int]:
    """A line of ``reviewed`` (a draft as the review read it) -> the same line of ``published``
    (the final report of that draft), found under the same heading: both have the same title and
    headings in the same order; what lies between them differs only in what comes before."""

    def anchors(markdown: str) -> list[int]:
        return [n for n, line in enumerate(markdown.split("\n"), start=1) if line.startswith(("# ", "## "))]

    before, after = anchors(reviewed), anchors(published)

    def moved(line: int) -> int:
        k = min(max(0, bisect.bisect_right(before, line) - 1), len(after) - 1, len(before) - 1)
        return line - before[k] + after[k] if k >= 0 else line

    return moved


def render_insufficient(
    *,
    meta: ReportMeta,
    reason: str,
    sub_queries: Sequence[str],
    examined: Sequence[tuple[Source, int | None, str]],
    failures: Sequence[str] = (),
    lessons_markdown: str = "",
    examined_limit: int = 30,
    limitations: Sequence[str] = (),
) -> str:
    """An honest short report for a run whose sources cannot support an answer.

    Every outside string is inert: titles and reasons as plain text, addresses as
    autolinks or plain paths, the sub-queries as code spans (shown verbatim). The first
    ``examined_limit`` sources examined are listed (pass them best first); the rest are
    counted in a last line that points to the run record, which has them all.
    """
    verdict = "Not enough data" if meta.gate_decision == "insufficient_data" else "No relevant findings"
    parts = [
        meta.front_matter(),
        f"# {verdict}: {plain_text(meta.query, max_chars=160) or 'the question'}\n",
        "## Executive Summary\n",
        "This run could not find sources that support an answer, so it does not offer one. "
        f"Reason: {plain_text(reason, max_chars=300)}.\n",
        "## What Was Searched\n",
        "\n".join(f"- {code_span(q, max_chars=300)}" for q in sub_queries) + "\n"
        if sub_queries
        else "- No search was run.\n",
        "## Sources Examined\n",
    ]
    if examined:
        lines = []
        for source, score, why in examined[:examined_limit]:
            shown = "unscored" if score is None else f"relevance {score}/5"
            title = _source_name(source, max_chars=160)
            why_text = plain_text(why, max_chars=300)
            lines.append(f"- {title} \u2014 {location_markdown(source.location)} ({shown}: {why_text})")
        if len(examined) > examined_limit:
            lines.append(f"- and {len(examined) - examined_limit} more (see the run record)")
        parts.append("\n".join(lines) + "\n")
    else:
        parts.append("- None could be read.\n")
    if failures:
        parts.append("## Search Problems\n")
        parts.append("\n".join(f"- {plain_text(f, max_chars=300)}" for f in failures) + "\n")
    parts.append(f"## {LIMITATIONS_TITLE}\n")
    parts.append(
        "- The question may need sources this run could not reach: try other search providers, "
        "a broader corpus, or a more specific question.\n"
    )
    parts.extend(f"- {plain_text(line, max_chars=1200)}\n" for line in limitations)
    if lessons_markdown.strip():
        parts.append(lessons_markdown.strip() + "\n")
    return "\n".join(parts)

