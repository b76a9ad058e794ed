"""The model's verdict on each checked claim, and the program's check of its quote.

For each cited sentence the model answers ``supported``, ``partial`` or ``unsupported``;
the first two come with a short quote from the passage. The program looks for the quote
in the sentence's passages after folding whitespace, quote marks, dashes, emphasis and
case (as review does when it finds a quoted claim in a draft), word by word (punctuation
at a word's edges aside): a quote is found only when a run of at least
:data:`QUOTE_WORDS` of its words stands in the passage as it stands in the quote, or, for
a quote shorter than that, the whole quote does. An ellipsis stands for words left out: the
pieces around it must all appear, in order, and one of them must be such a run ("a … e …
i" quotes nothing). A ``supported`` or ``partial`` verdict whose quote is not there, or
that gives none, counts as ``partial``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, cast

from ..shapes import Plain
from ..text.controls import one_line
from ..text.sanitize import sanitize
from .select import CitedClaim

__all__ = ["Verdict", "ClaimOutcome", "VERDICTS", "OUTCOMES", "QUOTE_WORDS", "ClaimVerdict", "fold", "quote_found", "read_verdicts"]

Verdict = Literal["supported", "partial", "unsupported"]
ClaimOutcome = Literal["disputed", "removed", "recited", ""]  # "": not an unsupported claim, or still open
VERDICTS: tuple[Verdict, ...] = ("supported", "partial", "unsupported")
_VERDICT: dict[str, Verdict] = {v: v for v in VERDICTS}  # the verdict an answer names, typed
# What became of an unsupported claim after the last revision: a sentence like it is marked
# "[Disputed]"; none is left; or one is left that cites other sources (or none).
OUTCOMES: tuple[ClaimOutcome, ...] = ("disputed", "removed", "recited")
QUOTE_NOT_FOUND = "the quote is not in the passage"
NO_QUOTE = "no quote from the passage was given"
_TEXT_CHARS = 300
_FOLD = str.maketrans(
    {"\u201c": '"', "\u201d": '"', "\u201e": '"', "\u00ab": '"', "\u00bb": '"', "\u2018": "'", "\u2019": "'",
     "\u201a": "'", "`": "'", "\u2013": "-", "\u2014": "-", "\u2212": "-", "*": None, "_": None}
)  # fmt: skip
_ELLIPSES = ("\u2026", "...")
QUOTE_WORDS = 4  # the shortest run of words that quotes a passage rather than happening to match it
_EDGE = "\"'.,;:!?()[]{}<>"


@dataclass(frozen=True)
class ClaimVerdict(Plain):
    """The verdict on cited sentence ``number``: ``source`` is the source whose passage holds
    the quote (else the first it cites), ``location`` that source's address once the run
    record is written; ``note`` says why the program changed the model's verdict ("" when it
    did not); ``outcome`` what became of an unsupported claim (:data:`OUTCOMES`; "" otherwise)."""

    number: int
    sentence: str
    sources: tuple[int, ...]
    # keyword-only, declared here for the run record's key order (source and location after sources)
    source: int | None = field(default=None, kw_only=True)
    location: str = field(default="", kw_only=True)
    verdict: Verdict
    quote: str = ""
    reason: str = ""
    note: str = ""
    outcome: ClaimOutcome = ""

    def with_outcome(self, outcome: ClaimOutcome) -> ClaimVerdict:
        return replace(self, outcome=outcome)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ClaimVerdict:
        """From a run record's entry (checked by the record's schema)."""
        return cls(
            number=int(data.get("number", 0)),
            sentence=str(data.get("sentence", "")),
            sources=tuple(int(n) for n in data.get("sources", ())),
            verdict=cast(Verdict, str(data.get("verdict", ""))),
            quote=str(data.get("quote", "")),
            reason=str(data.get("reason", "")),
            source=data.get("source"),
            location=str(data.get("location", "")),
            note=str(data.get("note", "")),
            outcome=cast(ClaimOutcome, str(data.get("outcome", ""))),
        )


def fold(text: str) -> str:
    """``text`` for comparison: quote marks and dashes made plain, emphasis dropped, lower case,
    whitespace runs as one space."""
    return one_line(sanitize(text).translate(_FOLD).lower())


def _words(text: str) -> list[str]:
    """The folded words of ``text``, punctuation at their edges dropped (a bare mark is no word)."""
    return [w for w in (word.strip(_EDGE) for word in fold(text).split()) if w]


def _pieces(quote: str) -> list[list[str]]:
    """The quote's pieces between ellipses, each as its words (empty pieces left out)."""
    text = fold(quote)
    for mark in _ELLIPSES:
        text = text.replace(mark, "\n")
    return [words for words in (_words(piece) for piece in text.split("\n")) if words]


def quote_found(quote: str, passage: str) -> bool:
    """Whether ``quote`` quotes ``passage`` (see the module docstring): its pieces, in order,
    as whole words of the folded passage, one of them at least :data:`QUOTE_WORDS` words long
    (or the whole quote, with no ellipsis, when it is shorter)."""
    pieces = _pieces(quote)
    total = sum(len(piece) for piece in pieces)
    if not pieces or sum(len(w) for piece in pieces for w in piece) < 3:
        return False
    if total < QUOTE_WORDS and len(pieces) > 1:
        return False  # a short quote must be one run of words: "a ... e ... i" is no quote
    if max(len(piece) for piece in pieces) < min(QUOTE_WORDS, total):
        return False
    haystack, at = " " + " ".join(_words(passage)) + " ", 0
    for piece in pieces:
        needle = " " + " ".join(piece) + " "
        found = haystack.find(needle, at)
        if found < 0:
            return False
        at = found + len(needle) - 1  # the next piece may start at this one's closing space
    return True


def _clean(value: Any) -> str:
    return sanitize(str(value or ""), max_chars=_TEXT_CHARS, single_line=True)


def read_verdicts(items: Iterable[Mapping[str, Any]], claims: Sequence[CitedClaim]) -> tuple[ClaimVerdict, ...]:
    """The verdicts an answer gives on ``claims`` (items ``{n, verdict, quote, reason}``), quotes
    checked; an item for a number not asked, a repeated one, or an unknown verdict is ignored."""
    asked = {c.number: c for c in claims}
    verdicts: dict[int, ClaimVerdict] = {}
    for item in items:
        claim = asked.get(n) if isinstance(n := item.get("n"), int) else None
        verdict = _VERDICT.get(str(item.get("verdict", "")).strip().lower())
        if claim is None or claim.number in verdicts or verdict is None:
            continue
        verdicts[claim.number] = _checked(claim, verdict, _clean(item.get("quote")), _clean(item.get("reason")))
    return tuple(verdicts[n] for n in sorted(verdicts))


def _checked(claim: CitedClaim, verdict: Verdict, quote: str, reason: str) -> ClaimVerdict:
    """The verdict with its quote looked up in the claim's passages."""
    base = ClaimVerdict(claim.number, claim.sentence, claim.sources, verdict, quote, reason, source=claim.sources[0])
    if verdict == "unsupported":
        return base
    holder = next((n for n, passage in claim.passages if quote_found(quote, passage)), None)
    if holder is None:
        return replace(base, verdict="partial", note=NO_QUOTE if not quote else QUOTE_NOT_FOUND)
    return replace(base, source=holder)
