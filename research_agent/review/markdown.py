"""The markdown parse the lint reads: front matter, headings, prose blocks, the Sources list.

The body is read with markdown-it-py (CommonMark plus GFM tables) from its block token
stream and the tokens' line maps; the YAML front matter is split off first, and every
line number here is 1-based in the full text, front matter included.

What the lint calls prose is what a reader sees as running text: paragraphs (in lists
and quotes too), and table rows. Headings, code (fenced or indented), HTML comments,
link reference definitions, and the Sources and Lessons Applied sections are not prose.

Neither is what the tool adds to a report it writes: the Adversarial Analysis (the skeptic's
findings), the Limitations & Gaps, and the note under the title of a report its review
rejected. Those are *tool* blocks: citations in them still count (a source the skeptic cites
is listed), but no prose check reads them, so a report is linted the same way whether the
run reviews its draft (before those parts are written) or ``review`` reads the file after.
The Sources entries are read line by line from the Sources section, since a source list
comes in several shapes ("1. x", "[1] x", "- [2]: x") that markdown reads differently.

markdown_it is imported on the first parse, not with this module: the renderer imports
:func:`is_reserved_heading` from here, and the CLI should not load a parser it may not use.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, Literal

import yaml

from ..errors import InputError
from ..files.nesting import nesting_problem

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

__all__ = [
    "Block",
    "Heading",
    "ParsedReport",
    "SourceEntry",
    "heading_key",
    "is_reserved_heading",
    "parse_front_matter",
    "split_front_matter",
    "parse_report",
    "SOURCES_TITLES",
    "LESSONS_TITLES",
    "TOOL_TITLES",
    "ADVERSARIAL_TITLE",
    "LIMITATIONS_TITLE",
    "REJECTION_MARK",
]

BlockKind = Literal["paragraph", "row", "html"]


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
    ``kind``: ``paragraph`` (list items and quotes too), ``row`` (a table row) or ``html``.
    """

    text: str
    starts: tuple[int, ...]
    lines: tuple[int, ...]
    section: str
    kind: BlockKind = "paragraph"

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
    tool_blocks: tuple[Block, ...] = ()  # what the tool adds (see the module docstring): not prose
    tool_lines: frozenset[int] = frozenset()  # their lines, the sections' headings included

    @property
    def cited_blocks(self) -> tuple[Block, ...]:
        """Prose and tool blocks in line order: every block whose citations count."""
        return tuple(sorted((*self.blocks, *self.tool_blocks), key=lambda b: b.line))


_SOURCE_ENTRY = re.compile(r"^\s*+(?:[-*+]\s++)?(?:(\d{1,4})[.)]|\[(\d{1,4})\]:?)\s++(.*\S)")
_HEADING_NUMBER = re.compile(r"^(?:\d+(?:\.\d+)*\.?\s+)")
_TASK_BOX = re.compile(r"^\[[ xX]\]\s+")
# "Sources Examined" is the list of the tool's own short report when it offers no answer.
SOURCES_TITLES = frozenset({"sources", "references", "bibliography", "works cited", "sources examined"})
LESSONS_TITLES = frozenset({"lessons applied"})
# The sections the tool writes into a report itself, and the first words of its rejection note.
ADVERSARIAL_TITLE = "Adversarial Analysis"
LIMITATIONS_TITLE = "Limitations & Gaps"
TOOL_TITLES = frozenset({ADVERSARIAL_TITLE.lower(), LIMITATIONS_TITLE.lower()})
REJECTION_MARK = "**The tool's own review rejected this report.**"


def heading_key(text: str) -> str:
    """A heading's text as the lint compares it: no numbering, emphasis, colon or case."""
    text = _HEADING_NUMBER.sub("", text.strip()).strip().rstrip(":").strip()
    return re.sub(r"[*_`]", "", text).strip().lower()


