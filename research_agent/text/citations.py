"""Citation markers in report text: how they are found, and one renumbering for a whole report.

A citation is ``[3]``, ``[2, 5]`` or ``[3-6]`` (never a link label such as ``[3](...)``),
outside inline code, link targets and URLs. The lint (review/lint.py) and the renderer
(report.py) share these definitions, so what the renderer writes is exactly what the
lint reads.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple

from .masking import blank, mask_code_and_urls

__all__ = [
    "CITATION",
    "CITED",
    "REMOVED_MARK",
    "Renumbered",
    "blank",
    "citation_numbers",
    "find_citations",
    "mask_code_and_urls",
    "normalize_citations",
    "remap_citations",
    "renumber",
    "sentence_spans",
    "strip_citations",
]

CITATION = re.compile(r"\[(\d{1,4}(?:\s*[-–,]\s*\d{1,4})*)\](?!\()")
_RANGE_CAP = 50

# What replaces a citation that resolves to no source, when nothing else supports the sentence.
REMOVED_MARK = "(citation removed)"
# A citation, or the mark left where one that resolved to no source was removed: the places a
# sentence was cited. The lint reads both alike, so a report reads the same before renumbering
# (the run's review of its draft) and after (``review`` of the file).
CITED = re.compile(rf"{CITATION.pattern}|{re.escape(REMOVED_MARK)}")


def citation_numbers(inner: str) -> list[int]:
    """The numbers of a citation's inside: "2, 5" -> [2, 5]; "3-6" -> [3, 4, 5, 6]."""
    if inner.isdigit():
        return [int(inner)]
    numbers: list[int] = []
    for part in inner.split(","):
        bounds = [p.strip() for p in re.split(r"[-–]", part) if p.strip()]
        if len(bounds) == 2:
            low, high = int(bounds[0]), int(bounds[1])
            if low <= high and high - low <= _RANGE_CAP:
                numbers.extend(range(low, high + 1))
            else:
                numbers.extend((low, high))
        elif bounds:
            numbers.append(int(bounds[0]))
    return numbers


@dataclass(frozen=True)
class FoundCitation:
    start: int
    end: int
    numbers: tuple[int, ...]


def find_citations(text: str) -> list[FoundCitation]:
    """The citations in ``text`` (code and URLs excluded), with their offsets."""
    if "[" not in text:
        return []
    return _citations_in(mask_code_and_urls(text))


def _citations_in(masked: str) -> list[FoundCitation]:
    return [FoundCitation(m.start(), m.end(), tuple(citation_numbers(m.group(1)))) for m in CITATION.finditer(masked)]


