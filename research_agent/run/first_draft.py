"""The first draft of a plan, written while relevance judges the same sources.

Relevance and the writer read the same sources, and relevance (short answers, the fast model)
is done long before the writer. So where the model has more than one slot, the writer does not
wait for it: it drafts from the sources retrieval found (the plan's new ones, after those an
earlier plan's relevance kept), in retrieval's order, while relevance scores them. When
relevance is done, the gate decides as before, and the draft stands only if relevance agrees
with it:

* the gate allows a full report (a short one is written shorter, from the start), and
* the draft cites no source relevance dropped or left unscored.

Then the draft's citations are renumbered to the kept sources' order, and the run goes on to
the skeptic as if the draft had been written after relevance. Otherwise the draft is set aside
and written again from the kept sources (one round more, said in the run's warnings); a gate that
allows no report stops the writer. With one slot the calls would only queue behind each other,
so relevance goes first, as before.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, replace

from ..sources import ScoredSource, Source
from ..stages.gate import Gate
from ..stages.writing.synthesize import ReportDraft
from ..text.citations import find_citations, remap_citations
from .assembly import Run

__all__ = ["Judged", "judge_beside_draft", "drafts_beside", "provisional", "disagreement", "renumbered", "UNJUDGED"]

UNJUDGED = "drafted from while relevance was scoring it"


@dataclass(frozen=True)
class Judged:
    """The gate, and the draft written beside relevance, cited by ``gate.kept``'s order (None when
    there is none to keep: relevance went first, disagreed with it, or allows no report)."""

    gate: Gate
    draft: ReportDraft | None = None


def drafts_beside(run: Run) -> bool:
    """Whether the writer drafts while relevance runs: only where calls run side by side."""
    return run.settings.llm_concurrency > 1


def provisional(run: Run, sources: Sequence[Source]) -> Gate:
    """What the writer drafts from before relevance is done: what earlier plans kept (best first),
    then ``sources``, each unscored as yet; as the gate would call it, a full report."""
    mode = run.settings.mode
    earlier = sorted((s for s in run.ledger.scored if s.score is not None and s.score >= mode.keep_score),
                     key=lambda s: -(s.score or 0))  # fmt: skip
    kept = (*earlier, *(ScoredSource(s, None, UNJUDGED) for s in sources))
    return Gate("full_report", kept, (), (), len({s.source.site for s in kept}), UNJUDGED)


async def judge_beside_draft(
    run: Run, judging: Awaitable[Gate], drafting: Awaitable[ReportDraft], written_from: Gate
) -> Judged:
    """Await ``judging`` (relevance and the gate) while ``drafting`` (the writer, from
    ``written_from.kept``) runs beside it; keep the draft where the gate agrees with it."""
    draft_task = asyncio.ensure_future(drafting)
    try:
        gate = await judging
        if not gate.can_write:
            return Judged(gate)
        draft = await draft_task
    finally:
        if not draft_task.done():
            draft_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await draft_task
            run.ledger.discard_draft_in_progress()
    why = disagreement(draft, written_from, gate)
    if why:
        note = f"the draft written while relevance scored the sources was set aside ({why}): written again"
        run.progress.note(note)
        run.ledger.record_warning(note)
        run.ledger.discard_draft_in_progress()
        return Judged(gate)
    return Judged(gate, renumbered(draft, written_from, gate))


def _numbers(draft: ReportDraft) -> set[int]:
    return {n for text in (*draft.texts, *draft.limitations) for cite in find_citations(text) for n in cite.numbers}


def _positions(written_from: Gate, gate: Gate) -> dict[int, int]:
    """Each source's number in the draft -> its number among the kept sources (kept ones only)."""
    kept = {id(s.source): n for n, s in enumerate(gate.kept, start=1)}
    return {n: kept[id(s.source)] for n, s in enumerate(written_from.kept, start=1) if id(s.source) in kept}


def disagreement(draft: ReportDraft, written_from: Gate, gate: Gate) -> str:
    """Why relevance disagrees with a draft written from ``written_from.kept`` ("" when it agrees)."""
    if gate.decision != "full_report":
        return f"relevance allows only a {gate.decision.replace('_', ' ')}"
    positions = _positions(written_from, gate)
    if len(positions) != len(gate.kept):
        return "relevance kept a source the writer did not read"
    cited = {n for n in _numbers(draft) if 1 <= n <= len(written_from.kept)}
    dropped = sorted(cited - positions.keys())
    if dropped:
        return f"it cites {len(dropped)} source(s) relevance did not keep"
    return ""


def renumbered(draft: ReportDraft, written_from: Gate, gate: Gate) -> ReportDraft:
    """``draft`` cited by the kept sources' order instead of the order it was written from."""
    positions = _positions(written_from, gate)
    if all(old == new for old, new in positions.items()) and len(positions) == len(written_from.kept):
        return draft

    def remap(text: str) -> str:
        return remap_citations(text, positions)

    return replace(
        draft,
        executive_summary=remap(draft.executive_summary),
        key_findings=tuple(remap(f) for f in draft.key_findings),
        sections=tuple((heading, remap(body)) for heading, body in draft.sections),
        limitations=tuple(remap(x) for x in draft.limitations),
    )
