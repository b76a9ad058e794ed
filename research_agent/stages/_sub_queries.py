"""Which of a planner's sub-queries are search queries, and which are debris.

A sub-query is dropped when, schema vocabulary set aside, it has fewer than two words of
3 or more letters, when it is mostly punctuation, or when it loops over the same words
(:mod:`research_agent.text.debris`).
Brackets alone are no reason: ``list[int]`` or ``numpy arr[::2] slicing`` are real
queries. When fewer than half of an answer's sub-queries survive, the answer as a whole
is unusable (:func:`answer_problem`): the model is asked again with that reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..text.debris import mostly_punctuation, real_words, repeats_itself

__all__ = ["DroppedQuery", "Screened", "answer_problem", "query_problem", "screen"]

MIN_WORDS = 2


@dataclass(frozen=True)
class DroppedQuery:
    """A sub-query that was not searched, and why."""

    query: str
    reason: str

    def as_dict(self) -> dict[str, str]:
        return {"query": self.query, "reason": self.reason}


@dataclass(frozen=True)
class Screened:
    """An answer's sub-queries, split into those searched and those dropped (in answer order)."""

    kept: tuple[str, ...]
    dropped: tuple[DroppedQuery, ...]

    @property
    def usable(self) -> bool:
        """At least half of the sub-queries survived (and at least one)."""
        return bool(self.kept) and len(self.kept) * 2 >= len(self.kept) + len(self.dropped)


def query_problem(query: str) -> str | None:
    """Why ``query`` is no search query, or None when it is one."""
    if mostly_punctuation(query):
        return "mostly punctuation"
    if repeats_itself(query):
        return "the same words over and over"
    words = len(real_words(query))
    if words < MIN_WORDS:
        return f"{'no word' if words == 0 else 'one word'} of 3 or more letters besides schema vocabulary"
    return None


def screen(queries: Sequence[str]) -> Screened:
    """Split ``queries`` into the searchable and the dropped."""
    kept: list[str] = []
    dropped: list[DroppedQuery] = []
    for query in queries:
        problem = query_problem(query)
        if problem is None:
            kept.append(query)
        else:
            dropped.append(DroppedQuery(query, problem))
    return Screened(tuple(kept), tuple(dropped))


def answer_problem(screened: Screened) -> str | None:
    """Why an answer with these sub-queries cannot be used, or None: fewer than half survived."""
    if screened.usable:
        return None
    total = len(screened.kept) + len(screened.dropped)
    advice = "Write each sub-query as a few plain words a search engine can use"
    if total == 0:
        return f"the answer gave no sub-query. {advice}"
    shown = "; ".join(f"{d.query[:60]!r} ({d.reason})" for d in screened.dropped[:4])
    return f"only {len(screened.kept)} of {total} sub-queries are search queries; not searchable: {shown}. {advice}"
