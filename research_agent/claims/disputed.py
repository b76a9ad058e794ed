"""After the last revision: no unsupported claim is silently kept.

Revise was told to remove each unsupported claim, cite a source that supports it, or mark
it "[Disputed]". The program then looks for each one in the final draft: every sentence at
least :data:`SIMILAR` alike (:func:`similarity`, citation markers and the marker itself
left out) that still cites one of the claim's sources and is not marked gets "[Disputed]"
put in front of it. Each unsupported claim ends with an outcome: ``disputed`` (a sentence
like it stands, marked), ``recited`` (one stands that cites other sources, or none) or
``removed`` (none stands).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from .sentences import DISPUTED, LineSentence, line_sentences, without_hidden_markers, without_marker
from .verdicts import ClaimOutcome, ClaimVerdict, fold

__all__ = ["SIMILAR", "Marked", "similarity", "mark_unsupported"]

SIMILAR = 0.8
_COMPARED_CHARS = 1000  # the part of a sentence compared: bounds the quadratic matcher
_LEAD = " \t-*+>"


def _key(text: str) -> str:
    return fold(without_marker(text)).strip(" .!?")[:_COMPARED_CHARS]


def similarity(a: str, b: str) -> float:
    """How alike two sentences read, 0 to 1 (difflib's ratio of their folded text)."""
    return _similarity(_key(a), _matcher(b))


def _matcher(claim: str) -> SequenceMatcher:
    """A matcher holding ``claim``'s key as its second sequence: difflib indexes that one, once."""
    return SequenceMatcher(None, "", _key(claim), autojunk=False)


def _similarity(key: str, matcher: SequenceMatcher) -> float:
    if not key or not matcher.b:  # type: ignore[attr-defined]  # the second sequence; typeshed leaves it out
        return 0.0
    matcher.set_seq1(key)
    if matcher.real_quick_ratio() < SIMILAR or matcher.quick_ratio() < SIMILAR:
        return matcher.quick_ratio()
    return matcher.ratio()


@dataclass(frozen=True)
class Marked:
    """The texts after the pass, how many sentences it marked, and each unsupported claim's
    outcome (``{number: outcome}``)."""

    texts: tuple[str, ...]
    marked: int
    outcomes: dict[int, ClaimOutcome]


def _start(line: str, sentence: LineSentence) -> int:
    """Where the words of ``sentence`` begin in ``line``: after spaces, and for a line's first
    sentence after a list or quote marker ("- ", "1. ", "> ")."""
    at = sentence.start
    lead = _LEAD if sentence.start == 0 else " \t"
    while at < sentence.end and line[at] in lead and not line.startswith("**", at):
        at += 1
    if sentence.start == 0:
        digits = at
        while digits < sentence.end and line[digits].isdigit():
            digits += 1
        if digits > at and line[digits : digits + 2] in (". ", ") "):
            at = digits + 2
    return at


def _mark_line(
    line: str, read: str, claims: Sequence[tuple[ClaimVerdict, SequenceMatcher]], outcomes: dict[int, ClaimOutcome]
) -> tuple[str, int]:
    """``line`` with "[Disputed]" before each unmarked sentence like one of ``claims`` (each
    with a matcher holding its folded key) that still cites its source; how many it marked.
    ``read``: the line as read, markers no reader sees blanked (offsets kept)."""
    to_mark: dict[int, LineSentence] = {}  # by start: one mark per sentence, however many claims it is like
    for sentence in line_sentences(read, cited_only=False):
        key = _key(sentence.text)
        for claim, matcher in claims:
            if _similarity(key, matcher) < SIMILAR:
                continue
            if not set(sentence.numbers) & set(claim.sources):
                outcomes.setdefault(claim.number, "recited")
                continue
            outcomes[claim.number] = "disputed"
            if not sentence.disputed:
                to_mark.setdefault(sentence.start, sentence)
    if not to_mark:
        return line, 0
    pieces, at = [], 0  # joined once: one insertion per marked sentence would copy the line each time
    for sentence in sorted(to_mark.values(), key=lambda found: found.start):
        start = _start(line, sentence)
        pieces += [line[at:start], DISPUTED, " "]
        at = start
    pieces.append(line[at:])
    return "".join(pieces), len(to_mark)


def mark_unsupported(texts: Sequence[str], unsupported: Sequence[ClaimVerdict]) -> Marked:
    """Mark "[Disputed]" in ``texts`` (a draft's parts, in reading order, citations as the
    claims number them) on every unmarked sentence like an ``unsupported`` claim that still
    cites one of its sources; say what became of each claim."""
    outcomes: dict[int, ClaimOutcome] = {}
    keyed = [(claim, _matcher(claim.sentence)) for claim in unsupported]
    marked = 0
    out = []
    for text in texts:
        lines = []
        for line, read in zip(text.split("\n"), without_hidden_markers(text).split("\n"), strict=True):
            if keyed and line.strip() and not line.lstrip().startswith("#"):
                line, count = _mark_line(line, read, keyed, outcomes)
                marked += count
            lines.append(line)
        out.append("\n".join(lines))
    for claim in unsupported:
        outcomes.setdefault(claim.number, "removed")
    return Marked(tuple(out), marked, outcomes)
