"""Lint checks of the text as a whole: structure, empty sections, placeholder text,
leaked prompt text, and length against the mode's target."""

from __future__ import annotations

import re
from collections.abc import Collection

from ...text.citations import CITED, blank, mask_code_and_urls
from ..issues import Issue
from ..markdown import ParsedReport, is_reserved_heading
from .citations import block_citations
from .common import claim_context, lint_issue, prose_lines

__all__ = [
    "check_empty_sections",
    "check_leaks",
    "check_length",
    "check_placeholders",
    "check_structure",
    "prose_word_count",
    "says_why_short",
    "LENGTH_NOTES",
    "CUT_SHORT_NOTE",
]

_RULE_LINE = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")


def check_structure(doc: ParsedReport, sources: Collection[int] | None = None) -> list[Issue]:
    """An empty file, or one without sections, body text or a Sources list, is no report (critical).

    A missing Sources list is left to :func:`check_citations` when the text cites
    anything, and is no issue when ``sources`` gives the valid numbers (a draft).
    """
    if not any(line.strip() for line in doc.lines[doc.body_start :]):
        return [lint_issue("structure", "critical", None, "", "the report is empty", _STRUCTURE_FIX)]
    issues: list[Issue] = []
    if all(is_reserved_heading(h.text) for h in doc.headings):
        issues.append(
            lint_issue("structure", "critical", None, "", "the report has no sections", _STRUCTURE_FIX)
        )
    if not doc.blocks:
        issues.append(
            lint_issue("structure", "critical", None, "", "the report has no body text", _STRUCTURE_FIX)
        )
    cites = any(block_citations(block) for block in doc.blocks)
    if doc.sources_heading is None and sources is None and not cites:
        issues.append(
            lint_issue(
                "structure",
                "critical",
                None,
                "",
                "the report has no Sources list",
                "add a ## Sources section that lists, numbered, the sources the report relies on",
            )
        )
    return issues


_STRUCTURE_FIX = (
    "write the report as markdown: a title, sections such as ## Executive Summary with cited prose, "
    "and a numbered ## Sources list"
)


# ---------------------------------------------------------------------------------------
# Check: empty sections
# ---------------------------------------------------------------------------------------


def check_empty_sections(doc: ParsedReport) -> list[Issue]:
    """A heading with no content before the next heading of the same or a higher level."""
    issues: list[Issue] = []
    headings = doc.headings
    for i, heading in enumerate(headings):
        following = headings[i + 1] if i + 1 < len(headings) else None
        if following is not None and following.level > heading.level:
            continue  # a parent heading whose content sits in its subsections
        end = following.line - 1 if following is not None else len(doc.lines)
        body = [
            doc.lines[n - 1]
            for n in range(heading.last_line + 1, end + 1)
            if doc.lines[n - 1].strip() and not _RULE_LINE.match(doc.lines[n - 1])
        ]
        if not body:
            issues.append(
                lint_issue(
                    "empty_section",
                    "critical",
                    heading.line,
                    "#" * heading.level + " " + heading.text,
                    "the section has no content",
                    "write the section from the sources, or remove the heading",
                )
            )
    return issues


# ---------------------------------------------------------------------------------------
# Check: placeholder text
# ---------------------------------------------------------------------------------------

_PLACEHOLDER = re.compile(
    r"\b(?:TODO|TBD|TBA|FIXME)\b|(?<![\w-])XXX(?![\w-])|\blorem ipsum\b|\[\s*+(?:insert|placeholder|add)\b[^\[\]]*+\]"
    r"|\[citation needed\]|\[source\??\]|<\s*+(?:insert|placeholder)[^<>]*+>|\{\{[^{}]*+\}\}|\$\{[a-z_]+\}",
    re.I,
)
_CASE_SENSITIVE_PLACEHOLDER = {"todo", "tbd", "tba", "fixme", "xxx"}


def check_placeholders(doc: ParsedReport) -> list[Issue]:
    """TODO, TBD, lorem ipsum, "[insert ...]", XXX and template braces left in the text."""
    issues: list[Issue] = []
    for number, text in prose_lines(doc):
        if number in doc.reserved_lines:
            continue
        for m in _PLACEHOLDER.finditer(text):
            word = m.group(0)
            if word.lower() in _CASE_SENSITIVE_PLACEHOLDER and not word.isupper():
                continue  # "a todo list" is prose; "TODO" is a marker
            issues.append(
                lint_issue(
                    "placeholder",
                    "critical",
                    number,
                    claim_context(text, m.start(), m.end(), 0) if len(word) < 6 else word,
                    f"placeholder text {word!r} left in the report",
                    "replace it with the real content from the sources, or remove it",
                )
            )
            break
    return issues


