"""The passages a draft cites: what the skeptic reads instead of every source's text.

For every sentence of a draft that cites source ``n``, the passage of source ``n``'s
text that best matches that sentence (BM25, :mod:`.passages`). A source the draft
never cites contributes nothing; a passage cited by several sentences comes once.
Within a token budget, the passages of the sentences their sources support least
visibly (the smallest share of the sentence's words found in the passage) come first:
those are the claims an evidence check is for.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from .citations import CITATION, find_citations, sentence_spans
from .controls import one_line
from .masking import blank, blank_spans, mask_code_and_urls
from .passages import estimate_tokens, rank_passages, split_passages, tokenize

__all__ = ["CitedEvidence", "citing_sentences", "cited_passages", "CITED_PASSAGE_WORDS"]

# Passages cut for the skeptic are about a short paragraph: enough context around one
# claim, small enough that a source cited once sends a fraction of its text.
CITED_PASSAGE_WORDS = (60, 100)  # (target, max) words, as split_passages takes them


@dataclass(frozen=True)
class CitedEvidence:
    """``passages``: source number (1-based) -> its cited passages, in document order.

    ``claims`` counts (sentence, source) citations in the draft; ``shown`` how many of
    them have their passage in ``passages`` (fewer when the budget ran out).
    """

    passages: dict[int, tuple[str, ...]]
    claims: int
    shown: int


@dataclass(frozen=True)
class _Claim:
    order: int
    number: int
    passage: int
    support: float  # share of the sentence's words found in the passage


_LIST_MARK = re.compile(r"^(?:[-*+]|\d{1,3}[.)])\s+")


def citing_sentences(markdown: str) -> Iterator[tuple[str, tuple[int, ...]]]:
    """(sentence without its citations, the source numbers it cites) for each citing sentence.

    Sentences are found line by line (a paragraph or a list item is one line in a
    rendered draft); citations inside code, link targets and URLs do not count.
    """
    for line in markdown.splitlines():
        cites = find_citations(line)
        if not cites:
            continue
        plain = blank(mask_code_and_urls(line), CITATION)
        text = blank_spans(line, ((c.start, c.end) for c in cites))  # code and URLs kept: words of the claim
        index = 0
        for start, end in sentence_spans(plain):
            while index < len(cites) and cites[index].start < start:
                index += 1
            numbers: dict[int, None] = {}
            while index < len(cites) and cites[index].start < end:
                numbers.update(dict.fromkeys(cites[index].numbers))
                index += 1
            if numbers:
                yield _LIST_MARK.sub("", one_line(text[start:end])), tuple(numbers)


def _support(sentence: str, passage: str) -> float:
    words = set(tokenize(sentence))
    return len(words & set(tokenize(passage))) / len(words) if words else 1.0


def _claims(markdown: str, split: list[list[str]]) -> list[_Claim]:
    """Each (sentence, cited source) with the source's passage that best matches the sentence.

    When no passage shares a word with the sentence, the source's first passage stands
    in (the reader then sees that the claim is not in the text).
    """
    claims = []
    for order, (sentence, numbers) in enumerate(citing_sentences(markdown)):
        for number in numbers:
            if not 1 <= number <= len(split) or not split[number - 1]:
                continue
            passages = split[number - 1]
            best = rank_passages(passages, sentence)[0][1]
            claims.append(_Claim(order, number, best, _support(sentence, passages[best])))
    return claims


def cited_passages(
    markdown: str, texts: Sequence[str], *, token_budget: int, header_tokens: Sequence[int] = ()
) -> CitedEvidence:
    """The passages of ``texts`` (source ``n`` is ``texts[n - 1]``) that ``markdown`` cites.

    Passages are added claim by claim, least visibly supported first (then in draft
    order), while they fit in ``token_budget``; a source's first passage also pays for
    its header line (``header_tokens[n - 1]``). Numbers outside ``texts`` are ignored.
    """
    target, most = CITED_PASSAGE_WORDS
    split = [split_passages(text, target_words=target, max_words=most) for text in texts]
    claims = _claims(markdown, split)
    chosen: set[tuple[int, int]] = set()
    headed: set[int] = set()
    used = 0
    for claim in sorted(claims, key=lambda c: (c.support, c.order)):
        key = (claim.number, claim.passage)
        cost = estimate_tokens(split[claim.number - 1][claim.passage])
        if claim.number not in headed and claim.number <= len(header_tokens):
            cost += header_tokens[claim.number - 1]
        if key not in chosen and used + cost <= token_budget:
            chosen.add(key)
            headed.add(claim.number)
            used += cost
    passages: dict[int, tuple[str, ...]] = {}
    for number, index in sorted(chosen):
        passages[number] = (*passages.get(number, ()), split[number - 1][index])
    shown = sum(1 for c in claims if (c.number, c.passage) in chosen)
    return CitedEvidence(passages, len(claims), shown)
