"""Lint checks of debris: text where a report should be, stated by structure, never by strings.

What a weak model leaves when it echoes its schema or loses the thread, each critical:

- a heading that is a web address (:func:`~research_agent.text.debris.is_url`);
- a heading, or a paragraph or list item (the summary and key findings included), with
  no real word: no word of 3 or more letters outside schema vocabulary, web addresses
  and quoted keys aside (:func:`~research_agent.text.debris.real_words`); a bare number
  is named as such; and one that loops over the same few words
  (:func:`~research_agent.text.debris.repeats_itself`). Table rows are left alone: a
  table of figures is not debris;
- no citation at all in a report whose front matter says the run kept sources for it
  (``gate_decision`` ``full_report`` or ``short_report``). The skeptic's section does
  not count (its citations are the skeptic's, not the writer's), nor does text with no
  real word (``"enum": [1, 2]`` cites nothing).

Repetition is :mod:`.repeats`'s, length :mod:`.text`'s.
"""

from __future__ import annotations

from ...text.debris import is_url, says_nothing
from ..issues import Issue
from ..markdown import ParsedReport, heading_key, is_reserved_heading
from .common import block_citations, lint_issue

__all__ = ["check_debris", "check_no_citation", "WRITTEN_FROM_SOURCES"]

# The gate decisions of a report written from kept sources (the others say why there is none).
WRITTEN_FROM_SOURCES = frozenset({"full_report", "short_report"})
_SKEPTIC_SECTION = "adversarial analysis"


def _heading_issues(doc: ParsedReport) -> list[Issue]:
    issues: list[Issue] = []
    for heading in doc.headings:
        if is_reserved_heading(heading.text):
            continue
        shown = "#" * heading.level + " " + heading.text
        if is_url(heading.text):
            issues.append(
                lint_issue(
                    "url_heading",
                    "critical",
                    heading.line,
                    shown,
                    "the heading is a web address, not a topic",
                    "name what the section covers in words; cite a source in the text instead",
                )
            )
            continue
        why = says_nothing(heading.text)
        if why is not None:
            issues.append(
                lint_issue(
                    "debris",
                    "critical",
                    heading.line,
                    shown,
                    f"the heading {why}",
                    "name what the section covers in words, or remove the section",
                )
            )
    return issues


def check_debris(doc: ParsedReport) -> list[Issue]:
    """Headings that are web addresses, and headings or paragraphs with no real word (critical)."""
    issues = _heading_issues(doc)
    for block in doc.blocks:
        if block.kind == "row":
            continue
        why = says_nothing(block.text)
        if why is None:
            continue
        where = heading_key(block.section) or "the report"
        issues.append(
            lint_issue(
                "debris",
                "critical",
                block.line,
                block.text,
                f"this text in {where!r} {why}",
                "write the point as a sentence from the sources with its citation, or remove it",
            )
        )
    return issues


def check_no_citation(doc: ParsedReport) -> list[Issue]:
    """No citation anywhere, though the front matter says the report was written from kept sources."""
    decision = str(doc.front_matter.get("gate_decision", "")).strip()
    if decision not in WRITTEN_FROM_SOURCES or not doc.blocks:
        return []
    for block in doc.blocks:
        if heading_key(block.section) == _SKEPTIC_SECTION or says_nothing(block.text) is not None:
            continue  # the skeptic's citations are not the writer's; "[1, 2]" in debris cites nothing
        if block_citations(block):
            return []
    return [
        lint_issue(
            "no_citation",
            "critical",
            None,
            f"gate_decision: {decision}",
            "the report cites no source, though the run kept sources to write it from",
            "support each claim with the number of the source it comes from, e.g. [1]",
        )
    ]
