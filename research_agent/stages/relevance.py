"""Score each source 1-5 against the question, and decide what kind of report the run can write."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Literal

from .. import prompts
from ..config import Mode
from ..errors import LLMError
from ..llm import ChatModel, ChatRequest
from ..sources import ScoredSource, Source
from ..text.passages import select_passages
from ..text.sanitize import sanitize, wrap_data
from ._schema import obj, scale, string

__all__ = ["score_sources", "relevance_excerpt", "decide_gate", "Gate", "GateDecision", "SNIPPET_SCORE_CAP", "SCHEMA"]

# A bound on the answer: a grammar-constrained local server can otherwise generate whitespace
# until its context is full. Generous, so a reasoning model's thinking still fits.
MAX_ANSWER_TOKENS = 1500

log = logging.getLogger(__name__)

SCHEMA = obj(score=scale(1, 5), reason=string(300))
SNIPPET_SCORE_CAP = 3  # a source read only from its search snippet can never rank as a full read
GateDecision = Literal["full_report", "short_report", "insufficient_data", "no_new_findings"]


def relevance_excerpt(source: Source, query: str, *, token_budget: int) -> str:
    """The passages of ``source`` that best match the sub-queries that found it (and the
    question), within ``token_budget``: what relevance reads instead of the whole text."""
    queries = (*source.sub_queries, query)
    excerpt = select_passages(source.text, queries, token_budget=token_budget, target_words=40, max_words=80)
    return sanitize(excerpt, max_chars=token_budget * 4)


async def _score_one(
    model: ChatModel, query: str, source: Source, lessons_block: str, token_budget: int
) -> ScoredSource:
    label = f"source: {source.location}" + (" (search snippet only)" if source.snippet_only else "")
    prompt = prompts.render(
        "relevance",
        query=query,
        lessons=f"\n{lessons_block}\n" if lessons_block else "",
        title=sanitize(source.title, max_chars=200, single_line=True),
        excerpt=wrap_data(label, relevance_excerpt(source, query, token_budget=token_budget)),
    )
    request = ChatRequest(
        stage="relevance", system=prompt.system, user=prompt.user, schema=SCHEMA, temperature=0.0, tier="fast",
        max_tokens=MAX_ANSWER_TOKENS,
    )
    try:
        response = await model.complete(request)
    except LLMError as exc:
        # One unscorable source must not sink the run: it is kept out, visibly.
        log.info("could not score %s: %s", source.location, exc)  # the pipeline tells the user once
        return ScoredSource(source, None, str(exc)[:200])  # the status says "unscored"; the reason says why
    score = int(response.data["score"])
    reason = " ".join(str(response.data["reason"]).split())[:300]
    if source.snippet_only and score > SNIPPET_SCORE_CAP:
        score = SNIPPET_SCORE_CAP
        reason = f"{reason} (capped: snippet only)"
    return ScoredSource(source, score, reason)


async def score_sources(
    model: ChatModel,
    query: str,
    sources: list[Source] | tuple[Source, ...],
    *,
    token_budget: int,
    lessons_block: str = "",
) -> tuple[ScoredSource, ...]:
    """Score every source concurrently (the model bounds its own concurrency) from its
    best-matching passages within ``token_budget`` (see :func:`relevance_excerpt`)."""
    results = await asyncio.gather(*(_score_one(model, query, s, lessons_block, token_budget) for s in sources))
    return tuple(results)


@dataclass(frozen=True)
class Gate:
    """What the scores allow: the decision, the surviving sources, and why."""

    decision: GateDecision
    kept: tuple[ScoredSource, ...]
    dropped: tuple[ScoredSource, ...]
    unscored: tuple[ScoredSource, ...]
    sites: int
    reason: str

    @property
    def can_write(self) -> bool:
        return self.decision in ("full_report", "short_report")


def decide_gate(scored: tuple[ScoredSource, ...] | list[ScoredSource], mode: Mode) -> Gate:
    """Apply the mode's thresholds on surviving sources and distinct sites.

    ``insufficient_data``: too few sources were found to judge at all.
    ``no_new_findings``: enough were found and scored, but too few are relevant.
    """
    kept = tuple(
        sorted(
            (s for s in scored if s.score is not None and s.score >= mode.keep_score),
            key=lambda s: (-(s.score or 0), s.source.location),
        )
    )
    dropped = tuple(s for s in scored if s.score is not None and s.score < mode.keep_score)
    unscored = tuple(s for s in scored if s.score is None)
    sites = len({s.source.site for s in kept})
    judged = len(kept) + len(dropped)
    if judged < mode.short_min_sources:
        decision: GateDecision = "insufficient_data"
        reason = f"only {judged} source(s) could be found and scored; at least {mode.short_min_sources} needed"
    elif len(kept) < mode.short_min_sources:
        decision = "no_new_findings"
        reason = (
            f"{judged} source(s) scored but only {len(kept)} reached relevance {mode.keep_score}; "
            f"at least {mode.short_min_sources} needed"
        )
    elif len(kept) < mode.full_min_sources or sites < mode.full_min_sites:
        decision = "short_report"
        reason = (
            f"{len(kept)} relevant source(s) from {sites} site(s); a full report needs "
            f"{mode.full_min_sources} from {mode.full_min_sites}"
        )
    else:
        decision = "full_report"
        reason = f"{len(kept)} relevant source(s) from {sites} site(s)"
    return Gate(decision, kept, dropped, unscored, sites, reason)