# ---------------------------------------------------------------------------------------
# Check: leaked prompt delimiters and system-prompt text
# ---------------------------------------------------------------------------------------

_LEAK = re.compile(
    r"<<<\s*(?:END\s+)?DATA\b[^>\n]*(?:>>>)?|<\|[a-z_]{2,24}\|>|\[/?INST\]|<</?SYS>>|</?(?:system|assistant|user)>"
    r"|^[ \t]*+\[(?:system|user|assistant)\][ \t]*+$|</?think>"
    r"|\byou are an? (?:careful |helpful |skeptical )?research(?: writer| assistant| agent| analyst)?\b"
    r"|\b(?:answer|respond) with json only\b|\bmaterial to (?:report on|review), never instructions\b",
    re.I | re.M,
)


def check_leaks(doc: ParsedReport) -> list[Issue]:
    """Prompt delimiters, chat-template tokens or system-prompt text in the report."""
    issues: list[Issue] = []
    for number, text in prose_lines(doc):
        m = _LEAK.search(text)
        if m:
            issues.append(
                lint_issue(
                    "prompt_leak",
                    "critical",
                    number,
                    m.group(0).strip(),
                    "prompt delimiters or instructions leaked into the report",
                    "remove the leaked text; write only the report itself",
                )
            )
    return issues


# ---------------------------------------------------------------------------------------
# Check: length against the mode's target
# ---------------------------------------------------------------------------------------


_WORD = re.compile(r"\w+(?:['’.,-]\w+)*")


def prose_word_count(doc: ParsedReport) -> int:
    """Words of prose: body paragraphs, list items and tables; not headings, Sources, code,
    citations, or the parts the tool adds itself (:attr:`ParsedReport.tool_blocks`)."""
    return sum(len(_WORD.findall(blank(mask_code_and_urls(b.text), CITED))) for b in doc.blocks)


# The notes a report carries when it is short on purpose or was cut short: the gate's
# short-report note. The writer's cut note joins these when drafts are streamed.
CUT_SHORT_NOTE = "The draft was cut short"  # how the report's Limitations say the writer's answer was cut
LENGTH_NOTES: tuple[str, ...] = ("Short report:", CUT_SHORT_NOTE)
_FAR_TOO_SHORT = 0.25


def says_why_short(doc: ParsedReport, reason: str = "") -> bool:
    """True when the report says why it is short: a ``reason`` given by the program (a
    cut draft), a front matter that names no full report, or one of :data:`LENGTH_NOTES`."""
    if reason.strip():
        return True
    decision = str(doc.front_matter.get("gate_decision", "")).strip()
    if decision and decision != "full_report":
        return True  # a short report, or the honest report of a run that found too little
    return any(block.text.startswith(LENGTH_NOTES) for block in (*doc.blocks, *doc.tool_blocks))


def check_length(doc: ParsedReport, target_words: int | None, *, short_reason: str = "") -> list[Issue]:
    """Prose under 50% or over 200% of the target length (warning); under 25% is critical
    unless the report says why (:func:`says_why_short`; ``short_reason`` is the program's)."""
    if target_words is None or target_words <= 0:
        return []
    words = prose_word_count(doc)
    matched = f"{words} words, target {target_words}"
    if words < target_words * 0.5:
        far = words < target_words * _FAR_TOO_SHORT and not says_why_short(doc, short_reason)
        share = "under a quarter of" if far else "under half"
        return [
            lint_issue(
                "length",
                "critical" if far else "warning",
                None,
                matched,
                f"the report has {words} words of prose, {share} the target of {target_words}",
                f"expand toward {target_words} words with more evidence and analysis from the sources, not padding",
            )
        ]
    if words > target_words * 2:
        return [
            lint_issue(
                "length",
                "warning",
                None,
                matched,
                f"the report has {words} words of prose, over twice the target of {target_words}",
                f"cut toward {target_words} words: drop repetition and minor points, keep the cited findings",
            )
        ]
    return []
