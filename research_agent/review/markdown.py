"""The markdown parse the lint reads: front matter, headings, prose blocks, the Sources list.

Every line number here is 1-based in the full text, front matter included.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Any

import yaml

from ..errors import InputError
from ..nesting import nesting_problem

__all__ = [
    "Block",
    "Heading",
    "ParsedReport",
    "SourceEntry",
    "heading_key",
    "is_reserved_heading",
    "parse_front_matter",
    "parse_report",
    "SOURCES_TITLES",
    "LESSONS_TITLES",
]


@dataclass(frozen=True)
class Heading:
    """A section heading (ATX or setext) at the top level of the document.

    ``line`` is the heading's first line; ``last_line`` its last (the underline of a
    setext heading), so the section's content starts after it.
    """

    line: int
    level: int
    text: str
    last_line: int


@dataclass(frozen=True)
class SourceEntry:
    line: int
    number: int
    text: str


@dataclass(frozen=True)
class Block:
    """One unit of prose: a paragraph (in a list item or quote too), or a table row.

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
    code_lines: frozenset[int]  # 1-based lines of code blocks (fences included)
    reserved_lines: frozenset[int]  # 1-based lines of Sources / Lessons Applied sections, headings included


_SOURCE_ENTRY = re.compile(r"^\s*(?:[-*+]\s+)?(?:(\d{1,4})[.)]|\[(\d{1,4})\]:?)\s+(.*\S)")
_HEADING_NUMBER = re.compile(r"^(?:\d+(?:\.\d+)*\.?\s+)")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
_RULE_LINE = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_LIST_MARKER = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?")
_QUOTE_MARKER = re.compile(r"^\s*(?:>\s?)+")
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
_TABLE_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")
# "Sources Examined" is the list of the tool's own short report when it offers no answer.
SOURCES_TITLES = frozenset({"sources", "references", "bibliography", "works cited", "sources examined"})
LESSONS_TITLES = frozenset({"lessons applied"})


def heading_key(text: str) -> str:
    """A heading's text as the lint compares it: no numbering, emphasis, colon or case."""
    text = _HEADING_NUMBER.sub("", text.strip()).strip().rstrip(":").strip()
    return re.sub(r"[*_`]", "", text).strip().lower()


def is_reserved_heading(text: str) -> bool:
    """True for a heading the lint reads as a Sources or Lessons Applied section, not as prose."""
    key = heading_key(text)
    return key in SOURCES_TITLES or key in LESSONS_TITLES


# ---------------------------------------------------------------------------------------
# Front matter
# ---------------------------------------------------------------------------------------


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
            level, text = len(heading_match.group(1)), heading_match.group(2).strip()
            heading = Heading(number, level, text, number)
            headings.append(heading)
            if skip_level is not None and heading.level <= skip_level:
                skip_level, in_sources = None, False
            key = heading_key(heading.text)
            if skip_level is None and (key in SOURCES_TITLES or key in LESSONS_TITLES):
                skip_level = heading.level
                in_sources = key in SOURCES_TITLES
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
        reserved_lines=frozenset(_reserved_lines(headings, len(lines))),
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


def _reserved_lines(headings: list[Heading], line_count: int) -> set[int]:
    """Lines inside Sources / Lessons Applied sections (headings included)."""
    lines: set[int] = set()
    for i, heading in enumerate(headings):
        if is_reserved_heading(heading.text):
            end = line_count
            for later in headings[i + 1 :]:
                if later.level <= heading.level:
                    end = later.line - 1
                    break
            lines.update(range(heading.line, end + 1))
    return lines
