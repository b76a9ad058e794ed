"""The claim check in a run: planned from the draft, answered in the skeptic's round, settled after revision.

:func:`plan_claims` pairs the draft's cited sentences with their passages and picks the
ones the mode checks (:mod:`research_agent.claims.select`), in as many calls as the list
needs and the model's slots allow. The first call's list rides in the skeptic's call; the
others (:func:`check_rest`) run beside it. :func:`settle` gathers the verdicts into a
:class:`~research_agent.claims.ClaimCheck`; :func:`claim_findings` is what review acts on
(an unsupported claim is a critical finding for revise, a partial one a warning); and
:func:`mark_draft`, after the last revision, marks "[Disputed]" every sentence still like an
unsupported claim and citing its source, so that no unsupported claim is silently kept.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ...claims import (
    CitedClaim,
    ClaimCheck,
    choose_claims,
    cited_claims,
    lexical_only,
    mark_unsupported,
    pack,
)
from ...sources import Source
from ...stages._skeptic_input import draft_for_review
from ...stages.claim_check import ClaimAnswer, check_claims
from ...stages.skeptic import SkepticReport
from ...stages.writing.synthesize import ReportDraft, writer_text
from ...text.controls import one_line
from ..assembly import Run

__all__ = [
    "ClaimPlan",
    "plan_claims",
    "check_rest",
    "settle",
    "mark_draft",
]

@dataclass(frozen=True)
class ClaimPlan:
    """The cited sentences of the draft (``cited``), the claims for the skeptic's call (``first``)
    and for the calls beside it (``rest``); how many chosen claims fit in no call, and why; or,
    in ``skipped``, why the check does not run at all. ``elided``: the cited sentences the skeptic
    reads no more of than a mark (those checked beside it, and those the lexical check finds
    stated in their passages and the check does not ask about)."""

    cited: int
    first: tuple[CitedClaim, ...] = ()
    rest: tuple[tuple[CitedClaim, ...], ...] = ()
    left_out: int = 0
    left_out_reason: str = ""
    skipped: str = ""
    elided: frozenset[int] = frozenset()  # what the skeptic need not read: checked beside it, or lexically stated


def plan_claims(run: Run, kept: Sequence[Source], markdown: str) -> ClaimPlan:
    """What the claim check of the rendered draft ``markdown`` (cited by position in ``kept``) asks."""
    settings = run.settings
    mode = settings.mode
    if mode.claim_check == "none" or not mode.skeptic:
        return ClaimPlan(0, skipped=lexical_only(mode.name))
    if not settings.check_claims:
        return ClaimPlan(0, skipped="the claim check is turned off (check_claims)")
    texts = [writer_text(s, token_budget=mode.source_tokens) for s in kept]
    claims = cited_claims(draft_for_review(markdown), texts)
    chosen = choose_claims(claims, policy=mode.claim_check, seed=run.id, budget=settings.claim_tokens)
    if not chosen:
        reason = "the draft cites no source" if not claims else "no cited sentence could be paired with its passage"
        return ClaimPlan(len(claims), skipped=reason)
    slots = settings.llm_concurrency
    # The list takes the place of the cited passages the skeptic would read without it: their budget too.
    calls, left_out = pack(chosen, budget=settings.claim_tokens + mode.cited_tokens, slots=slots)
    why = ""
    if left_out:
        where = "the skeptic's call (one model slot)" if slots <= 1 else f"the {len(calls)} calls of the skeptic's round"
        why = f"{left_out} chosen sentence(s) did not fit in {where}"
    chosen_numbers = {c.number for c in chosen}
    stated = {c.number for c in claims if c.checkable and not c.weak and not c.disputed and c.number not in chosen_numbers}
    beside = {c.number for call in calls[1:] for c in call}
    rest = tuple(tuple(c) for c in calls[1:])
    return ClaimPlan(len(claims), tuple(calls[0]), rest, left_out, why, elided=frozenset(stated | beside))


async def check_rest(run: Run, plan: ClaimPlan) -> tuple[ClaimAnswer, ...]:
    """The calls beside the skeptic's, one per list in ``plan.rest``, side by side."""
    return tuple(
        await asyncio.gather(*(check_claims(run.model, run.query, claims, notify=run.ledger.warn) for claims in plan.rest))
    )


def _why_unavailable(message: str) -> str:
    """The skeptic's degradation message without what it says about the report."""
    reason = message.rpartition("; ")[0] or message
    return one_line(reason)[:300]


def settle(plan: ClaimPlan, skeptic: SkepticReport | None, answers: Sequence[ClaimAnswer]) -> ClaimCheck:
    """The check's result: the verdicts of every call, or why there are none.

    A skeptic without a usable answer leaves every claim unchecked, as the skeptic's own
    findings are: the check degrades with it."""
    if plan.skipped:
        return ClaimCheck.not_run(plan.skipped, plan.cited)
    if skeptic is None or skeptic.unavailable:
        reason = _why_unavailable(skeptic.unavailable) if skeptic else "there was no skeptic pass"
        return ClaimCheck.not_run(f"the skeptic gave no usable answer ({reason})", plan.cited)
    verdicts = sorted((*skeptic.verdicts, *(v for a in answers for v in a.verdicts)), key=lambda v: v.number)
    notes = [plan.left_out_reason] if plan.left_out_reason else []
    notes += [f"{len(a.claims)} in a call whose answer could not be used" for a in answers if a.failed]
    asked = len(plan.first) + sum(len(a.claims) for a in answers if not a.failed)
    if asked > len(verdicts):
        notes.append(f"{asked - len(verdicts)} left without a verdict by the model")
    if not verdicts:
        return ClaimCheck.not_run("the skeptic gave no verdict on the cited sentences", plan.cited)
    return ClaimCheck(plan.cited, tuple(verdicts), not_checked="; ".join(notes))


def _with_texts(draft: ReportDraft, texts: Sequence[str]) -> ReportDraft:
    findings = len(draft.key_findings)
    return replace(
        draft,
        executive_summary=texts[0],
        key_findings=tuple(texts[1 : 1 + findings]),
        sections=tuple((heading, body) for (heading, _), body in zip(draft.sections, texts[1 + findings :], strict=True)),
    )


def mark_draft(draft: ReportDraft, check: ClaimCheck | None) -> tuple[ReportDraft, ClaimCheck | None, int]:
    """After the last revision: ``draft`` with "[Disputed]" on every unmarked sentence like an
    unsupported claim that still cites its source, the check with each claim's outcome, and how
    many sentences were marked (``draft`` itself when none was)."""
    if check is None or not check.unsupported:
        return draft, check, 0
    marked = mark_unsupported(draft.texts, check.unsupported)
    check = check.with_outcomes(marked.outcomes)
    if not marked.marked:
        return draft, check, 0
    return _with_texts(draft, marked.texts), check, marked.marked
