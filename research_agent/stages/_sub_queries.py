"""Which of a planner's sub-queries are search queries, and which are debris.

A sub-query must read as a search a person would type. It is dropped when it is mostly
punctuation; when it carries a query string (``./science.json?type=object``,
``https://x.org/s?q=a``: an address, not a search); when it writes a schema keyword as a key
with a schema value (``type=object``, ``maxItems:5``, ``items: {``) or a schema value onto a key
with no space (``create-task:true``); when it loops over the same words; when, schema vocabulary
and web addresses set aside, it has fewer than two words of 3 or more letters
(:mod:`research_agent.text.debris`); when it has more than 20 words (a sentence, not a search), or a machine timestamp
(``2018-04-30T09:56:37Z``), or an unbalanced brace (``parseJSON(function){``: a fragment of code);
when it is a list of three or more items that echo a list of the prompt (the domain taxonomy:
``tech,internet,science,other``), words the question does not use; or when it repeats five words
in a row of the prompt's own text ("The previous plan fell short"). Brackets alone are no reason: ``list[int]`` or ``numpy arr[::2] slicing`` are
real queries, and so are ``C++ std::string`` and ``TypeError: string indices``.
When fewer than half of an answer's sub-queries survive, the answer as a whole is unusable
(:func:`answer_problem`): the model is asked again with that reason.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from ..shapes import Plain
from ..text.debris import SCHEMA_VOCABULARY, mostly_punctuation, real_words, repeats_itself, without_urls

__all__ = ["DroppedQuery", "Screened", "answer_problem", "list_words", "prompt_runs", "query_problem", "schema_pair",
           "screen"]

MIN_WORDS = 2
MIN_LIST_ITEMS = 3  # items of a prompt's list in a comma-separated run that make an echo
MAX_WORDS = 20  # the prompt asks for at most 12: past 20, a sentence or a paragraph, not a search
ECHO_WORDS = 5  # a run of this many words of the prompt's own text (not the question's) is an echo

# A query string: "?key=" straight after an address or a file name (a "?page=2" a person types
# after a space is a question about one).
_QUERY_STRING = re.compile(r"[^\s?]\?[\w.%-]+=")
# One key, one ":" or "=" (not "::", "==" or "://"), one value: a word, a number or an opening bracket.
_PAIR = re.compile(r"(\w+)['\"]?(\s*)(?<![:=])[:=](?![:=/])(\s*)['\"]?(\w+|[\[{\"'])")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}")  # an ISO 8601 date and time: data a program writes
_LIST_SEPARATOR = re.compile(r"[,;|]")


@dataclass(frozen=True)
class DroppedQuery(Plain):
    """A sub-query that was not searched, and why."""

    query: str
    reason: str


@dataclass(frozen=True)
class Screened:
    """An answer's sub-queries, split into those searched and those dropped (in answer order)."""

    kept: tuple[str, ...]
    dropped: tuple[DroppedQuery, ...]

    @property
    def usable(self) -> bool:
        """At least half of the sub-queries survived (and at least one)."""
        return bool(self.kept) and len(self.kept) * 2 >= len(self.kept) + len(self.dropped)


def schema_pair(query: str) -> str | None:
    """The first ``key:value`` of ``query`` that is a schema's (``type=object``, ``'type':'string'``), or None."""
    for match in _PAIR.finditer(query):
        key, before, after, value = match.groups()
        schema_value = value.lower() in SCHEMA_VOCABULARY
        if key.lower() in SCHEMA_VOCABULARY and (schema_value or _NUMBER.fullmatch(value) or not value[0].isalnum()):
            return match.group(0)
        if schema_value and not before and not after:
            return match.group(0)
    return None


def _echoed_items(query: str, listed: Collection[str]) -> int:
    """How many comma-separated items of ``query`` are words of a list of the prompt (``listed``)."""
    items = _LIST_SEPARATOR.split(query)
    if len(items) < MIN_LIST_ITEMS or not listed:
        return 0
    echoed = 0
    for item in items:
        words = [w.lower() for w in real_words(item)]
        echoed += bool(words) and all(w in listed for w in words)
    return echoed


def query_problem(query: str, listed: Collection[str] = (), echoes: Collection[tuple[str, ...]] = ()) -> str | None:
    """Why ``query`` is no search query, or None when it is one. ``listed``: the words of the
    prompt's own lists (lower case) that the question does not use; ``echoes``: the prompt's runs
    of :data:`ECHO_WORDS` words that the question does not use (:func:`prompt_runs`)."""
    if mostly_punctuation(query):
        return "mostly punctuation"
    if len(query.split()) > MAX_WORDS:
        return f"{len(query.split())} words: a sentence, not a search"
    if _QUERY_STRING.search(query):
        return "an address or file name with a query string, not a search"
    pair = schema_pair(query)
    if pair is not None:
        return f"a schema fragment ({pair.strip()!r}), not a search"
    if _TIMESTAMP.search(query):
        return "a machine timestamp, not a search"
    if query.count("{") != query.count("}"):
        return "an unbalanced brace: a fragment of code or data, not a search"
    if repeats_itself(query):
        return "the same words over and over"
    words = len(real_words(without_urls(query)))
    if words < MIN_WORDS:
        return f"{'no word' if words == 0 else 'one word'} of 3 or more letters besides schema vocabulary and addresses"
    if _echoed_items(query, listed) >= MIN_LIST_ITEMS:
        return "echoes the prompt's list of domains, not a search"
    if echoes and not _runs(query).isdisjoint(echoes):
        return "echoes the prompt's own text, not a search"
    return None


def _runs(text: str) -> set[tuple[str, ...]]:
    words = [w.lower() for w in re.findall(r"[^\W_]+", text)]
    return {tuple(words[i : i + ECHO_WORDS]) for i in range(len(words) - ECHO_WORDS + 1)}


def prompt_runs(prompt_text: str, question: str) -> frozenset[tuple[str, ...]]:
    """The runs of :data:`ECHO_WORDS` words of the prompt's own text, less those of the ``question``."""
    return frozenset(_runs(prompt_text) - _runs(question))


def list_words(prompt_list: str, question: str) -> frozenset[str]:
    """The words of a list the prompt carries (``prompt_list``, such as the domain taxonomy), lower
    case, less those the ``question`` uses: what an echo of the list is made of."""
    asked = {w.lower() for w in real_words(question)}
    words = real_words(prompt_list) + real_words(prompt_list.replace("_", " "))  # policy_law, policy and law
    return frozenset(w.lower() for w in words) - asked


def screen(
    queries: Sequence[str], listed: Collection[str] = (), echoes: Collection[tuple[str, ...]] = ()
) -> Screened:
    """Split ``queries`` into the searchable and the dropped (``listed``, ``echoes``: see :func:`query_problem`)."""
    kept: list[str] = []
    dropped: list[DroppedQuery] = []
    for query in queries:
        problem = query_problem(query, listed, echoes)
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
