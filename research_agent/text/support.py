"""Does a passage state what a sentence says? The lexical check, by the program alone.

A cited sentence is *weakly supported* by a passage when any of these holds:

* a **number** of the sentence (``995``, ``1,000`` = ``1000``, ``3.11``) is not in the passage;
* a **name** of the sentence is not in the passage: an identifier (``os.path``,
  ``follow_symlinks``, ``SameFileError``, ``VACUUM``) anywhere, or a capitalised word after
  the sentence's first;
* its **negation differs** from the passage sentences that match it best (as many as it has):
  they say "not", "never", "cannot", "without"... a different number of times;
* fewer than half of its **content words** occur in the passage (:data:`MIN_COVERAGE`), compared by a
  light stem (suffixes such as ``-ing``, ``-ed``, ``-s``, ``-ion`` dropped, then the first 6
  letters), so ``reclaims`` matches ``reclaimed``.

A sentence with no content word, number or name is not judged. The rule was tuned on the
development half of a labelled set built from the Python documentation and is measured on
the other half by ``bench/bench_citations.py`` (see ``tests/data/claims/``).

:func:`prepare` reads a passage once (and keeps the last few: the claim check and the run's
citation facts read the same sources); :func:`lexical_support` judges one sentence against it.
Both are linear in their input and import nothing heavier than ``re`` (and the passage
windows' bound on the sources kept read).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from .citations import CITATION, mask_code_and_urls
from .passage_window import SOURCES_KEPT

__all__ = ["MIN_COVERAGE", "Passage", "LexicalVerdict", "prepare", "lexical_support", "stem"]

MIN_COVERAGE = 0.5  # share of the sentence's content words the passage must hold

_TOKEN = re.compile(r"\d+(?:[.,]\d+)*|[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_NEGATIONS = frozenset("not no never cannot neither nor without nothing nobody unable".split())  # not "none": Python's None
_SUFFIXES = ("ational", "ations", "ation", "ings", "ing", "edly", "ed", "ies", "es", "s", "ly", "ions", "ion", "ment")
_STOP = frozenset(
    """a about above after again against all also am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further had has
    have having he her here hers him his how i if in into is it its itself just me more most my no nor
    not of off on once only or other our out over own same she should so some such than that the their
    them then there these they this those through to too under until up very was we were what when
    where which while who whom why will with would you your may might must shall also however thus
    therefore instead rather either neither whether etc via per each every such much many one two
    like used using use uses see given""".split()
)


@lru_cache(maxsize=8192)
def stem(word: str) -> str:
    """A light stem: lower case, one common suffix dropped, the first 6 letters."""
    word = word.lower()
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return word[:6]


def _number(token: str) -> str:
    return token.replace(",", "").rstrip(".")


def _is_identifier(token: str) -> bool:
    letters = token.replace(".", "").replace("_", "")
    return (
        "." in token
        or "_" in token.strip("_")
        or any(c.isupper() for c in token[1:])
        or (len(letters) >= 2 and letters.isupper())
    )


@dataclass(frozen=True)
class _Terms:
    numbers: frozenset[str]
    names: frozenset[str]
    content: frozenset[str]
    negations: int


@lru_cache(maxsize=1024)  # a claim is judged against each source it cites, and again for the run's facts
def _terms(text: str) -> _Terms:
    numbers: set[str] = set()
    names: set[str] = set()
    content: set[str] = set()
    negations = text.lower().count("n't")
    for i, token in enumerate(_TOKEN.findall(text)):
        if token[0].isdigit():
            numbers.add(_number(token))
            continue
        lower = token.lower()
        negations += lower in _NEGATIONS
        if _is_identifier(token) or (i > 0 and token[0].isupper() and lower not in _STOP):
            names.add(lower)
        for part in lower.split("."):
            if len(part) >= 3 and part not in _STOP:
                content.add(stem(part))
    return _Terms(frozenset(numbers), frozenset(names), frozenset(content), negations)


@dataclass(frozen=True)
class Passage:
    """A passage read once: its numbers, names and stems, and each of its sentences' terms."""

    numbers: frozenset[str]
    names: frozenset[str]
    tokens: frozenset[str]
    content: frozenset[str]
    sentences: tuple[_Terms, ...]


@lru_cache(maxsize=SOURCES_KEPT)  # as many as the passage windows keep read: a claim check reads both
def prepare(text: str) -> Passage:
    """Read ``text`` (a passage or a whole source) for :func:`lexical_support`."""
    sentences = tuple(_terms(part) for part in _SENTENCE.split(text) if part.strip())
    tokens = frozenset(t.lower() for t in _TOKEN.findall(text))
    return Passage(
        numbers=frozenset(n for s in sentences for n in s.numbers),
        names=frozenset(n for s in sentences for n in s.names),
        tokens=tokens | frozenset(part for t in tokens for part in t.split(".")),
        content=frozenset(c for s in sentences for c in s.content),
        sentences=sentences,
    )


@dataclass(frozen=True)
class LexicalVerdict:
    """``weak``: the passage does not state the sentence, by the rule above; ``reason`` says
    which part failed (empty when supported or not judged); ``coverage``: the share of the
    sentence's content words found (None when the sentence has none)."""

    weak: bool
    reason: str = ""
    coverage: float | None = None


def lexical_support(sentence: str, passage: Passage) -> LexicalVerdict:
    """Judge one sentence (its citation markers, code and addresses left out) against a passage."""
    plain = CITATION.sub(" ", mask_code_and_urls(sentence))
    terms = _terms(plain)
    if not (terms.content or terms.numbers or terms.names):
        return LexicalVerdict(False)
    coverage = len(terms.content & passage.content) / len(terms.content) if terms.content else None
    missing_number = sorted(terms.numbers - passage.numbers)
    if missing_number:
        return LexicalVerdict(True, f"number {missing_number[0]} is not in the passage", coverage)
    missing_name = sorted(n for n in terms.names if n not in passage.tokens)
    if missing_name:
        return LexicalVerdict(True, f"name {missing_name[0]} is not in the passage", coverage)
    if coverage is not None and coverage < MIN_COVERAGE:
        return LexicalVerdict(True, f"{coverage:.0%} of its words are in the passage", coverage)
    if _best_negations(passage, terms, len(_SENTENCE.split(plain.strip()))) != terms.negations:
        return LexicalVerdict(True, "its negation differs from the passage", coverage)
    return LexicalVerdict(False, "", coverage)


def _best_negations(passage: Passage, terms: _Terms, size: int) -> int:
    """The negations in the ``size`` consecutive passage sentences that share the most content
    words with the sentence (the first such run on a tie); the sentence's own count when the
    passage has no sentences."""
    sentences = passage.sentences
    if not sentences:
        return terms.negations
    size = max(1, min(size, len(sentences), 5))  # a claim is a sentence or two; bounded, so linear
    best_overlap, best = -1, terms.negations
    for start in range(len(sentences) - size + 1):
        run = sentences[start : start + size]
        overlap = len(terms.content & frozenset().union(*(s.content for s in run)))
        if overlap > best_overlap:
            best_overlap, best = overlap, sum(s.negations for s in run)
    return best
