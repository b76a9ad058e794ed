"""How much of a writer's answer is read: :class:`DraftLimits` per report length, and
:class:`DraftBound`, which counts an answer as it streams and says where to cut it.

A model that ignores its token limit must not hold a run (or, over MCP, every client) for
minutes of CPU after the draft: the answer is cut at a section, paragraph, word or character
limit as it arrives, so that everything after the draft is linear in a bounded text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["DraftLimits", "DraftBound", "BLOCK_START", "HEADING_START"]

# Where a block (a list item, a heading) starts, and where a heading does: the reader shares them.
BLOCK_START = re.compile(r"^[ \t]{0,3}(?:[-*+][ \t]|\d{1,9}[.)][ \t]|#{1,6}(?:[ \t]|$))")
HEADING_START = re.compile(r"^[ \t]{0,3}#{1,6}(?:[ \t]|$)")
_WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class DraftLimits:
    """How much of a writer's answer is read: sections (headings), paragraphs (blocks), words, characters."""

    sections: int
    paragraphs: int
    words: int
    chars: int

    @classmethod
    def for_target(cls, target_words: int) -> DraftLimits:
        """The limits for a report of about ``target_words`` words: three times its length, and
        room for its 2-5 body sections (and a weak model's many one-line sections) several times
        over (standard, 1,200 words: 32 sections, 140 paragraphs, 3,600 words, 36,000 characters)."""
        words = 3 * target_words
        return cls(sections=8 + target_words // 50, paragraphs=20 + target_words // 10, words=words, chars=10 * words)


class DraftBound:
    """Counts a writer's answer as it arrives and says when it passes its :class:`DraftLimits`.

    :meth:`feed` takes each piece (time linear in the pieces); once over, :attr:`cut_at` is the
    offset the draft ends at: the start of the heading or paragraph one past the limit
    (:attr:`at_block` True: what comes before it is complete), or where the words or characters
    ran out (a block cut in the middle). :attr:`why` names the limit."""

    def __init__(self, limits: DraftLimits) -> None:
        self.limits = limits
        self.chars = self.words = self.sections = self.paragraphs = 0
        self.cut_at: int | None = None
        self.at_block = False
        self.why = ""
        self._head = ""  # the first characters of the line still arriving
        self._line_start = 0
        self._blank_before = True
        self._in_word = False

    @property
    def over(self) -> bool:
        return self.cut_at is not None

    def feed(self, piece: str) -> bool:
        """Count ``piece``; True once the answer has passed a limit (and from then on)."""
        if self.over or not piece:
            return self.over
        offset = start = self.chars
        for number, line in enumerate(piece.split("\n")):
            if number:
                self._line_ended(offset)
                offset += 1
                if self.over:
                    break
            if len(self._head) < 16:
                self._head += line[: 16 - len(self._head)]
            offset += len(line)
        before = self.words
        self._count_words(piece)
        self.chars += len(piece)
        if self.words > self.limits.words:
            self._cut(start + _end_of_word(piece, self.limits.words - before), "words")
        if self.chars > self.limits.chars:
            self._cut(self.limits.chars, "characters")
        return self.over

    def _cut(self, at: int, why: str, *, at_block: bool = False) -> None:
        """Cut at ``at`` unless an earlier limit cut before it."""
        if self.cut_at is None or at < self.cut_at:
            self.cut_at, self.why, self.at_block = at, why, at_block

    def _count_words(self, piece: str) -> None:
        words = len(piece.split())
        if words and self._in_word and not piece[0].isspace():
            words -= 1  # a word that began in the piece before
        self.words += words
        self._in_word = not piece[-1].isspace()

    def _line_ended(self, end: int) -> None:
        head, start = self._head, self._line_start
        self._head, self._line_start = "", end + 1
        if not head.strip():
            self._blank_before = True
            return
        starts_block = self._blank_before or bool(BLOCK_START.match(head))
        self._blank_before = False
        if HEADING_START.match(head):
            self.sections += 1
            if self.sections > self.limits.sections:
                self._cut(start, "sections", at_block=True)
                return
        if starts_block:
            self.paragraphs += 1
            if self.paragraphs > self.limits.paragraphs:
                self._cut(start, "paragraphs", at_block=True)


def _end_of_word(piece: str, count: int) -> int:
    """The offset in ``piece`` where its ``count``-th word ends (0 for none)."""
    end = 0
    for number, match in enumerate(_WORD.finditer(piece), start=1):
        if number > count:
            break
        end = match.end()
    return end
