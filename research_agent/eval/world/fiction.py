"""The pieces a generated world is made of: invented names, the facts of its entities, and pages.

Names are built from syllables by a seeded random generator, so no model knows them and each
seed gives others. :class:`Names` never hands out the same name twice (a near-identical one is
asked for on purpose: :meth:`Names.near`). A :class:`Page` is a title and paragraphs, written as
markdown, HTML or plain text (:func:`render`); the HTML is a plain, well-formed page such as a
site would serve.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from html import escape

from ...ids import slugify

__all__ = ["Names", "Page", "render", "thousands", "FORMATS", "PRODUCTS", "FIRM_KINDS", "LANDMARK_KINDS"]

FORMATS = ("md", "html", "txt")
_ONSETS = ("b", "br", "d", "dr", "f", "g", "gr", "h", "k", "kr", "l", "m", "n", "p", "pr", "r", "s", "st", "t",
           "tr", "v", "z", "th", "j", "w")  # fmt: skip
_VOWELS = ("a", "e", "i", "o", "u", "a", "e", "o", "ae", "ia", "ou", "ei")
_CODAS = ("", "", "n", "r", "l", "s", "k", "m", "nd", "rk", "st", "th", "x", "rn", "lt")
# Words a syllable generator could make that a reader would take for English (or a common name).
_TAKEN = frozenset({"bat", "bed", "bet", "big", "bin", "bit", "bon", "bud", "dam", "den", "din", "don", "fan", "fin",
                    "fun", "gas", "gun", "hat", "hen", "him", "hit", "hot", "hut", "jam", "jet", "kin", "kit",
                    "lad", "lid", "lot", "man", "map", "men", "mud", "nun", "nut", "pan", "pen", "pet", "pin", "pit",
                    "pot", "ran", "rat", "red", "rid", "rot", "run", "sad", "sat", "set", "sin", "sit", "son", "sun",
                    "tan", "ten", "tin", "ton", "van", "vet", "win", "wit", "won", "zen", "stark", "thin", "then",
                    "than", "them", "this", "that", "trust", "brand", "grand", "stand", "strand", "band", "land",
                    "sand", "hand", "wand", "bond", "fond", "pond", "lord", "word", "ward", "dark", "park", "mark"})  # fmt: skip

PRODUCTS = ("ceramic insulators", "marine pumps", "glass lenses", "wool textiles", "brass fittings",
            "railway signals", "weighing scales", "printing presses", "copper cable", "harbour cranes",
            "clock movements", "pressure valves", "paper pulp", "bicycle frames", "roof tiles")  # fmt: skip
FIRM_KINDS = ("Works", "Foundry", "Instruments", "Mills", "Dynamics", "Optics", "Shipyards", "Ceramics",
              "Engineering", "Textiles")  # fmt: skip
LANDMARK_KINDS = ("Bridge", "Canal", "Tower", "Viaduct", "Lighthouse", "Dam")


def thousands(number: int) -> str:
    """``12400`` -> ``"12,400"``."""
    return f"{number:,}"


@dataclass
class Names:
    """Invented names, none given twice (see the module docstring)."""

    rng: random.Random
    used: set[str] = field(default_factory=set)

    def _syllable(self) -> str:
        return self.rng.choice(_ONSETS) + self.rng.choice(_VOWELS) + self.rng.choice(_CODAS)

    def word(self, syllables: int = 2) -> str:
        """A new capitalised word of ``syllables`` syllables (4 to 10 letters)."""
        while True:
            word = "".join(self._syllable() for _ in range(syllables))
            if 4 <= len(word) <= 10 and word not in _TAKEN and not self._near_used(word):
                self.used.add(word)
                return word.capitalize()

    def _near_used(self, word: str) -> bool:
        """Taken, or one an earlier name starts with or is started by (kept apart for the grader)."""
        return any(word.startswith(u) or u.startswith(word) for u in self.used)

    def person(self) -> str:
        return f"{self.word(self.rng.choice((2, 2, 3)))} {self.word(2)}"

    def place(self) -> str:
        return self.word(self.rng.choice((1, 2, 2)) if self.rng.random() < 0.5 else 2)

    def near(self, name: str) -> str:
        """A name a hurried reader takes for ``name``: its first word with one letter added or doubled."""
        first, _, rest = name.partition(" ")
        letter = self.rng.choice("aeilnrs")
        twin = first + letter if self.rng.random() < 0.5 else first[:-1] + first[-1] * 2
        self.used.add(twin.lower())
        return f"{twin} {rest}".strip()


@dataclass
class Page:
    """One page of a world: where it goes (``folder/slug``), its title and paragraphs, its format."""

    folder: str
    title: str
    paragraphs: list[str]
    fmt: str = "md"

    @property
    def path(self) -> str:
        return f"{self.folder}/{slugify(self.title, max_len=60)}.{self.fmt}"


def render(page: Page) -> str:
    """The page's file content in its format."""
    if page.fmt == "html":
        body = "\n".join(f"<p>{escape(p)}</p>" for p in page.paragraphs)
        return (
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{escape(page.title)}</title>\n</head>\n<body>\n<article>\n<h1>{escape(page.title)}</h1>\n"
            f"{body}\n</article>\n</body>\n</html>\n"
        )
    if page.fmt == "txt":
        return page.title + "\n\n" + "\n\n".join(page.paragraphs) + "\n"
    return f"# {page.title}\n\n" + "\n\n".join(page.paragraphs) + "\n"