def is_reserved_heading(text: str) -> bool:
    """True for a heading the lint does not read as the writer's prose: Sources, Lessons
    Applied, and the sections the tool adds (Adversarial Analysis, Limitations & Gaps)."""
    key = heading_key(text)
    return key in SOURCES_TITLES or key in LESSONS_TITLES or key in TOOL_TITLES


# ---------------------------------------------------------------------------------------
# Front matter
# ---------------------------------------------------------------------------------------


def parse_front_matter(markdown: str) -> dict[str, Any]:
    """The YAML front matter as a dict; {} when absent or not a valid YAML mapping."""
    return _split_front_matter(markdown.replace("\r\n", "\n").split("\n"))[0]


def split_front_matter(markdown: str) -> tuple[dict[str, Any], str]:
    """(the YAML front matter as a dict, the text after it); ({}, the whole text) without one."""
    lines = markdown.replace("\r\n", "\n").split("\n")
    front, start = _split_front_matter(lines)
    return front, "\n".join(lines[start:])


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


# ---------------------------------------------------------------------------------------
# The body, from markdown-it's block tokens
# ---------------------------------------------------------------------------------------


@cache
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt

    # Only the block structure is read: inline parsing (links, emphasis) is left out.
    return MarkdownIt("commonmark").enable("table").disable("inline")


class _BodyReader:
    """Collects headings, prose blocks and code lines from the token stream of the body.

    ``offset`` is the number of front matter lines: token maps count from the body's start.
    """

    def __init__(self, offset: int) -> None:
        self.offset = offset
        self.headings: list[Heading] = []
        self.blocks: list[Block] = []
        self.code: set[int] = set()
        self.section = ""  # the text of the last heading of level 1 or 2

    def read(self, tokens: Sequence[Token]) -> None:
        for index, token in enumerate(tokens):
            if token.map is None:
                continue
            first = token.map[0] + self.offset + 1  # 1-based line in the full text
            if token.type == "heading_open" and token.level == 0:
                last = token.map[1] + self.offset
                self._heading(int(token.tag[1:]), tokens[index + 1].content, first, last)
            elif token.type == "paragraph_open":
                in_item = index > 0 and tokens[index - 1].type == "list_item_open"
                self._paragraph(tokens[index + 1].content, first, strip_task_box=in_item)
            elif token.type == "tr_open":
                self._table_row(tokens, index, first)
            elif token.type in ("fence", "code_block"):
                self.code.update(range(first, token.map[1] + self.offset + 1))
            elif token.type == "html_block" and not token.content.lstrip().startswith("<!--"):
                self._html(token.content, first)

    def _heading(self, level: int, content: str, first: int, last: int) -> None:
        text = " ".join(part.strip() for part in content.split("\n"))  # a setext heading may wrap
        heading = Heading(first, level, text, last)
        self.headings.append(heading)
        if heading.level <= 2:
            self.section = heading.text

    def _paragraph(self, content: str, first: int, *, strip_task_box: bool) -> None:
        parts = content.split("\n")
        if strip_task_box:
            parts[0] = _TASK_BOX.sub("", parts[0].lstrip())
        self._add_block(parts, first)

    def _html(self, content: str, first: int) -> None:
        """Raw HTML other than a comment shows its text: one block per run of non-blank lines."""
        run: list[str] = []
        run_start = first
        for number, part in enumerate(content.split("\n"), start=first):
            if part.strip():
                run_start = run_start if run else number
                run.append(part)
            else:
                self._add_block(run, run_start, "html")
                run = []
        self._add_block(run, run_start, "html")

    def _table_row(self, tokens: Sequence[Token], index: int, first: int) -> None:
        cells: list[str] = []
        for token in itertools.islice(tokens, index + 1, None):
            if token.type == "tr_close":
                break
            if token.type == "inline":
                cells.append(token.content.strip())
        self._add_block([" | ".join(cells)], first, "row")

    def _add_block(self, parts: list[str], first: int, kind: BlockKind = "paragraph") -> None:
        """A block from consecutive lines starting at line ``first``; blank lines are left out."""
        texts: list[str] = []
        starts: list[int] = []
        numbers: list[int] = []
        offset = 0
        for number, part in enumerate(parts, start=first):
            text = part.strip()
            if not text:
                continue
            starts.append(offset)
            texts.append(text)
            numbers.append(number)
            offset += len(text) + 1
        if texts:
            self.blocks.append(Block(" ".join(texts), tuple(starts), tuple(numbers), self.section, kind))


