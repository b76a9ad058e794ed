"""Which cited sentences the claim check sends to the model, and in how many calls.

Every cited sentence of a draft is paired with its passage: for each source it cites (at
most :data:`MAX_SOURCES`), the best-matching window of at most 120 words of the text the
writer was given for that source (:func:`research_agent.text.passage_window.best_window`,
the window the HTML export previews). Which of them are checked depends on the mode
(:attr:`research_agent.modes.Mode.claim_check`):

* ``all`` (``--deep``): every cited sentence;
* ``sample`` (``--standard``): every lexically weak one (:func:`research_agent.text.support.lexical_support`,
  the run's ``weakly_supported``), then a sample of the rest drawn with the run id as seed,
  while the list fits the token budget (``Settings.claim_tokens``, 1,600 by default);
* ``none`` (``--quick``): none; the lexical check alone.

The chosen list rides in the skeptic's call; only a list over the budget is split
(:func:`pack`) across further calls that run beside it, at most one per model slot, so
the check stays in the skeptic's round. With one slot the list is capped to what fits
and the rest is counted as not checked.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from ..text.passage_window import PASSAGE_WORDS, SOURCES_KEPT, best_window, read_source
from ..text.passages import estimate_tokens
from ..text.support import Passage, lexical_support, prepare
from .sentences import text_sentences, without_marker

__all__ = ["CitedClaim", "cited_claims", "read_sources", "choose_claims", "cost_beside", "pack", "MAX_SOURCES", "MAX_CLAIMS_PER_CALL", "POLICIES"]

MAX_SOURCES = 3  # passages shown for one sentence: more citations than that are rare and costly
MAX_CLAIMS_PER_CALL = 40  # a bound on one answer's list, well under what a grammar decoder can build
MAX_SENTENCE_CHARS = 600
POLICIES = ("all", "sample", "none")
_OVERHEAD_TOKENS = 12  # the number, the labels and the source headers of one item
_POINTER_TOKENS = 10  # a passage shown already, pointed to instead


@dataclass(frozen=True)
class CitedClaim:
    """Cited sentence ``number`` (1-based, in draft order): its text without citation markers,
    the sources it cites, and for each the passage it is checked against (``(n, text)``; empty
    when no cited source has text); ``weak`` when the lexical check finds a cited source's text
    does not state it; ``disputed`` when the draft already marks it "[Disputed]"."""

    number: int
    sentence: str
    sources: tuple[int, ...]
    passages: tuple[tuple[int, str], ...]
    weak: bool = False
    disputed: bool = False

    @property
    def tokens(self) -> int:
        """What the claim costs in a prompt."""
        return _OVERHEAD_TOKENS + estimate_tokens(self.sentence) + sum(estimate_tokens(p) for _, p in self.passages)

    @property
    def checkable(self) -> bool:
        return bool(self.passages)


def cited_claims(markdown: str, texts: Sequence[str]) -> tuple[CitedClaim, ...]:
    """Every cited sentence of ``markdown`` with its passages; source ``n``'s text is ``texts[n - 1]``.

    Citations of numbers outside ``texts`` are ignored; a sentence citing no source with
    text is kept, with no passage (it is cited, but cannot be checked)."""
    prepared: dict[int, Passage] = {}
    claims = []
    for number, found in enumerate(text_sentences(markdown), start=1):
        sentence = found.text[:MAX_SENTENCE_CHARS]
        words = without_marker(sentence)  # the marker is no word of the claim
        usable = [n for n in found.numbers if 1 <= n <= len(texts) and texts[n - 1].strip()][:MAX_SOURCES]
        weak = False
        for n in usable:
            if n not in prepared:
                prepared[n] = prepare(texts[n - 1])
            weak = weak or lexical_support(words, prepared[n]).weak
        passages = tuple((n, best_window(words, texts[n - 1], max_words=PASSAGE_WORDS).text) for n in usable)
        claims.append(CitedClaim(number, sentence, found.numbers, passages, weak, found.disputed))
    return tuple(claims)


def read_sources(texts: Sequence[str]) -> None:
    """Read each of ``texts`` now as :func:`cited_claims` will (its terms for the lexical check, its
    index for the passage windows), so that the check of a draft citing them reads only the draft:
    the last :data:`~research_agent.text.passage_window.SOURCES_KEPT` texts read are kept."""
    for text in [t for t in texts if t.strip()][:SOURCES_KEPT]:
        prepare(text)
        read_source(text)


def choose_claims(claims: Sequence[CitedClaim], *, policy: str, seed: str, budget: int) -> tuple[CitedClaim, ...]:
    """The claims to check under ``policy`` (see the module docstring), most wanted first:
    the weak ones in draft order, then the sample."""
    if policy not in POLICIES:
        raise ValueError(f"unknown claim check policy {policy!r}")
    checkable = [c for c in claims if c.checkable]
    if policy == "none":
        return ()
    if policy == "all":
        return tuple(checkable)
    weak = [c for c in checkable if c.weak]
    rest = [c for c in checkable if not c.weak]
    random.Random(seed).shuffle(rest)
    used = sum(c.tokens for c in weak)
    sample = []
    for claim in rest:
        if used + claim.tokens <= budget:
            sample.append(claim)
            used += claim.tokens
    return (*weak, *sample)


def cost_beside(claim: CitedClaim, shown: set[tuple[int, str]]) -> int:
    """What ``claim`` adds to a list that already shows the passages in ``shown`` ((n, text)):
    a passage the list shows already is pointed to, not repeated (:func:`research_agent.stages.claim_check.claims_prompt`)."""
    saved = sum(max(0, estimate_tokens(text) - _POINTER_TOKENS) for n, text in claim.passages if (n, text) in shown)
    return claim.tokens - saved


def pack(claims: Sequence[CitedClaim], *, budget: int, slots: int) -> tuple[list[list[CitedClaim]], int]:
    """``claims`` (most wanted first) in at most ``slots`` calls of at most ``budget`` tokens
    and :data:`MAX_CLAIMS_PER_CALL` claims each (a claim larger than the budget alone in one;
    a passage a call shows already counted once: :func:`cost_beside`), each call's list in draft
    order; and how many claims did not fit."""
    calls: list[list[CitedClaim]] = []
    used: list[int] = []
    shown: list[set[tuple[int, str]]] = []
    left_out = 0
    for claim in claims:
        fits = next((i for i, size in enumerate(used) if size + cost_beside(claim, shown[i]) <= budget
                     and len(calls[i]) < MAX_CLAIMS_PER_CALL), None)  # fmt: skip
        if fits is None and len(calls) < max(1, slots):
            calls.append([])
            used.append(0)
            shown.append(set())
            fits = len(calls) - 1
        if fits is None:
            left_out += 1
            continue
        calls[fits].append(claim)
        used[fits] += cost_beside(claim, shown[fits])
        shown[fits].update(claim.passages)
    return [sorted(call, key=lambda c: c.number) for call in calls], left_out
