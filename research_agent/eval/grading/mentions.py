"""What the grader reads in text: answers as a reader compares them, and the names and numbers a
sentence states.

* An answer is found the way a person would look for it: without case, spacing or thousands
  separators (``12,400 km`` is ``12400km``), and only as whole words and numbers (``1987`` is not
  in ``19870`` nor in ``1987.5``).
* A number is a run of digits, with separators, decimals or a unit glued to it (``12,400``,
  ``3.5``, ``40km``); two numbers are the same when their digits are (``12,400`` is ``12400``).
* A name is a capitalised word, or a run of them, that is not the first word of its sentence.
  A run that starts a sentence is a name when the run is one the pages hold, else its words after
  the first are (``Several Acme plants``: ``Acme``).

:class:`Corpus` is the text those are looked up in (every page of a world, lowercased, spacing
collapsed), with its numbers gathered once.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["Corpus", "answer_pattern", "normalized", "numbers_in", "number_key", "names_in", "Mention", "MentionKind"]

_SEPARATOR = "[,'\u2019\u2009\u202f\u00a0]"
# Digits grouped by spaces ("12 400") only in groups of three after a first group of one to three.
NUMBER = re.compile(
    rf"(?<![\w.,])(?:\d{{1,3}}(?:[ \u00a0\u202f]\d{{3}})+(?![\d.,])|\d+(?:(?:{_SEPARATOR}|\.)\d+)*)"
    r"(?:[A-Za-z%\u00b0\u00b5]+\b)?"
)
_THOUSANDS = re.compile(rf"(?<=\d){_SEPARATOR}(?=\d{{3}}(?!\d))")
_GROUPS = re.compile(r"(?<=\d)[ \u00a0\u202f](?=\d{3}(?!\d))")  # within one number token only
_UNIT = re.compile(r"[A-Za-z%\u00b0\u00b5]+$")
# A capitalised word (two letters at least: "I" and "A" name nothing), or a run of them joined by
# single spaces; a possessive's "'s" is not part of it.
NAME = re.compile(r"(?<![\w'\u2019])[A-Z][A-Za-z]+(?:[ \u00a0][A-Z][A-Za-z]+)*")
_FIRST_WORD = re.compile(r"[A-Za-z0-9]")
_SPACES = re.compile(r"\s+")


def normalized(text: str) -> str:
    """``text`` lowercased, thousands separators dropped, markdown emphasis and spacing collapsed."""
    text = _THOUSANDS.sub("", text.casefold())
    return _SPACES.sub(" ", text.replace("*", " ").replace("`", " ")).strip()


@functools.lru_cache(maxsize=4096)
def answer_pattern(answer: str) -> re.Pattern[str]:
    """What finds ``answer`` in :func:`normalized` text: its characters with any spacing between
    them, as whole words."""
    chars = [c for c in normalized(answer) if not c.isspace()]
    body = r"\s*".join(re.escape(c) for c in chars)
    return re.compile(rf"(?<![0-9a-z])(?<!\d[.,]){body}(?![0-9a-z]|[.,]\d)")


def number_key(token: str) -> str:
    """The digits of a number as compared: unit and thousands separators dropped."""
    return _GROUPS.sub("", _THOUSANDS.sub("", _UNIT.sub("", token)))


def numbers_in(text: str) -> Iterator[re.Match[str]]:
    return NUMBER.finditer(text)


MentionKind = Literal["name", "number"]


@dataclass(frozen=True)
class Mention:
    """A name or number a sentence states, and where."""

    kind: MentionKind
    token: str
    start: int


def names_in(sentence: str, holds: Corpus | None = None) -> Iterator[Mention]:
    """The names ``sentence`` states (see the module docstring). ``holds``: the text that decides
    about a run that starts the sentence (None: its first word is simply left out)."""
    first = _FIRST_WORD.search(sentence)
    start_of_sentence = first.start() if first else -1
    for match in NAME.finditer(sentence):
        run = match.group(0)
        if match.start() != start_of_sentence:
            yield Mention("name", run, match.start())
            continue
        if holds is not None and " " in run and holds.has_phrase(run):
            continue  # a name the pages hold, sentence case or not
        rest = run.partition(" ")[2].lstrip("\u00a0")
        if rest:
            yield Mention("name", rest, match.start() + len(run) - len(rest))


@dataclass
class Corpus:
    """Text that names and numbers are looked up in: lowercased, spacing collapsed."""

    text: str
    numbers: frozenset[str] = field(default=frozenset())
    _seen: dict[str, bool] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, texts: Iterable[str]) -> Corpus:
        texts = list(texts)
        numbers = frozenset(number_key(m.group(0)) for text in texts for m in numbers_in(text))
        return cls("\n".join(_SPACES.sub(" ", t.casefold()) for t in texts), numbers)

    def has_phrase(self, phrase: str) -> bool:
        """Whether the words of ``phrase`` stand here in a row, as whole words, in any case."""
        key = _SPACES.sub(" ", phrase.casefold()).strip()
        if key not in self._seen:
            pattern = r"\s+".join(re.escape(word) for word in key.split(" "))
            self._seen[key] = re.search(rf"(?<!\w){pattern}(?!\w)", self.text) is not None
        return self._seen[key]

    def has_number(self, token: str) -> bool:
        return number_key(token) in self.numbers
