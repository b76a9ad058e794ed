"""Lint checks of repetition: a section, or a paragraph, that says again what the report said.

A weak model loops: the same section a dozen times under new numbers, the same line as
every key finding. Stated by structure, whatever the text:

- a section whose content (every paragraph in it, compared as below) equals an earlier
  section's is critical, at its heading, and its paragraphs are not flagged again;
- a paragraph or list item equal to an earlier one, of any length, is critical; compared
  by its words, case and citations aside (text with no word is compared as written);
- a paragraph of 8 or more words that nearly repeats an earlier one (90% of the words in
  order) is a warning, since two sources can make nearly the same point, unless the
  repetition is a loop: a paragraph repeated three or more times (near or exact copies alike,
  and an exact copy of a near copy is a repeat of the same paragraph), or repeats that make
  up more than a quarter of the prose's words, make every repeat critical;
- a line of a paragraph of several lines (a weak model writes one sentence a line, without the
  blank lines between) that repeats an earlier line word for word, and has 4 or more words, is
  critical like a repeated paragraph, at its own line.

Table rows are compared only when they have 8 or more words: a table repeats short cells.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from difflib import SequenceMatcher
from typing import NamedTuple

from ...text.citations import CITATION, blank, mask_code_and_urls
from ..issues import Issue
from ..markdown import Block, Heading, ParsedReport, is_reserved_heading
from .common import lint_issue

__all__ = ["check_repeats"]

_MIN_NEAR_WORDS = 8
_NEAR_DUPLICATE = 0.9
_SHINGLE = 3
_COMMON_SHINGLE = 200  # a word triple in this many paragraphs says nothing about duplication
_LOOP_REPEATS = 3  # repeats of one paragraph that make a loop
_LOOP_SHARE = 0.25  # the share of the prose's words in repeats that makes a loop

Key = tuple[str, ...]


def _words(block: Block) -> Key:
    text = blank(mask_code_and_urls(block.text), CITATION).lower()
    return tuple(re.findall(r"[^\W_]+", text))


def _key(block: Block, words: Key) -> Key:
    """What two copies of a paragraph share: its ``words``, or its text when it has none."""
    if words:
        return words
    text = "".join(blank(block.text, CITATION).split())
    return ("\0" + text,) if text else ()


class _Read(NamedTuple):
    """A prose block with its words and its comparison key, read once."""

    block: Block
    words: Key
    key: Key


def _shingles(words: Key) -> set[Key]:
    return {words[i : i + _SHINGLE] for i in range(len(words) - _SHINGLE + 1)}


class _NearIndex:
    """Earlier paragraphs of 8 or more words, found again by shared word triples (an inverted
    index), so the cost grows with the overlap between paragraphs, not with their number squared."""

    def __init__(self) -> None:
        self.seen: list[tuple[Block, Key, int]] = []
        self.index: dict[Key, list[int]] = {}

    def find(self, words: Key, shingles: set[Key]) -> Block | None:
        """An earlier paragraph with >= 90% of the words of ``words`` in order, if any."""
        shared: dict[int, int] = {}
        for shingle in shingles:
            postings = self.index.get(shingle, ())
            if len(postings) > _COMMON_SHINGLE:
                continue
            for position in postings:
                shared[position] = shared.get(position, 0) + 1
        for position in sorted(shared):
            block, earlier, earlier_shingles = self.seen[position]
            if shared[position] < 0.5 * min(len(shingles), earlier_shingles):
                continue
            if min(len(words), len(earlier)) / max(len(words), len(earlier)) < _NEAR_DUPLICATE:
                continue
            if SequenceMatcher(None, words, earlier, autojunk=False).ratio() >= _NEAR_DUPLICATE:
                return block
        return None

    def add(self, block: Block, words: Key, shingles: set[Key]) -> None:
        for shingle in shingles:
            self.index.setdefault(shingle, []).append(len(self.seen))
        self.seen.append((block, words, len(shingles)))


def _sections(headings: Sequence[Heading], read: Sequence[_Read]) -> list[tuple[Heading, list[_Read]]]:
    """Each heading (Sources and Lessons Applied aside) with the prose blocks up to the next
    heading, in one pass over both (each is in line order)."""
    starts = [h.line for h in headings]
    blocks: list[list[_Read]] = [[] for _ in headings]
    for item in read:
        owner = bisect.bisect_right(starts, item.block.line) - 1
        if owner >= 0 and item.block.line > headings[owner].last_line:
            blocks[owner].append(item)
    return [(h, found) for h, found in zip(headings, blocks, strict=True) if not is_reserved_heading(h.text)]


def _repeated_sections(doc: ParsedReport, read: Sequence[_Read]) -> tuple[list[Issue], set[int]]:
    """Issues for sections that repeat an earlier one, and the lines of the blocks they hold."""
    first: dict[tuple[Key, ...], Heading] = {}
    issues: list[Issue] = []
    covered: set[int] = set()
    for heading, blocks in _sections(doc.headings, read):
        content = tuple(item.key for item in blocks if item.key)
        if not content:
            continue
        earlier = first.setdefault(content, heading)
        if earlier is heading:
            continue
        covered.update(item.block.line for item in blocks)
        issues.append(
            lint_issue(
                "duplicate_section",
                "critical",
                heading.line,
                "#" * heading.level + " " + heading.text,
                f"repeats the section at line {earlier.line} word for word",
                "write each section once; remove the copies",
            )
        )
    return issues, covered


class _Repeat(NamedTuple):
    """A paragraph that repeats ``earlier`` (exactly or nearly); ``first``: the first paragraph
    of the copies, which every later copy (of it, or of a near copy of it) is counted against."""

    item: _Read
    earlier: Block
    first: Block
    exact: bool


def _find_repeats(read: Sequence[_Read]) -> list[_Repeat]:
    """Every paragraph that repeats an earlier one, with the paragraph it repeats.

    A near copy's own text is remembered too: its exact copies are repeats of the same first
    paragraph, never new paragraphs that only nearly repeat it."""
    seen: dict[Key, tuple[Block, Block]] = {}  # key -> (its first block, the first of its copies)
    near = _NearIndex()
    repeats: list[_Repeat] = []
    for item in read:
        block, words, key = item
        if not key or (block.kind == "row" and len(words) < _MIN_NEAR_WORDS):
            continue
        shingles = _shingles(words) if len(words) >= _MIN_NEAR_WORDS else set()
        if key in seen:
            earlier, first = seen[key]
            repeats.append(_Repeat(item, earlier, first, True))
            continue
        copied = near.find(words, shingles) if shingles else None
        if copied is not None:
            seen[key] = (block, copied)
            repeats.append(_Repeat(item, copied, copied, False))
            continue
        seen[key] = (block, block)
        if shingles:  # later paragraphs are compared with the first copy only
            near.add(block, words, shingles)
    return repeats


def _loops(read: Sequence[_Read], repeats: Sequence[_Repeat]) -> tuple[dict[int, int], float]:
    """How many times each first paragraph is repeated (by its line), and the share of the
    prose's words that repeats hold."""
    counts: dict[int, int] = {}
    for repeat in repeats:
        counts[repeat.first.line] = counts.get(repeat.first.line, 0) + 1
    total = sum(len(item.words) for item in read)
    share = sum(len(r.item.words) for r in repeats) / total if total else 0.0
    return counts, share


