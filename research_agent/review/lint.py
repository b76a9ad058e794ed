"""Deterministic lint of a markdown report: the first of the two critics of a draft.

``lint_report`` parses the report once (front matter, headings, prose blocks, the
Sources list) and runs small checks over it, each returning :class:`Issue` objects with
``origin="lint"`` and a 1-based line number in the full markdown (front matter included).

Front matter, the Sources list and the "Lessons Applied" section are not prose: they
are never checked for numeric claims, duplicates or length. Code (fenced blocks and
inline spans) is never prose either.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any, NamedTuple

import yaml

from ..citations import CITATION
from ..citations import INLINE_CODE as _INLINE_CODE
from ..citations import blank as _blank
from ..citations import citation_numbers as _citation_numbers
from ..citations import mask_code_and_urls as _mask_code_and_urls
from ..citations import sentence_spans as _sentences
from ..errors import InputError
from ..nesting import nesting_problem
from .issues import Issue
from .rules import Rule, RuleDeadline, RuleLimits

__all__ = [
    "lint_report",
    "parse_report",
    "parse_front_matter",
    "is_reserved_heading",
    "prose_word_count",
    "ParsedReport",
    "Block",
    "Heading",
    "SourceEntry",
    "CHECKS",
]

# ---------------------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Heading:
    line: int
    level: int
    text: str


@dataclass(frozen=True)
class SourceEntry:
    line: int
    number: int
    text: str


@dataclass(frozen=True)
class Block:
    """One unit of prose: a paragraph, a list item, a table row or a quote paragraph.

    ``text`` is the block's lines joined with single spaces (markers stripped);
    ``starts`` holds the offset in ``text`` where each line begins, ``lines`` their numbers.
    """

    text: str
    starts: tuple[int, ...]
    lines: tuple[int, ...]
    section: str

    @property
    def line(self) -> int:
        return self.lines[0]

    def line_at(self, offset: int) -> int:
        """The markdown line that holds character ``offset`` of ``text``."""
        return self.lines[max(0, bisect.bisect_right(self.starts, offset) - 1)]


@dataclass(frozen=True)
class ParsedReport:
    lines: tuple[str, ...]
    front_matter: dict[str, Any]
    body_start: int  # 0-based index of the first line after the front matter
    headings: tuple[Heading, ...]
    blocks: tuple[Block, ...]  # prose only
    sources: tuple[SourceEntry, ...]
    sources_heading: Heading | None
    code_lines: frozenset[int]  # 1-based lines inside fenced code (fences included)


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
_RULE_LINE = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_LIST_MARKER = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?")
_QUOTE_MARKER = re.compile(r"^\s*(?:>\s?)+")
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
_TABLE_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")
_SOURCE_ENTRY = re.compile(r"^\s*(?:[-*+]\s+)?(?:(\d{1,4})[.)]|\[(\d{1,4})\]:?)\s+(.*\S)")
_HEADING_NUMBER = re.compile(r"^(?:\d+(?:\.\d+)*\.?\s+)")
# "Sources Examined" is the list of the tool's own short report when it offers no answer.
_SOURCES_TITLES = {"sources", "references", "bibliography", "works cited", "sources examined"}
_LESSONS_TITLES = {"lessons applied"}


def _heading_key(text: str) -> str:
    text = _HEADING_NUMBER.sub("", text.strip()).strip().rstrip(":").strip()
    return re.sub(r"[*_`]", "", text).strip().lower()


def is_reserved_heading(text: str) -> bool:
    """True for a heading the lint reads as a Sources or Lessons Applied section, not as prose."""
    key = _heading_key(text)
    return key in _SOURCES_TITLES or key in _LESSONS_TITLES


def parse_front_matter(markdown: str) -> dict[str, Any]:
    """The YAML front matter as a dict; {} when absent or not a valid YAML mapping."""
    return _split_front_matter(markdown.replace("\r\n", "\n").split("\n"))[0]


def _split_front_matter(lines: list[str]) -> tuple[dict[str, Any], int]:
    """(front matter, index of the first body line). Front matter nested deeper than any
    parser should meet is an InputError, checked before the YAML parser sees it."""
    if not lines or lines[0].strip() != "---":
        return {}, 0
    for i in range(1, len(lines)):
        if lines[i].strip() in ("---", "..."):
            block = "\n".join(lines[1:i])
            problem = nesting_problem(block, "yaml")
            if problem is not None:
                raise InputError(f"front matter {problem}")
            try:
                data = yaml.safe_load(block)
            except yaml.YAMLError:
                data = None
            except RecursionError:
                raise InputError("front matter nested too deeply") from None
            return (data if isinstance(data, dict) else {}), i + 1
    return {}, 0  # an unclosed '---' is a horizontal rule, not front matter


def parse_report(markdown: str) -> ParsedReport:
    """Parse ``markdown`` into the pieces the checks look at."""
    lines = markdown.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    front, body_start = _split_front_matter(lines)
    headings: list[Heading] = []
    blocks: list[Block] = []
    sources: list[SourceEntry] = []
    sources_heading: Heading | None = None
    code: set[int] = set()

    fence: str | None = None
    section = ""
    skip_level: int | None = None  # inside Sources / Lessons Applied until a heading this level or higher
    in_sources = False
    current: list[tuple[int, str]] = []

    def flush() -> None:
        if current:
            blocks.append(_make_block(current, section))
            current.clear()

    for index in range(body_start, len(lines)):
        number = index + 1
        raw = lines[index]
        if fence is not None:
            code.add(number)
            stripped = raw.strip()
            if stripped.startswith(fence[0] * len(fence)) and not stripped.strip(fence[0]):
                fence = None
            continue
        fence_match = _FENCE.match(raw)
        if fence_match:
            flush()
            fence = fence_match.group(1)
            code.add(number)
            continue
        heading_match = _HEADING.match(raw)
        if heading_match:
            flush()
            heading = Heading(number, len(heading_match.group(1)), heading_match.group(2).strip())
            headings.append(heading)
            if skip_level is not None and heading.level <= skip_level:
                skip_level, in_sources = None, False
            key = _heading_key(heading.text)
            if skip_level is None and (key in _SOURCES_TITLES or key in _LESSONS_TITLES):
                skip_level = heading.level
                in_sources = key in _SOURCES_TITLES
                if in_sources and sources_heading is None:
                    sources_heading = heading
            if heading.level <= 2:
                section = heading.text
            continue
        if skip_level is not None:
            if in_sources:
                entry = _SOURCE_ENTRY.match(raw)
                if entry:
                    sources.append(SourceEntry(number, int(entry.group(1) or entry.group(2)), entry.group(3)))
            continue
        if not raw.strip() or _RULE_LINE.match(raw) or raw.lstrip().startswith("<!--"):
            flush()
            continue
        if _TABLE_ROW.match(raw):
            flush()
            if not _TABLE_SEPARATOR.match(raw):
                current.append((number, raw.strip().strip("|")))
                flush()
            continue
        text = _QUOTE_MARKER.sub("", raw)
        marker = _LIST_MARKER.match(text)
        if marker:
            flush()
            text = text[marker.end() :]
        current.append((number, text.strip()))
    flush()
    return ParsedReport(
        lines=tuple(lines),
        front_matter=front,
        body_start=body_start,
        headings=tuple(headings),
        blocks=tuple(b for b in blocks if b.text.strip()),
        sources=tuple(sources),
        sources_heading=sources_heading,
        code_lines=frozenset(code),
    )


def _make_block(items: list[tuple[int, str]], section: str) -> Block:
    parts: list[str] = []
    starts: list[int] = []
    offset = 0
    for _, text in items:
        starts.append(offset)
        parts.append(text)
        offset += len(text) + 1
    return Block(" ".join(parts), tuple(starts), tuple(n for n, _ in items), section)


# ---------------------------------------------------------------------------------------
# Citations (found as research_agent.citations defines them, code and URLs masked)
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Citation:
    line: int
    start: int  # offset in the block text
    end: int
    text: str
    numbers: tuple[int, ...]


def _citations(block: Block) -> list[_Citation]:
    masked = _mask_code_and_urls(block.text)
    return [
        _Citation(
            block.line_at(m.start()), m.start(), m.end(), m.group(0), tuple(_citation_numbers(m.group(1)))
        )
        for m in CITATION.finditer(masked)
    ]


# ---------------------------------------------------------------------------------------
# Helpers shared by the checks
# ---------------------------------------------------------------------------------------


def _short(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _issue(type_: str, severity: str, line: int | None, matched: str, reason: str, fix: str) -> Issue:
    return Issue(type_, severity, line, _short(matched), reason, fix, "lint", 1.0)  # type: ignore[arg-type]


def _prose_lines(doc: ParsedReport) -> Iterable[tuple[int, str]]:
    """(line number, text with inline code blanked) for every body line outside code fences."""
    for index in range(doc.body_start, len(doc.lines)):
        number = index + 1
        if number not in doc.code_lines:
            yield number, _blank(doc.lines[index], _INLINE_CODE)


def _in_non_prose_section(doc: ParsedReport) -> set[int]:
    """Lines inside Sources / Lessons Applied sections (headings included)."""
    lines: set[int] = set()
    headings = list(doc.headings)
    for i, heading in enumerate(headings):
        key = _heading_key(heading.text)
        if key in _SOURCES_TITLES or key in _LESSONS_TITLES:
            end = len(doc.lines)
            for later in headings[i + 1 :]:
                if later.level <= heading.level:
                    end = later.line - 1
                    break
            lines.update(range(heading.line, end + 1))
    return lines


# ---------------------------------------------------------------------------------------
# Check: citations and the Sources list
# ---------------------------------------------------------------------------------------


def check_citations(doc: ParsedReport, sources: Collection[int] | None = None) -> list[Issue]:
    """Citations to source numbers that do not exist (critical)."""
    cites = [c for block in doc.blocks for c in _citations(block)]
    if not cites:
        return []
    if doc.sources_heading is not None:
        valid: set[int] = {entry.number for entry in doc.sources}
    elif sources is not None:
        valid = set(sources)
    else:
        first = cites[0]
        return [
            _issue(
                "missing_source",
                "critical",
                first.line,
                first.text,
                "the report cites sources but has no Sources section",
                "add a numbered Sources list that matches the citations",
            )
        ]
    listed = _describe_numbers(sorted(valid))
    issues: list[Issue] = []
    seen: set[tuple[int, int]] = set()
    for cite in cites:
        for number in cite.numbers:
            if number in valid or (number, cite.line) in seen:
                continue
            seen.add((number, cite.line))
            issues.append(
                _issue(
                    "missing_source",
                    "critical",
                    cite.line,
                    cite.text,
                    f"cites source {number}, which is not in the Sources list ({listed})",
                    "cite a source that is in the list, or remove the claim",
                )
            )
    return issues


def _describe_numbers(numbers: Sequence[int]) -> str:
    if not numbers:
        return "it is empty"
    if list(numbers) == list(range(numbers[0], numbers[-1] + 1)):
        return f"it has {numbers[0]}-{numbers[-1]}" if len(numbers) > 1 else f"it has only {numbers[0]}"
    return "it has " + ", ".join(str(n) for n in numbers)


def check_sources_list(doc: ParsedReport) -> list[Issue]:
    """Sources entries never cited (warning) and source numbers listed twice (critical)."""
    if doc.sources_heading is None:
        return []
    cited = {n for block in doc.blocks for c in _citations(block) for n in c.numbers}
    issues: list[Issue] = []
    first_line: dict[int, int] = {}
    for entry in doc.sources:
        if entry.number in first_line:
            issues.append(
                _issue(
                    "sources_list",
                    "critical",
                    entry.line,
                    f"{entry.number}. {entry.text}",
                    f"source number {entry.number} is listed twice (first at line {first_line[entry.number]}),"
                    " so its citations are ambiguous",
                    "give every source its own number and renumber the citations to match",
                )
            )
            continue
        first_line[entry.number] = entry.line
        if entry.number not in cited:
            issues.append(
                _issue(
                    "sources_list",
                    "warning",
                    entry.line,
                    f"{entry.number}. {entry.text}",
                    f"source {entry.number} is listed but never cited",
                    "cite it where the report uses it, or drop it from the list",
                )
            )
    return issues


# ---------------------------------------------------------------------------------------
# Check: numeric claims without a citation
# ---------------------------------------------------------------------------------------

_N = r"\d+(?:[.,]\d+)*"
_BEFORE = r"(?<![\w.,/-])"
_MONTHS = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?"
    r"|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
)


class _NumericKind(NamedTuple):
    name: str
    severity: str
    pattern: re.Pattern[str]
    reason: str
    fix: str


# In a sentence the first critical match wins, else the first warning.
_NUMERIC_KINDS: tuple[_NumericKind, ...] = tuple(
    _NumericKind(*kind)
    for kind in (
        (
            "percentage",
            "critical",
            re.compile(rf"{_BEFORE}[-+]?{_N}\s?(?:%|percent\b|per\s?cent\b|percentage points?\b|pp\b)", re.I),
            "numeric claim without a citation",
            "cite the source that gives this figure, or remove it",
        ),
        (
            "money",
            "critical",
            re.compile(
                rf"(?:US|A|C)?[$€£¥₹]\s?{_N}(?:\s?(?:k|m|bn?|million|billion|trillion|thousand)\b)?"
                rf"|{_BEFORE}{_N}\s?(?:million|billion|trillion)?\s?(?:USD|EUR|GBP|JPY|dollars?|euros?)\b",
                re.I,
            ),
            "monetary figure without a citation",
            "cite the source that gives this figure, or remove it",
        ),
        (
            "magnitude",
            "critical",
            re.compile(rf"{_BEFORE}{_N}\s?(?:thousand|million|billion|trillion|bn)\b", re.I),
            "large quantity without a citation",
            "cite the source that gives this figure, or remove it",
        ),
        (
            "multiplier",
            "critical",
            re.compile(
                rf"{_BEFORE}{_N}(?:[x×](?!\w)|\s?-?fold\b|\s+times\s+(?:more|less|fewer|higher|lower|faster|slower"
                rf"|larger|smaller|greater|as)\b)",
                re.I,
            ),
            "comparative figure without a citation",
            "cite the source that gives this figure, or remove it",
        ),
        (
            "date",
            "warning",
            re.compile(
                rf"(?<!\w){_MONTHS}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?\b|(?<!\w)\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTHS}\b"
                r"|(?<![\w.])\d{4}-\d{2}-\d{2}\b|(?<![\w./])\d{1,2}/\d{1,2}/\d{2,4}\b"
            ),
            "date without a citation",
            "cite the source for this date, or remove it",
        ),
        (
            "year",
            "warning",
            re.compile(r"(?<![\w.,/$€£-])(?:1[5-9]\d\d|20\d\d|21\d\d)(?:s|'s)?(?![\w%]|[.,]\d)"),
            "date without a citation",
            "cite the source for this date, or remove it",
        ),
        (
            "number",
            "warning",
            re.compile(rf"{_BEFORE}[-−]?{_N}(?![\d])(?!(?:st|nd|rd|th)\b)"),
            "number without a citation",
            "cite the source that gives this number, or remove it",
        ),
    )
)

# The tool's own scores are not claims about the world: "Viability of the answer from these
# sources: 82/100." and "The skeptic rated viability 30/100, below the threshold of 51".
# The same goes for the gate's own counts ("12 source(s) scored but only 0 reached relevance 3;
# at least 1 needed"), which the short report quotes as its reason.
_OWN_SCORE = re.compile(
    r"\bviability\b[^.\d\n]{0,60}?\b\d{1,3}/100\b(?:,\s*below the threshold of \d{1,3}\b)?"
    r"|\b\d{1,4} (?:relevant )?(?:source|site)\(s\)|\breached relevance \d\b|\bat least \d{1,4} needed\b"
    r"|\bneeds \d{1,4} from \d{1,4}\b",
    re.I,
)

# Numbers after these words are references into the document, not claims.
_REFERENCE_WORD = re.compile(
    r"(?:\b(?:sections?|chapters?|figures?|fig\.|tables?|steps?|phases?|parts?|pages?|pp\.|p\.|appendix"
    r"|items?|questions?|lines?|rounds?|levels?|stages?|tiers?|no\.|options?|points?|sources?)|#)\s*$",
    re.I,
)

def _claim_context(text: str, start: int, end: int, floor: int) -> str:
    """Up to four words before the figure, and the figure."""
    words = list(re.finditer(r"\S+", text[floor:start]))
    begin = floor + words[-4].start() if len(words) >= 4 else (floor + words[0].start() if words else start)
    return text[begin:end].strip(" ,;:([")


def _numeric_match(sentence: str) -> tuple[re.Match[str], _NumericKind] | None:
    found: list[tuple[int, int, re.Match[str], _NumericKind]] = []
    taken: list[tuple[int, int]] = []
    for kind in _NUMERIC_KINDS:
        for m in kind.pattern.finditer(sentence):
            if any(m.start() < e and s < m.end() for s, e in taken):
                continue
            if kind.name == "number":
                digits = m.group(0).lstrip("-−")
                if digits.isdigit() and len(digits) == 1:
                    continue  # "3 options", "step 2": too common to be a claim
                if _REFERENCE_WORD.search(sentence[max(0, m.start() - 16) : m.start()]):
                    continue
            taken.append((m.start(), m.end()))
            found.append((0 if kind.severity == "critical" else 1, m.start(), m, kind))
            break  # one match of a kind is enough to decide about the sentence
    if not found:
        return None
    _, _, match, kind = min(found, key=lambda item: (item[0], item[1]))
    return match, kind


def check_numeric_claims(doc: ParsedReport) -> list[Issue]:
    """Sentences with numbers, percentages or dates but no citation.

    Percentages, money, large quantities and multipliers are critical; years, dates and
    other numbers are warnings. Single-digit counts, ordinals, numbers glued to words
    (COVID-19, CO2, GPT-4), references like "Section 12", citations, list markers,
    headings, URLs and code are not claims.
    """
    issues: list[Issue] = []
    for block in doc.blocks:
        masked = _blank(_mask_code_and_urls(block.text), _OWN_SCORE)
        cites = [(m.start(), m.end()) for m in CITATION.finditer(masked)]
        masked = _blank(masked, CITATION)
        for start, end in _sentences(masked):
            if any(start <= s < end for s, _ in cites):
                continue
            found = _numeric_match(masked[start:end])
            if found is None:
                continue
            match, kind = found
            at = start + match.start()
            context = _claim_context(block.text, at, start + match.end(), start)
            issues.append(
                _issue("unsupported_claim", kind.severity, block.line_at(at), context, kind.reason, kind.fix)
            )
    return issues


# ---------------------------------------------------------------------------------------
# Check: the report's structure
# ---------------------------------------------------------------------------------------


def check_structure(doc: ParsedReport, sources: Collection[int] | None = None) -> list[Issue]:
    """An empty file, or one without sections, body text or a Sources list, is no report (critical).

    A missing Sources list is left to :func:`check_citations` when the text cites
    anything, and is no issue when ``sources`` gives the valid numbers (a draft).
    """
    if not any(line.strip() for line in doc.lines[doc.body_start :]):
        return [_issue("structure", "critical", None, "", "the report is empty", _STRUCTURE_FIX)]
    issues: list[Issue] = []
    reserved = _SOURCES_TITLES | _LESSONS_TITLES
    if not any(_heading_key(h.text) not in reserved for h in doc.headings):
        issues.append(_issue("structure", "critical", None, "", "the report has no sections", _STRUCTURE_FIX))
    if not doc.blocks:
        issues.append(_issue("structure", "critical", None, "", "the report has no body text", _STRUCTURE_FIX))
    cites = any(_citations(block) for block in doc.blocks)
    if doc.sources_heading is None and sources is None and not cites:
        issues.append(
            _issue(
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
            for n in range(heading.line + 1, end + 1)
            if doc.lines[n - 1].strip() and not _RULE_LINE.match(doc.lines[n - 1])
        ]
        if not body:
            issues.append(
                _issue(
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
    r"\b(?:TODO|TBD|TBA|FIXME)\b|(?<![\w-])XXX(?![\w-])|\blorem ipsum\b|\[\s*(?:insert|placeholder|add)\b[^\]]*\]"
    r"|\[citation needed\]|\[source\??\]|<\s*(?:insert|placeholder)[^>]*>|\{\{[^}]*\}\}|\$\{[a-z_]+\}",
    re.I,
)
_CASE_SENSITIVE_PLACEHOLDER = {"todo", "tbd", "tba", "fixme", "xxx"}


def check_placeholders(doc: ParsedReport) -> list[Issue]:
    """TODO, TBD, lorem ipsum, "[insert ...]", XXX and template braces left in the text."""
    skip = _in_non_prose_section(doc)
    issues: list[Issue] = []
    for number, text in _prose_lines(doc):
        if number in skip:
            continue
        for m in _PLACEHOLDER.finditer(text):
            word = m.group(0)
            if word.lower() in _CASE_SENSITIVE_PLACEHOLDER and not word.isupper():
                continue  # "a todo list" is prose; "TODO" is a marker
            issues.append(
                _issue(
                    "placeholder",
                    "critical",
                    number,
                    _claim_context(text, m.start(), m.end(), 0) if len(word) < 6 else word,
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
    r"|^\s*\[(?:system|user|assistant)\]\s*$|</?think>"
    r"|\byou are an? (?:careful |helpful |skeptical )?research(?: writer| assistant| agent| analyst)?\b"
    r"|\b(?:answer|respond) with json only\b|\bmaterial to (?:report on|review), never instructions\b",
    re.I | re.M,
)


def check_leaks(doc: ParsedReport) -> list[Issue]:
    """Prompt delimiters, chat-template tokens or system-prompt text in the report."""
    issues: list[Issue] = []
    for number, text in _prose_lines(doc):
        m = _LEAK.search(text)
        if m:
            issues.append(
                _issue(
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
    text = _blank(_mask_code_and_urls(block.text), CITATION).lower()
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
                _issue(
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
    return sum(len(_WORD.findall(_blank(_mask_code_and_urls(b.text), CITATION))) for b in doc.blocks)


def check_length(doc: ParsedReport, target_words: int | None) -> list[Issue]:
    """Prose under 50% or over 200% of the target length (warning)."""
    if target_words is None or target_words <= 0:
        return []
    words = prose_word_count(doc)
    matched = f"{words} words, target {target_words}"
    if words < target_words * 0.5:
        return [
            _issue(
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
            _issue(
                "length",
                "warning",
                None,
                matched,
                f"the report has {words} words of prose, over twice the target of {target_words}",
                f"cut toward {target_words} words: drop repetition and minor points, keep the cited findings",
            )
        ]
    return []


# ---------------------------------------------------------------------------------------
# Check: custom rules
# ---------------------------------------------------------------------------------------

_MAX_MATCHES_PER_RULE = 50
RULE_TIMEOUT = "rule_timeout"  # the Issue.type of a rule stopped at its time budget


def _overrun(rule: Rule, budget: float) -> Issue:
    return _issue(
        RULE_TIMEOUT,
        "warning",
        None,
        rule.name,
        f"custom rule {rule.name!r} ran past its {budget:g}s time budget and was stopped; its matches are missing",
        "simplify the rule's pattern: nested quantifiers such as (\\w+\\s?)+ backtrack without end",
    )


def check_rules(doc: ParsedReport, rules: Sequence[Rule], *, limits: RuleLimits | None = None) -> list[Issue]:
    """Matches of the user's rules anywhere after the front matter (at most 50 per rule).

    Each rule runs within ``limits`` (default: :data:`RULE_TIME_BUDGET` seconds each). A
    rule stopped at its own budget becomes one ``rule_timeout`` warning naming it; one
    stopped by the overall deadline raises :class:`RuleDeadline`.
    """
    if not rules:
        return []
    limits = limits or RuleLimits()
    body = "\n".join(doc.lines[doc.body_start :])
    line_starts = [0]
    for m in re.finditer("\n", body):
        line_starts.append(m.end())
    issues: list[Issue] = []
    for rule in rules:
        budget, by_deadline = limits.next_budget()
        try:
            found = rule.find(body, timeout=budget, limit=_MAX_MATCHES_PER_RULE)
        except TimeoutError:
            if by_deadline:
                raise RuleDeadline(rule.name) from None
            issues.append(_overrun(rule, budget))
            continue
        for start, matched in found:
            line = doc.body_start + bisect.bisect_right(line_starts, start)
            issues.append(
                Issue(rule.issue_type, rule.severity, line, _short(matched), rule.reason, rule.fix, "lint", 1.0)
            )
    return issues


# ---------------------------------------------------------------------------------------
# The entry point
# ---------------------------------------------------------------------------------------

CHECKS = (
    "structure",
    "missing_source",
    "sources_list",
    "unsupported_claim",
    "empty_section",
    "placeholder",
    "prompt_leak",
    "duplicate_paragraph",
    "length",
)


def _order(issue: Issue) -> tuple[int, int, int, str]:
    return (
        0 if issue.severity == "critical" else 1,
        issue.line is None,
        issue.line or 0,
        issue.type,
    )


def lint_report(
    markdown: str,
    *,
    target_words: int | None,
    rules: Sequence[Rule] = (),
    sources: Collection[int] | None = None,
    rule_limits: RuleLimits | None = None,
) -> list[Issue]:
    """Lint ``markdown``; issues ordered critical first, then warnings, each by line.

    ``target_words`` (None or 0: no length check) is the mode's target length.
    ``sources`` gives the valid citation numbers for a draft that has no Sources list
    of its own (the pipeline's draft before rendering); a Sources section in the
    markdown always takes precedence. ``rule_limits`` bounds the time of custom rules
    (see :func:`check_rules`).
    """
    doc = parse_report(markdown)
    issues = [
        *check_structure(doc, sources),
        *check_citations(doc, sources),
        *check_sources_list(doc),
        *check_numeric_claims(doc),
        *check_empty_sections(doc),
        *check_placeholders(doc),
        *check_leaks(doc),
        *check_duplicates(doc),
        *check_length(doc, target_words),
        *check_rules(doc, rules, limits=rule_limits),
    ]
    return sorted(issues, key=_order)
