"""The cited sentences of report text, line by line, where they start and what they cite.

A rendered draft writes a paragraph or a list item on one line, so sentences are found
line by line (:func:`research_agent.text.citations.sentence_spans`, the lint's and the
measures' definition of a sentence); a citation inside code, a link target or a URL does
not count. The same reading serves the claim check (which sentences to check) and the
pass after revision that marks "[Disputed]" (where a sentence starts, what it cites).

The marker counts only where a reader sees it (:func:`research_agent.text.masking.seen_text`):
not inside an HTML comment, code, a link (label or target) or a tag. A marker a reader does
not see is left out of the sentence's text, so every later reading of that text agrees.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from ..text.citations import CITATION, blank, find_citations, mask_code_and_urls, sentence_spans
from ..text.controls import one_line
from ..text.masking import blank_spans, seen_text

__all__ = [
    "LineSentence", "line_sentences", "text_sentences", "DISPUTED", "is_disputed", "without_marker",
    "without_hidden_markers",
]

DISPUTED = "[Disputed]"  # the marker revise and review already use for a claim the sources do not support
_LIST_MARK = re.compile(r"[ \t]*(?:[-*+]|\d{1,3}[.)])[ \t]+")


@dataclass(frozen=True)
class LineSentence:
    """One sentence of a line: ``line[start:end]``, its ``text`` without citation markers
    (whitespace collapsed, a list marker dropped), and the source numbers it cites."""

    start: int
    end: int
    text: str
    numbers: tuple[int, ...]

    @property
    def disputed(self) -> bool:
        return is_disputed(self.text)


def is_disputed(text: str) -> bool:
    """Whether ``text`` carries the "[Disputed]" marker (any case) where a reader sees it."""
    return DISPUTED.lower() in text.lower() and DISPUTED.lower() in seen_text(text).lower()


def _hidden_markers(text: str, seen: str) -> list[tuple[int, int]]:
    """Where ``text`` holds the marker (any case) that ``seen`` (its seen text) does not show."""
    lower, marker = text.lower(), DISPUTED.lower()
    spans, at = [], 0
    while (found := lower.find(marker, at)) >= 0:
        at = found + len(marker)
        if seen[found:at].lower() != marker:
            spans.append((found, at))
    return spans


def without_hidden_markers(text: str) -> str:
    """``text`` with every "[Disputed]" a reader does not see (in a comment, code, a link or a
    tag, across lines too) blanked, offsets kept."""
    if DISPUTED.lower() not in text.lower():
        return text
    return blank_spans(text, _hidden_markers(text, seen_text(text)))


def without_marker(text: str) -> str:
    """``text`` without its "[Disputed]" markers (any case)."""
    lower, marker = text.lower(), DISPUTED.lower()
    pieces, at = [], 0
    while (found := lower.find(marker, at)) >= 0:
        pieces.append(text[at:found])
        at = found + len(marker)
    return " ".join((*pieces, text[at:])).strip() if pieces else text


def _plain(line: str, start: int, end: int, cites: list[tuple[int, int]]) -> str:
    """``line[start:end]`` without its citation markers and the spaces before them."""
    pieces, at = [], start
    for c_start, c_end in cites:
        pieces.append(line[at:c_start].rstrip(" \t"))
        at = c_end
    pieces.append(line[at:end])
    text = one_line("".join(pieces))
    if start == 0:
        marker = _LIST_MARK.match(text)
        if marker:
            text = text[marker.end() :]
    return text


_ENDS = ".!?\"\u201d')"


def _spans(plain: str, seen: str) -> list[tuple[int, int]]:
    """:func:`sentence_spans`, and a sentence that opens with the marker ("... deletes [4]. [Disputed]
    Plain VACUUM ...") starts one of its own: the marker is no word the sentence rule knows.
    ``seen``: the line's seen text (the marker is looked for there)."""
    lower, marker = seen.lower(), DISPUTED.lower()
    spans: list[tuple[int, int]] = []
    for start, end in sentence_spans(plain):
        at = lower.find(marker, start, end)
        while at > start:
            if plain[start:at].rstrip().endswith(tuple(_ENDS)) and plain[start:at].strip(" \t" + _ENDS):
                spans.append((start, at))
                start = at
            at = lower.find(marker, at + len(marker), end)
        spans.append((start, end))
    return spans


def line_sentences(line: str, *, cited_only: bool = True) -> list[LineSentence]:
    """The sentences of one line (only those that cite a source, unless ``cited_only`` is False)."""
    cites = find_citations(line)
    if not cites and cited_only:
        return []
    plain = blank(mask_code_and_urls(line), CITATION)
    seen = seen_text(line)
    if hidden := _hidden_markers(line, seen):
        line = blank_spans(line, hidden)  # a marker no reader sees is no word of the sentence either
    out: list[LineSentence] = []
    index = 0
    for start, end in _spans(plain, seen):
        while index < len(cites) and cites[index].start < start:
            index += 1
        numbers: dict[int, None] = {}
        spans: list[tuple[int, int]] = []
        while index < len(cites) and cites[index].start < end:
            numbers.update(dict.fromkeys(cites[index].numbers))
            spans.append((cites[index].start, cites[index].end))
            index += 1
        if numbers or not cited_only:
            text = _plain(line, start, end, spans)
            if text:
                out.append(LineSentence(start, end, text, tuple(numbers)))
    return out


def text_sentences(markdown: str) -> Iterator[LineSentence]:
    """The cited sentences of ``markdown``, in order, line by line (headings left out)."""
    for line in without_hidden_markers(markdown).splitlines():
        if not line.lstrip().startswith("#"):
            yield from line_sentences(line)