# ---------------------------------------------------------------------------------------
# Sources and Lessons Applied sections
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _ReservedSection:
    heading: Heading
    end: int  # last line of the section (1-based)
    is_sources: bool
    is_tool: bool = False  # the Adversarial Analysis or the Limitations & Gaps

    @property
    def lines(self) -> range:
        return range(self.heading.line, self.end + 1)


def _reserved_sections(headings: Sequence[Heading], line_count: int) -> list[_ReservedSection]:
    """Each Sources, Lessons Applied or tool section, from its heading to the next heading of
    the same or a higher level (a reserved heading inside one does not start another)."""
    sections: list[_ReservedSection] = []
    for i, heading in enumerate(headings):
        if sections and heading.line <= sections[-1].end:
            continue
        key = heading_key(heading.text)
        if not is_reserved_heading(heading.text):
            continue
        end = line_count
        for later in headings[i + 1 :]:
            if later.level <= heading.level:
                end = later.line - 1
                break
        sections.append(_ReservedSection(heading, end, key in SOURCES_TITLES, key in TOOL_TITLES))
    return sections


def _rejection_note(blocks: Sequence[Block], headings: Sequence[Heading]) -> set[int]:
    """The lines of the tool's rejection note: a block that starts with its mark, above the
    first section (it sits right under the title)."""
    first_section = next((h.line for h in headings if h.level >= 2), None)
    return {
        n
        for b in blocks
        if b.text.startswith(REJECTION_MARK) and (first_section is None or b.line < first_section)
        for n in b.lines
    }


def _source_entries(
    lines: Sequence[str], sections: Sequence[_ReservedSection], code: frozenset[int]
) -> list[SourceEntry]:
    """Numbered entries ("1. x", "[1] x", "- [2]: x") on the lines of the Sources sections."""
    entries: list[SourceEntry] = []
    for section in sections:
        if not section.is_sources:
            continue
        for number in range(section.heading.last_line + 1, section.end + 1):
            entry = _SOURCE_ENTRY.match(lines[number - 1])
            if entry and number not in code:
                entries.append(SourceEntry(number, int(entry.group(1) or entry.group(2)), entry.group(3)))
    return entries


def parse_report(markdown: str) -> ParsedReport:
    """Parse ``markdown`` into the pieces the checks look at."""
    lines = markdown.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    front, body_start = _split_front_matter(lines)
    reader = _BodyReader(body_start)
    reader.read(_parser().parse("\n".join(lines[body_start:])))
    code = frozenset(reader.code)
    sections = _reserved_sections(reader.headings, len(lines))
    reserved = frozenset(n for s in sections if not s.is_tool for n in s.lines)
    tool = frozenset(
        {n for s in sections if s.is_tool for n in s.lines} | _rejection_note(reader.blocks, reader.headings)
    )
    sources_heading = next((s.heading for s in sections if s.is_sources), None)
    return ParsedReport(
        lines=tuple(lines),
        front_matter=front,
        body_start=body_start,
        headings=tuple(reader.headings),
        blocks=tuple(b for b in reader.blocks if b.line not in reserved and b.line not in tool),
        sources=tuple(_source_entries(lines, sections, code)),
        sources_heading=sources_heading,
        code_lines=code,
        reserved_lines=reserved,
        tool_blocks=tuple(b for b in reader.blocks if b.line in tool),
        tool_lines=tool,
    )
