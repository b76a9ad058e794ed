"""Reading the claim list a skeptic (or claims) prompt carries, and answering it like a model would.

The list (research_agent/prompts/_claim_list.md) numbers each cited sentence ``(n)`` and puts
the passage of each source it cites under it as ``[k] text``. :func:`answer_claims` gives a
verdict per sentence: ``verdict_for(sentence)`` decides (default: supported), and a
supported or partial verdict quotes the passage's first words, as a careful model would.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from research_agent.stages.claim_check import SAME_PASSAGE

__all__ = ["AskedClaim", "asked_claims", "answer_claims", "first_words"]

_BLOCK = re.compile(r"<<<DATA cited sentences>>>\n(.*?)\n<<<END DATA>>>", re.S)
_ITEM = re.compile(r"^\((\d+)\) (.*)$")
_PASSAGE = re.compile(r"^    \[(\d+)\] (.*)$")
_POINTER = re.compile(re.escape(SAME_PASSAGE).replace(r"\{n\}", r"(\d+)"))


@dataclass(frozen=True)
class AskedClaim:
    n: int
    sentence: str
    passages: tuple[tuple[int, str], ...]


def asked_claims(user: str) -> list[AskedClaim]:
    """The claims a prompt asks about, in its order ([] when it asks about none)."""
    match = _BLOCK.search(user)
    if not match:
        return []
    claims: list[AskedClaim] = []
    for line in match.group(1).splitlines():
        item, passage = _ITEM.match(line), _PASSAGE.match(line)
        if item:
            claims.append(AskedClaim(int(item.group(1)), item.group(2), ()))
        elif passage and claims:
            last, source, text = claims[-1], int(passage.group(1)), passage.group(2)
            if pointer := _POINTER.fullmatch(text):  # a passage shown under an earlier claim of the list
                earlier = next(c for c in claims if c.n == int(pointer.group(1)))
                text = dict(earlier.passages)[source]
            claims[-1] = AskedClaim(last.n, last.sentence, (*last.passages, (source, text)))
    return claims


def first_words(text: str, count: int = 6) -> str:
    return " ".join(text.split()[:count])


def answer_claims(user: str, verdict_for: Callable[[str], str] | None = None) -> list[dict]:
    """One verdict per claim the prompt asks about."""
    out = []
    for claim in asked_claims(user):
        verdict = verdict_for(claim.sentence) if verdict_for is not None else "supported"
        quote = first_words(claim.passages[0][1]) if verdict != "unsupported" and claim.passages else ""
        out.append({"n": claim.n, "verdict": verdict, "quote": quote, "reason": f"the passage {verdict} it"})
    return out
