"""Lint checks of the text as a whole: structure, empty sections, placeholder text,
leaked prompt text, duplicated paragraphs, and length against the mode's target."""

from __future__ import annotations

import re
from collections.abc import Collection
from difflib import SequenceMatcher

from ..text.citations import CITATION, blank, mask_code_and_urls
from .checks_citations import block_citations
from .checks_common import claim_context, lint_issue, prose_lines
from .issues import Issue
from .markdown import Block, ParsedReport, is_reserved_heading

__all__ = [
    "check_duplicates",
    "check_empty_sections",
    "check_leaks",
    "check_length",
    "check_placeholders",
    "check_structure",
    "prose_word_count",
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
# Check: duplicated paragraphs
# ---------------------------------------------------------------------------------------

_MIN_DUPLICATE_WORDS = 8
_NEAR_DUPLICATE = 0.9


def _words(block: Block) -> tuple[str, ...]:
    text = blank(mask_code_and_urls(block.text), CITATION).lower()
    return tuple(re.findall(r"[^\W_]+", text))


_SHINGLE = 3
_COMMON_SHINGLE = 200  # a word triple in this many paragraphs says nothing about duplication


def _shingles(words: tuple[str, ...]) -> set[tuple[str, ...]]:
    return {words[i : i + _SHINGLE] for i in range(len(words) - _SHINGLE + 1)}


def _near_duplicate_of(
    words: tuple[str, ...],
    shingles: set[tuple[str, ...]],
    index: dict[tuple[str, ...], list[int]],
    seen: list[tuple[Block, tuple[str, ...], int]],
) -> int | None:
    """Index into ``seen`` of an earlier paragraph with >= 90% of the words in order, if any.

    Candidates come from shared word triples (an inverted index), so the cost grows with
    the overlap between paragraphs, not with the square of their number.
    """
    shared: dict[int, int] = {}
    for shingle in shingles:
        postings = index.get(shingle, ())
        if len(postings) > _COMMON_SHINGLE:
            continue
        for position in postings:
            shared[position] = shared.get(position, 0) + 1
    for position in sorted(shared):
        _, earlier_words, earlier_shingles = seen[position]
        if shared[position] < 0.5 * min(len(shingles), earlier_shingles):
            continue
        if min(len(words), len(earlier_words)) / max(len(words), len(earlier_words)) < _NEAR_DUPLICATE:
            continue
        if SequenceMatcher(None, words, earlier_words, autojunk=False).ratio() >= _NEAR_DUPLICATE:
            return position
    return None


def check_duplicates(doc: ParsedReport) -> list[Issue]:
    """A paragraph equal or nearly equal (90% of words in order) to an earlier one (warning)."""
    seen: list[tuple[Block, tuple[str, ...], int]] = []
    exact: dict[tuple[str, ...], int] = {}
    index: dict[tuple[str, ...], list[int]] = {}
    issues: list[Issue] = []
    for block in doc.blocks:
        words = _words(block)
        if len(words) < _MIN_DUPLICATE_WORDS:
            continue
        shingles = _shingles(words)
        how, position = "repeats", exact.get(words)
        if position is None:
            how, position = "nearly repeats", _near_duplicate_of(words, shingles, index, seen)
        if position is not None:
            issues.append(
                lint_issue(
                    "duplicate_paragraph",
                    "warning",
                    block.line,
                    " ".join(block.text.split()[:12]),
                    f"{how} the paragraph at line {seen[position][0].line}",
                    "remove the repetition, or merge the two into one paragraph",
                )
            )
            continue  # compare later paragraphs with the first copy only
        exact[words] = len(seen)
        for shingle in shingles:
            index.setdefault(shingle, []).append(len(seen))
        seen.append((block, words, len(shingles)))
    return issues


# ---------------------------------------------------------------------------------------
# Check: length against the mode's target
# ---------------------------------------------------------------------------------------


_WORD = re.compile(r"\w+(?:['’.,-]\w+)*")


def prose_word_count(doc: ParsedReport) -> int:
    """Words of prose: body paragraphs, list items and tables; not headings, Sources or code."""
    return sum(len(_WORD.findall(blank(mask_code_and_urls(b.text), CITATION))) for b in doc.blocks)


def check_length(doc: ParsedReport, target_words: int | None) -> list[Issue]:
    """Prose under 50% or over 200% of the target length (warning)."""
    if target_words is None or target_words <= 0:
        return []
    words = prose_word_count(doc)
    matched = f"{words} words, target {target_words}"
    if words < target_words * 0.5:
        return [
            lint_issue(
                "length",
                "warning",
                None,
                matched,
                f"the report has {words} words of prose, under half the target of {target_words}",
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
