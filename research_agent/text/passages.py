"""Split long text into passages and pick the ones that best answer a query.

Used for web pages and any text whose passages are not already ranked by the local
index. Ranking is BM25 over the passages of one document, which is cheap and needs
no model.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable

__all__ = ["split_passages", "rank_passages", "select_passages", "estimate_tokens", "tokenize"]

_WORD = re.compile(r"\w+", re.UNICODE)
_STOP = frozenset(
    "a an and are as at be by for from has have how in is it its of on or that the this to was were what when "
    "where which who why will with does do did can".split()
)


def tokenize(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _STOP]


def estimate_tokens(text: str) -> int:
    """A model-agnostic estimate: about four characters a token."""
    return (len(text) + 3) // 4


def split_passages(text: str, *, target_words: int = 120, max_words: int = 220) -> list[str]:
    """Split on paragraphs, packing short ones together and cutting long ones."""
    passages: list[str] = []
    current: list[str] = []
    count = 0
    for para in re.split(r"\n\s*\n", text):
        words = para.split()
        if not words:
            continue
        if len(words) > max_words:
            if current:
                passages.append(" ".join(current))
                current, count = [], 0
            cut = 0  # an index, not words = words[target_words:]: that copies the rest at every cut
            while len(words) - cut > max_words:
                passages.append(" ".join(words[cut : cut + target_words]))
                cut += target_words
            words = words[cut:]
        if count + len(words) > max_words and current:
            passages.append(" ".join(current))
            current, count = [], 0
        current.extend(words)
        count += len(words)
        if count >= target_words:
            passages.append(" ".join(current))
            current, count = [], 0
    if current:
        passages.append(" ".join(current))
    return passages


def rank_passages(passages: list[str], query: str) -> list[tuple[float, int]]:
    """BM25 scores of ``passages`` against ``query`` as (score, index), best first."""
    terms = set(tokenize(query))
    if not passages:
        return []
    docs = [Counter(tokenize(p)) for p in passages]
    avg_len = sum(sum(d.values()) for d in docs) / len(docs) or 1.0
    n = len(docs)
    df = {t: sum(1 for d in docs if t in d) for t in terms}
    k1, b = 1.2, 0.75
    scored = []
    for i, doc in enumerate(docs):
        length = sum(doc.values())
        score = 0.0
        for t in terms:
            tf = doc.get(t, 0)
            if not tf:
                continue
            idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
            score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / avg_len))
        scored.append((score, i))
    scored.sort(key=lambda s: (-s[0], s[1]))
    return scored


def select_passages(
    text: str, queries: Iterable[str], *, token_budget: int, target_words: int = 120, max_words: int = 220
) -> str:
    """The passages of ``text`` that best match any of ``queries``, within a token budget.

    Passages (cut as :func:`split_passages` cuts them) keep their document order in the
    result so the excerpt reads naturally.
    """
    passages = split_passages(text, target_words=target_words, max_words=max_words)
    if not passages:
        return ""
    best: dict[int, float] = {}
    for query in queries:
        for score, i in rank_passages(passages, query):
            best[i] = max(best.get(i, 0.0), score)
    order = sorted(range(len(passages)), key=lambda i: (-best.get(i, 0.0), i))
    chosen: list[int] = []
    used = 0
    for i in order:
        cost = estimate_tokens(passages[i])
        if used + cost > token_budget and chosen:
            continue
        if cost > token_budget and not chosen:
            words = passages[i].split()
            return " ".join(words[: max(1, token_budget * 3 // 4)])
        chosen.append(i)
        used += cost
        if used >= token_budget:
            break
    return "\n\n".join(passages[i] for i in sorted(chosen))
