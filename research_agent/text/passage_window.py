"""A citation's passage: the window of a source's text that best matches the sentence citing it.

:func:`best_window` is the one definition of "the passage a citation rests on": the HTML
export shows it when a reader hovers or focuses a citation, and a claim check can read
the same window (and its :attr:`PassageWindow.support`) to judge the claim. It needs no
model. The source's sentence that covers the citing sentence's key terms best (a term
weighing more the rarer it is in the source) anchors the window; whole sentences around it
are added while they fit in ``max_words`` words: first those that add more of the key
terms, then the sentences after it and one before it. A source sentence longer than the
window gives its best ``max_words`` words. A citing sentence that shares no key term with
the source gets the source's opening words and a support of 0: the reader then sees that
the claim is not in the text.

A source is read once (its words, where each term occurs, its sentences: :func:`_read`, kept for
the last few sources), however many of its citations ask for a window: a draft cites each source
several times, and the claim check, the run record and the export ask the same sources.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from .passages import tokenize

__all__ = ["PassageWindow", "best_window", "key_terms", "read_source", "PASSAGE_WORDS", "SOURCES_KEPT"]

PASSAGE_WORDS = 120  # at most this many words: a short paragraph a reader takes in at a glance
SOURCES_KEPT = 32  # the sources read last are kept read (:func:`read_source`)

_SENTENCE_END = re.compile(r"[.!?][\"”')\]]*$")


def _stem(term: str) -> str:
    """``reclaims`` and ``reclaim`` as one term (a plural or third-person ``s`` dropped)."""
    if len(term) > 4 and term.endswith("s") and not term.endswith("ss"):
        return term[:-1]
    return term


def key_terms(text: str) -> tuple[str, ...]:
    """The distinct key terms of ``text`` in order: lowercased words, stop words left out."""
    return tuple(dict.fromkeys(_stem(t) for t in tokenize(text)))


@dataclass(frozen=True)
class PassageWindow:
    """Words ``start`` to ``end`` (exclusive) of a source's ``total`` words, as ``text``.

    ``terms`` are the citing sentence's key terms and ``matched`` those found in the window.
    """

    text: str
    start: int
    end: int
    total: int
    terms: tuple[str, ...]
    matched: tuple[str, ...]

    @property
    def support(self) -> float:
        """The share of the sentence's key terms found in the window (1.0 when it has none)."""
        return len(self.matched) / len(self.terms) if self.terms else 1.0

    @property
    def cut_before(self) -> bool:
        """Whether the source has words before the window (shown as a leading ellipsis)."""
        return self.start > 0

    @property
    def cut_after(self) -> bool:
        """Whether the source has words after the window."""
        return self.end < self.total


@dataclass(frozen=True)
class _Source:
    """A source's text read for :func:`best_window`: its words, the words each key term occurs in
    (ascending), and each sentence's (first word, one past the last)."""

    words: tuple[str, ...]
    where: dict[str, tuple[int, ...]]
    spans: tuple[tuple[int, int], ...]


def read_source(text: str) -> None:
    """Read ``text`` for :func:`best_window` now (e.g. while waiting for the draft that cites it):
    the last :data:`SOURCES_KEPT` sources read are kept."""
    _read(text)


@lru_cache(maxsize=SOURCES_KEPT)
def _read(text: str) -> _Source:
    words = text.split()
    where: defaultdict[str, list[int]] = defaultdict(list)
    for i, word in enumerate(words):
        for term in {_stem(t) for t in tokenize(word)}:
            where[term].append(i)
    return _Source(tuple(words), {term: tuple(found) for term, found in where.items()},
                   tuple(_sentence_spans(words)))


def _hits(source: _Source, wanted: set[str]) -> list[set[str]]:
    """For each word of ``source``, the ``wanted`` terms it holds."""
    hits: list[set[str]] = [set() for _ in source.words]
    for term in wanted:
        for i in source.where.get(term, ()):
            hits[i].add(term)
    return hits