_ABBREVIATIONS = {
    "e.g", "i.e", "vs", "etc", "al", "dr", "mr", "mrs", "ms", "prof", "fig", "no", "approx",
    "cf", "st", "jr", "sr", "inc", "ltd", "co", "corp", "u.s", "u.k", "e.u", "jan", "feb",
    "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "est", "ca",
}  # fmt: skip
_BOUNDARY = re.compile(r"[.!?][\"”')\]]*(?:\s*\[\d[\d,\s\-–]*\])*\s+(?=[A-Z0-9\"“(*_])")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) spans of the sentences in ``text``; a citation after the stop stays with it."""
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _BOUNDARY.finditer(text):
        word = re.search(r"([\w.]+)[.!?][\"”')\]]*$", text[max(start, m.start() - 40) : m.start() + 1])
        if word:
            token = word.group(1).lower()
            if token in _ABBREVIATIONS or (len(token) == 1 and token.isalpha()):
                continue
        spans.append((start, m.end()))
        start = m.end()
    if start < len(text):
        spans.append((start, len(text)))
    return spans


# ---------------------------------------------------------------------------------------
# Renumbering a whole report through one map
# ---------------------------------------------------------------------------------------

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]")
_JOINED_RANGE = re.compile(r"\[(\d{1,4})\]\s*[-–]\s*\[(\d{1,4})\]")
# "source 3", "sources 3 and 5", "source #4": plain mentions of source numbers.
_MENTION = re.compile(
    r"\b(sources?)\s+#?(\d{1,3}(?:\s*(?:,|-|–|\band\b|&|\bor\b)\s*\d{1,3})*)(?![\w%]|[.,]\d)", re.I
)


_MAYBE_MENTION = re.compile(r"source", re.I)  # most lines have none: they skip the masking


@dataclass(frozen=True)
class Renumbered:
    """Texts rewritten through one map.

    ``order[i]`` is the old number that new number ``i + 1`` stands for; ``removed``
    counts the citation numbers that resolved to no source and were taken out.
    """

    texts: tuple[str, ...]
    order: tuple[int, ...]
    removed: int


LineKind = Literal["code", "heading", "text"]


def _lines(text: str) -> Iterator[tuple[LineKind, str]]:
    """(kind, line) for each line: kind is "code" (fenced), "heading" or "text"."""
    fence: str | None = None
    for line in text.split("\n"):
        if fence is not None:
            stripped = line.strip()
            if stripped.startswith(fence) and not stripped.strip(fence[0]):
                fence = None
            yield "code", line
            continue
        opening = _FENCE.match(line)
        if opening:
            fence = opening.group(1)
            yield "code", line
        elif _HEADING.match(line):
            yield "heading", line
        else:
            yield "text", line


def _sub_outside_code(text: str, pattern: re.Pattern[str], repl: Callable[[re.Match[str]], str | None]) -> str:
    """Replace matches of ``pattern`` found in the masked text (not in code or URLs)."""
    masked = mask_code_and_urls(text)
    pieces: list[str] = []
    last = 0
    for m in pattern.finditer(masked):
        replacement = repl(m)
        if replacement is None:
            continue
        pieces += [text[last : m.start()], replacement]
        last = m.end()
    return "".join(pieces) + text[last:]


def _prepare_line(line: str, source_count: int) -> str:
    """Join "[3]-[6]" into "[3-6]" and bracket plain mentions ("source 4" -> "source [4]")."""

    def join(m: re.Match[str]) -> str | None:
        low, high = int(m.group(1)), int(m.group(2))
        return f"[{low}-{high}]" if low < high and high - low <= _RANGE_CAP else None

    def mention(m: re.Match[str]) -> str | None:
        inner = re.sub(r"\s*(?:\band\b|&|\bor\b)\s*", ", ", m.group(2), flags=re.I)
        numbers = citation_numbers(inner)
        if not numbers or not all(1 <= n <= source_count for n in numbers):
            return None  # not a source number of this report: leave the words alone
        return f"{line[m.start(1) : m.end(1)]} [{inner}]"

    if "]" in line:
        line = _sub_outside_code(line, _JOINED_RANGE, join)
    return _sub_outside_code(line, _MENTION, mention) if _MAYBE_MENTION.search(line) else line


class _Line(NamedTuple):  # a NamedTuple: a report of 2 million lines builds one per line
    """A line of a report once masked: its kind, text, masked text and citations (none in code)."""

    kind: LineKind
    text: str
    masked: str = ""
    cites: tuple[FoundCitation, ...] = ()


def _scan(text: str) -> list[_Line]:
    """Every line of ``text``, masked and its citations found once for both passes of renumbering."""
    lines = []
    for kind, line in _lines(text):
        if kind == "code" or "[" not in line:
            lines.append(_Line(kind, line))
            continue
        masked = mask_code_and_urls(line)
        lines.append(_Line(kind, line, masked, tuple(_citations_in(masked))))
    return lines


def _first_appearance(texts: Sequence[list[_Line]], source_count: int) -> list[int]:
    order: list[int] = []
    seen: set[int] = set()
    for text in texts:
        for line in text:
            if line.kind != "text":
                continue
            for cite in line.cites:
                for number in cite.numbers:
                    if 1 <= number <= source_count and number not in seen:
                        seen.add(number)
                        order.append(number)
    return order


def _rewrite_line(line: str, new_of: dict[int, int], *, heading: bool, scanned: _Line | None = None) -> tuple[str, int]:
    """The line with every citation renumbered; unresolved ones removed or marked."""
    if scanned is None:
        masked = mask_code_and_urls(line)
        scanned = _Line("text", line, masked, tuple(_citations_in(masked)))
    cites = scanned.cites
    if not cites:
        return line, 0
    plans = []
    for cite in cites:
        new = [] if heading else sorted({new_of[n] for n in cite.numbers if n in new_of})
        bad = sum(1 for n in cite.numbers if n not in new_of)
        plans.append((cite, new, bad))
    marked = set() if heading else _marked_citations(scanned.masked, plans)
    pieces: list[str] = []
    last = 0
    for cite, new, _ in plans:
        begin = cite.start
        if new:
            replacement = f"[{', '.join(map(str, new))}]"
        elif cite.start in marked:
            replacement = REMOVED_MARK
        else:  # take the space before it too: "claim [99]." -> "claim."
            replacement = ""
            while begin > last and line[begin - 1] in " \t":
                begin -= 1
        pieces += [line[last:begin], replacement]
        last = cite.end
    pieces.append(line[last:])
    out = "".join(pieces)
    return out, sum(bad for _, _, bad in plans)


def _marked_citations(masked: str, plans: list[tuple[FoundCitation, list[int], int]]) -> set[int]:
    """Starts of the citations to mark as removed: in each sentence whose citations are all
    unresolved, the last one. Citations and sentences are both in order: one walk over each."""
    marked: set[int] = set()
    index = 0
    for start, end in sentence_spans(blank(masked, CITATION)):
        while index < len(plans) and plans[index][0].start < start:
            index += 1
        inside = []
        while index < len(plans) and plans[index][0].start < end:
            inside.append(plans[index])
            index += 1
        if any(bad for _, _, bad in inside) and not any(new for _, new, _ in inside):
            marked.add(max(c.start for c, _, bad in inside if bad))
    return marked


def normalize_citations(text: str, source_count: int) -> str:
    """``text`` with its citations written as a report prints them: "[3]-[6]" joined into "[3-6]",
    and plain mentions of source numbers ("source 4", "sources 2 and 5") bracketed ("source [4]",
    "sources [2, 5]") when every number names one of ``source_count`` sources; fenced code is left
    alone. It is the first step of :func:`renumber`, and a draft reads this way from the moment it
    is written, so the run's review reads the citations ``review`` of the published file reads.
    Applying it twice changes nothing."""
    return "\n".join(line if kind == "code" else _prepare_line(line, source_count) for kind, line in _lines(text))


def renumber(texts: Sequence[str], source_count: int) -> Renumbered:
    """Renumber the citations of ``texts`` (one report, in reading order) by first appearance.

    Sources never cited get no number. A citation number with no source (0, or above
    ``source_count``) is removed; a sentence left with no valid citation by that is
    marked with :data:`REMOVED_MARK`. Plain mentions ("source 4") of valid numbers are
    turned into citations first, so they are renumbered too. Citations in headings are
    dropped (a heading is no place for one), and fenced code is left alone.
    """
    scanned = [_scan(normalize_citations(text, source_count)) for text in texts]
    order = _first_appearance(scanned, source_count)
    new_of = {old: i + 1 for i, old in enumerate(order)}
    removed = 0
    rewritten: list[str] = []
    for text in scanned:
        lines = []
        for line in text:
            out = line.text
            if line.kind != "code":
                out, count = _rewrite_line(line.text, new_of, heading=line.kind == "heading", scanned=line)
                removed += count
            lines.append(out)
        rewritten.append("\n".join(lines))
    return Renumbered(tuple(rewritten), tuple(order), removed)


def remap_citations(text: str, new_of: dict[int, int]) -> str:
    """``text`` with each citation number ``n`` written as ``new_of[n]`` (a draft written from one
    list of sources, cited by the positions of another); a number ``new_of`` lacks is removed as
    :func:`renumber` removes one with no source. Fenced code is left alone."""
    return "\n".join(
        line if kind == "code" else _rewrite_line(line, new_of, heading=False)[0] for kind, line in _lines(text)
    )


def strip_citations(text: str) -> str:
    """``text`` without citation markers (for titles and headings)."""
    return _rewrite_line(text, {}, heading=True)[0].strip()
