"""Whether a report's citations point at text that states what the sentence says.

The rule, computed by the program alone: a citation ``[n]`` in a sentence is *weakly
supported* when the text the writer received for source ``n`` does not state the sentence
by the lexical check of :mod:`research_agent.text.support` (a number or a name of the
sentence missing from the text, its negation differing from the sentences that match it,
or fewer than half of its content words there). A sentence with no key terms is not judged.
A cited sentence counts once as weakly supported however many of its citations are weak.

:func:`citation_support` is pure (report text and ``{source number: text}`` in, counts
out) and fast: a 3,000-word report over 15 sources takes a few milliseconds (see
``bench/bench_memory.py``); ``bench/bench_citations.py`` measures how well the rule judges.
:func:`key_terms` and :func:`term_set` are the rule it replaced, kept for that comparison.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ...measures import CitationFacts, WeakPair
from ...text.citations import CITATION, find_citations, mask_code_and_urls
from ...text.report_body import body_sentences
from ...text.support import Passage, lexical_support, prepare

__all__ = ["MAX_WEAK_PAIRS", "citation_support", "cited_sentence_count", "key_terms", "term_set"]

MAX_WEAK_PAIRS = 5
_TOKEN = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d_]+")
_MIN_RARE = 7
_COMMON = frozenset(
    """about above according across actually address addresses against although already another
    anything because before between believe certain clearly company considered continue control
    current describe described describes different directly discuss discussed discusses during
    example exactly explain explained explains general generally however important include
    included includes including instead largely likely mainly meaning mention mentioned mentions
    moreover nothing overall perhaps possible possibly probably provide provided provides question
    questions quickly rather really recently related relatively remains report reported reports
    research result results several should significant similar similarly something sources
    specific suggest suggests therefore though through together typically usually various whether
    whereas without""".split()
)
_STOP_NAMES = frozenset(
    "a an and as at but by for from if in into it its of on or so than that the their then there these "
    "they this those to was were what when where which while who why will with".split()
)


def _stem(word: str) -> str:
    word = word.lower()
    if len(word) > 3 and word.endswith("s"):
        word = word[:-1]
    return word[:6]


def _number(token: str) -> str:
    return token.replace(",", "").rstrip(".")


def term_set(text: str) -> frozenset[str]:
    """Every token of ``text`` in the form key terms are compared in."""
    return frozenset(_number(t) if t[0].isdigit() else _stem(t) for t in _TOKEN.findall(text))


def _is_name(word: str, first: bool) -> bool:
    if len(word) < 2 or word.lower() in _STOP_NAMES:
        return False
    inner_capital = any(c.isupper() for c in word[1:])
    return inner_capital or (not first and word[0].isupper())


def key_terms(sentence: str) -> frozenset[str]:
    """The key terms of one sentence (citation markers, code and addresses left out), stemmed."""
    plain = CITATION.sub(" ", mask_code_and_urls(sentence))
    terms: set[str] = set()
    for i, token in enumerate(_TOKEN.findall(plain)):
        if token[0].isdigit():
            terms.add(_number(token))
        elif _is_name(token, first=i == 0) or (len(token) >= _MIN_RARE and token.lower() not in _COMMON):
            terms.add(_stem(token))
    return frozenset(terms)


def _cited(sentence: str) -> tuple[int, ...]:
    return tuple(dict.fromkeys(n for cite in find_citations(sentence) for n in cite.numbers))


def citation_support(report: str, texts: Mapping[int, str]) -> CitationFacts:
    """The citation facts of ``report`` given the text the writer received for each source number.

    A citation of a number missing from ``texts`` is not judged (its sentence still counts
    as cited). ``weak_pairs`` holds the first :data:`MAX_WEAK_PAIRS` weak (sentence, source)
    pairs; sentences are numbered 1, 2, ... through the report body (see
    :func:`research_agent.text.report_body.body_sentences`).
    """
    known: dict[int, Passage] = {}
    cited = weak = 0
    pairs: list[WeakPair] = []
    for number, sentence in enumerate(body_sentences(report), start=1):
        sources = _cited(sentence)
        if not sources:
            continue
        cited += 1
        weak_here = False
        for n in sources:
            if n not in texts:
                continue
            if n not in known:
                known[n] = prepare(texts[n])
            if lexical_support(sentence, known[n]).weak:
                weak_here = True
                if len(pairs) < MAX_WEAK_PAIRS:
                    pairs.append(WeakPair(number, n))
        weak += weak_here
    share = round(weak / cited, 2) if cited else 0.0
    return CitationFacts(
        sentences=cited, weakly_supported=weak, weakly_supported_share=share, weak_pairs=tuple(pairs)
    )


def cited_sentence_count(report: str) -> int:
    """Sentences of the report body with at least one citation."""
    return sum(1 for sentence in body_sentences(report) if _cited(sentence))