def best_window(sentence: str, text: str, *, max_words: int = PASSAGE_WORDS) -> PassageWindow:
    """The window of at most ``max_words`` words of ``text`` that best matches ``sentence``."""
    source = _read(text)
    words = source.words
    terms = key_terms(sentence)
    size = min(max(1, max_words), len(words))
    hits = _hits(source, set(terms))
    if not words or not any(hits):
        return _window(words, 0, size, terms, hits)
    weight = _weights(hits, len(words))
    spans = source.spans
    gains = [_gain(hits[start:end], weight, set()) for start, end in spans]
    anchor = max(range(len(spans)), key=lambda i: (gains[i], -i))
    start, end = spans[anchor]
    if end - start > size:  # one sentence longer than the window: its best part
        start += _best_start(hits[start:end], weight, size)
        return _window(words, start, start + size, terms, hits)
    start, end = _grow(spans, anchor, hits, weight, size)
    return _window(words, start, end, terms, hits)


def _sentence_spans(words: list[str]) -> list[tuple[int, int]]:
    """(first word, one past the last) of each sentence, a sentence ending at ``.``, ``!`` or ``?``."""
    spans, start = [], 0
    for i, word in enumerate(words, start=1):
        if _SENTENCE_END.search(word):
            spans.append((start, i))
            start = i
    if start < len(words):
        spans.append((start, len(words)))
    return spans


def _weights(hits: list[set[str]], total: int) -> dict[str, float]:
    """A term found in few words of the source tells more than one found everywhere."""
    counts = Counter(t for found in hits for t in found)
    return {t: math.log(1 + total / n) for t, n in counts.items()}


def _gain(hits: list[set[str]], weight: dict[str, float], covered: set[str]) -> float:
    """The weight of the terms in ``hits`` that ``covered`` does not hold yet."""
    return sum(weight[t] for t in set().union(*hits) - covered) if hits else 0.0


def _grow(
    spans: Sequence[tuple[int, int]], anchor: int, hits: list[set[str]], weight: dict[str, float], size: int
) -> tuple[int, int]:
    """Whole sentences around the ``anchor`` sentence, at most ``size`` words: first those that add
    terms of the citing sentence, then the sentences after it (what the claim goes on to) and one
    sentence before it, so that the passage opens close to what was cited."""
    low = high = anchor
    covered = set().union(*hits[spans[anchor][0] : spans[anchor][1]])
    context_before = 0
    while True:
        options = []
        for side, i in ((1, high + 1), (0, low - 1)):
            if (
                0 <= i < len(spans)
                and max(spans[high][1], spans[i][1]) - min(spans[low][0], spans[i][0]) <= size
            ):
                gain = _gain(hits[spans[i][0] : spans[i][1]], weight, covered)
                if gain > 0 or side == 1 or context_before < 1:
                    options.append((gain, side, i))
        if not options:
            return spans[low][0], spans[high][1]
        gain, _, i = max(options)
        context_before += gain == 0 and i < low
        covered |= set().union(*hits[spans[i][0] : spans[i][1]])
        low, high = min(low, i), max(high, i)


def _best_start(hits: list[set[str]], weight: dict[str, float], size: int) -> int:
    """The first word of the window of ``size`` words with the most weight of distinct terms
    (more matching words break a tie, then the earlier window)."""
    inside: Counter[str] = Counter()
    score = 0.0
    matches = 0
    for found in hits[:size]:
        for t in found:
            score += weight[t] if inside[t] == 0 else 0.0
            inside[t] += 1
        matches += bool(found)
    best, best_key = 0, (round(score, 6), matches)
    for start in range(1, len(hits) - size + 1):
        for t in hits[start - 1]:
            inside[t] -= 1
            score -= weight[t] if inside[t] == 0 else 0.0
        matches -= bool(hits[start - 1])
        for t in hits[start + size - 1]:
            score += weight[t] if inside[t] == 0 else 0.0
            inside[t] += 1
        matches += bool(hits[start + size - 1])
        key = (round(score, 6), matches)  # rounded: sums and differences of floats drift
        if key > best_key:
            best, best_key = start, key
    return best


def _window(
    words: tuple[str, ...], start: int, end: int, terms: tuple[str, ...], hits: list[set[str]]
) -> PassageWindow:
    found = set().union(*hits[start:end]) if end > start else set()
    return PassageWindow(
        text=" ".join(words[start:end]),
        start=start,
        end=end,
        total=len(words),
        terms=terms,
        matched=tuple(t for t in terms if t in found),
    )