def _repeated_paragraphs(read: Sequence[_Read], covered: set[int]) -> list[Issue]:
    repeats = _find_repeats(read)
    counts, share = _loops(read, repeats)
    issues: list[Issue] = []
    for item, earlier, first, exact in repeats:
        if item.block.line in covered:
            continue
        times = counts[first.line]
        loop = times >= _LOOP_REPEATS or share > _LOOP_SHARE
        reason = f"{'repeats' if exact else 'nearly repeats'} the paragraph at line {earlier.line}"
        if loop and not exact:
            reason += (f"; the paragraph at line {first.line} is repeated {times} times" if times >= _LOOP_REPEATS
                       else f"; repeats make up {share:.0%} of the text")  # fmt: skip
        issues.append(
            lint_issue(
                "duplicate_paragraph",
                "critical" if exact or loop else "warning",
                item.block.line,
                " ".join(item.block.text.split()[:12]),
                reason,
                "remove the repetition, or merge the two into one paragraph",
            )
        )
    return issues


_MIN_LINE_WORDS = 4


def _line_words(text: str) -> Key:
    return tuple(re.findall(r"[^\W_]+", blank(mask_code_and_urls(text), CITATION).lower()))


def _repeated_lines(read: Sequence[_Read], flagged: set[int]) -> list[Issue]:
    """Lines of paragraphs of several lines that repeat an earlier line (of any paragraph) word for
    word; a paragraph already flagged (``flagged``: its first line) is not read again."""
    first: dict[Key, int] = {}
    issues: list[Issue] = []
    for block, _, _ in read:
        if block.kind != "paragraph":
            continue
        ends = (*block.starts[1:], len(block.text))
        for line, start, end in zip(block.lines, block.starts, ends, strict=True):
            key = _line_words(block.text[start:end])
            if len(key) < _MIN_LINE_WORDS:
                continue
            earlier = first.setdefault(key, line)
            if earlier == line or len(block.lines) == 1 or block.line in flagged:
                continue
            issues.append(
                lint_issue(
                    "duplicate_paragraph",
                    "critical",
                    line,
                    " ".join(block.text[start:end].split()[:12]),
                    f"repeats line {earlier} word for word",
                    "remove the repetition, or merge the two into one paragraph",
                )
            )
    return issues


def check_repeats(doc: ParsedReport) -> list[Issue]:
    """Repeated sections, paragraphs and lines (see the module docstring)."""
    read = []
    for block in doc.blocks:
        words = _words(block)
        read.append(_Read(block, words, _key(block, words)))
    issues, covered = _repeated_sections(doc, read)
    issues += _repeated_paragraphs(read, covered)
    flagged = covered | {i.line for i in issues if i.line is not None}
    return issues + _repeated_lines(read, flagged)
