"""Where citations cannot be: inline code, link targets and URLs, found in linear time.

:func:`seen_text` goes further, for the markers a reader must see ("[Disputed]"): it also blanks
HTML comments and tags, whole links (their words belong to the link, not to the sentence) and
link reference definitions.

Everything here runs on model output and report text of any size, so no search may
rescan what an earlier failed attempt already read: inline code is found by a scanner
over backtick runs, and the patterns stop at the first character that could begin the
next attempt (a ``]`` for a link target, a character of the run itself for an e-mail
address), so each character is read a bounded number of times.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

__all__ = ["blank", "blank_spans", "blank_code", "code_spans", "cut_blocks", "mask_code_and_urls", "seen_text"]

_BACKTICKS = re.compile(r"`+")
# "](target)" or '](target "title")': the target stops at the next "]" (where another attempt starts).
_LINK_TARGET = re.compile(r"\]\([^)\s\]]*+(?:\s++\"[^\"]*+\")?\)")
# An address, or an e-mail address starting where its run of name characters starts.
_URL = re.compile(r"\b(?:https?://|www\.)\S++|(?<![\w.+-])[\w.+-]++@[\w-]++\.[\w.-]++")
_COMMENT_OPEN = re.compile(r"<!--")
_COMMENT_CLOSE = re.compile(r"-->")
# A raw HTML tag or an autolink (``<b>``, ``</span>``, ``<a href="...">``, ``<https://...>``): what a
# renderer turns into markup or a link, never into words of the sentence. It stops at the next "<".
_TAG = re.compile(r"<[A-Za-z/!?][^<>\n]*+>")
# "[label]: target" on a line of its own defines a link and shows nothing.
_REFERENCE = re.compile(r"(?m)^ {0,3}\[[^\]\n]++\]:[^\n]*+")
_BRACKET = re.compile(r"[\[\]]")


def blank_spans(text: str, spans: Iterable[tuple[int, int]], *, keep: int = 0) -> str:
    """``text`` with each (start, end) span, but for its first ``keep`` characters, turned
    into spaces (offsets kept). Spans must be in order and must not overlap."""
    pieces: list[str] = []
    last = 0
    for start, end in spans:
        cut = min(start + keep, end)
        pieces += [text[last:cut], " " * (end - cut)]
        last = end
    pieces.append(text[last:])
    return "".join(pieces)


def blank(text: str, pattern: re.Pattern[str], keep_brackets: bool = False) -> str:
    """``text`` with every match of ``pattern`` turned into spaces (offsets kept);
    ``keep_brackets`` keeps a match's first two characters ("](" stays, so it is no citation)."""
    return blank_spans(text, (m.span() for m in pattern.finditer(text)), keep=2 if keep_brackets else 0)


def code_spans(text: str) -> Iterator[tuple[int, int]]:
    """The (start, end) of each inline code span: a run of backticks up to the next run of
    the same length on the same line (CommonMark's rule, within a line). Linear: each run
    knows the next run of its length, found in one pass from the end."""
    runs = [m.span() for m in _BACKTICKS.finditer(text)]
    if len(runs) < 2:
        return
    lines: list[int] = []
    line, last = 0, 0
    for start, _ in runs:
        line += text.count("\n", last, start)
        lines.append(line)
        last = start
    following: list[int | None] = [None] * len(runs)
    seen: dict[int, int] = {}
    for i in range(len(runs) - 1, -1, -1):
        length = runs[i][1] - runs[i][0]
        following[i] = seen.get(length)
        seen[length] = i
    i = 0
    while i < len(runs):
        j = following[i]
        if j is not None and lines[j] == lines[i]:
            yield runs[i][0], runs[j][1]
            i = j + 1
        else:
            i += 1


def blank_code(text: str) -> str:
    """``text`` with its inline code spans blanked."""
    return blank_spans(text, code_spans(text))


def mask_code_and_urls(text: str) -> str:
    """``text`` with inline code, link targets and URLs blanked: where citations cannot be."""
    text = blank_code(text)
    text = blank(text, _LINK_TARGET, keep_brackets=True)
    return blank(text, _URL)


def _comment_spans(text: str) -> Iterator[tuple[int, int]]:
    """Each HTML comment, ``<!--`` to the next ``-->`` (an unclosed one runs to the end, as a
    renderer hides it), in one pass."""
    at = 0
    while (start := _COMMENT_OPEN.search(text, at)) is not None:
        end = _COMMENT_CLOSE.search(text, start.end())
        at = end.end() if end is not None else len(text)
        yield start.start(), at


def _link_spans(text: str) -> list[tuple[int, int]]:
    """Each inline link or image, ``[`` (or ``![``) to the end of its ``(target)``, outermost
    only: brackets are matched with a stack in one pass, and a ``]`` followed by a target
    closes the link its matching ``[`` opened."""
    opened: list[int] = []
    spans: list[tuple[int, int]] = []
    for m in _BRACKET.finditer(text):
        if m.group() == "[":
            opened.append(m.start())
            continue
        if not opened:
            continue
        start = opened.pop()
        target = _LINK_TARGET.match(text, m.start())
        if target is None:
            continue
        start -= start > 0 and text[start - 1] == "!"
        while spans and spans[-1][0] >= start:  # a link inside this one's label
            spans.pop()
        spans.append((start, target.end()))
    return spans


def seen_text(text: str) -> str:
    """``text`` with what a reader of the rendered markdown does not read as words of its
    sentences blanked (offsets kept): HTML comments (an unclosed one to the end), inline code,
    raw HTML tags and autolinks, whole links and images (label and target), link reference
    definitions and bare URLs. A marker the program reads as the writer's word ("[Disputed]")
    counts only where it stands in what is left."""
    text = blank_spans(text, _comment_spans(text))
    text = blank_code(text)
    text = blank(text, _REFERENCE)
    text = blank_spans(text, _link_spans(text))
    text = blank(text, _TAG)
    return blank(text, _URL)


def cut_blocks(text: str, opening: re.Pattern[str], closing: re.Pattern[str]) -> str:
    """``text`` without each block from a match of ``opening`` to the first match of ``closing``
    after it (what ``opening.*?closing`` with DOTALL removes, in one pass: an opening with no
    closing after it ends the search, where the lazy pattern would rescan to the end from
    every later opening)."""
    pieces: list[str] = []
    last = 0
    while (start := opening.search(text, last)) is not None:
        end = closing.search(text, start.end())
        if end is None:
            break
        pieces.append(text[last : start.start()])
        last = end.end()
    pieces.append(text[last:])
    return "".join(pieces)
