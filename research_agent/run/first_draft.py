"""The first draft of a plan, written while relevance judges the same sources.

Relevance and the writer read the same sources, and relevance (short answers, the fast model)
is done long before the writer. So where the model has more than one slot, the writer does not
wait for it: it drafts from the sources retrieval found, in retrieval's order, while relevance
scores them. When
relevance is done, the gate decides as before; a gate that allows no report stops the writer.
Otherwise the draft is kept as relevance leaves it:

* the kept sources stay in the order the writer read them (so revise's prompt starts as the
  draft's did, and a server's prompt cache reuses it), the draft's citations renumbered where a
  dropped source leaves a gap;
* a sentence (or finding) that cites only sources relevance did not keep is removed: it says
  what no kept source was judged to support, and a draft written after relevance would not have
  read those sources; a citation of a dropped source beside a kept one is dropped.

Only a draft with nothing usable left (or no summary) is written again from the kept sources,
one round more, said in the run's warnings. With one slot the calls would only queue behind
each other, so relevance goes first, as before; so it does for a replan's sources.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, replace

from ..claims.sentences import line_sentences
from ..sources import ScoredSource, Source
from ..stages.gate import Gate
from ..stages.writing.draft_text import usable
from ..stages.writing.synthesize import ReportDraft
from ..text.citations import remap_citations
from .assembly import Run

__all__ = ["Judged", "Pruned", "judge_beside_draft", "drafts_beside", "provisional", "disagreement", "pruned", "UNJUDGED"]

UNJUDGED = "drafted from while relevance was scoring it"
_LEAD = re.compile(r"[ \t]*(?:[-*+]|\d{1,3}[.)])?[ \t]*")  # what is left of a list item whose sentences all went


@dataclass(frozen=True)
class Judged:
    """The gate, and the draft written beside relevance, cited by ``gate.kept``'s order (None when
    there is none to keep: relevance went first, disagreed with it, or allows no report)."""

    gate: Gate
    draft: ReportDraft | None = None


def drafts_beside(run: Run, plan: int) -> bool:
    """Whether the writer drafts while relevance runs: only where calls run side by side, and only
    for the first plan (a later one follows sources that fell short: a draft beside it is more
    often one the gate stops, its prompt spent for nothing)."""
    return run.settings.llm_concurrency > 1 and plan == 1


def provisional(sources: Sequence[Source]) -> Gate:
    """What the writer drafts from before relevance is done: the plan's ``sources`` in retrieval's
    order, each unscored as yet; as the gate would call it, a full report."""
    kept = tuple(ScoredSource(s, None, UNJUDGED) for s in sources)
    return Gate("full_report", kept, (), (), len({s.site for s in sources}), UNJUDGED)


async def judge_beside_draft(
    run: Run, judging: Awaitable[Gate], drafting: Awaitable[ReportDraft], written_from: Gate
) -> Judged:
    """Await ``judging`` (relevance and the gate) while ``drafting`` (the writer, from
    ``written_from.kept``) runs beside it; keep the draft as relevance leaves it (:func:`pruned`)."""
    draft_task = asyncio.ensure_future(drafting)
    set_aside = True  # the gate stopped the writer: what it streamed is no draft of this run
    try:
        gate = await judging
        if not gate.can_write:
            return Judged(gate)
        draft = await draft_task
    except BaseException:
        set_aside = False  # the run is stopping (its deadline, a cancel): what was streamed stays for it to publish
        raise
    finally:
        if not draft_task.done():
            draft_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await draft_task
            if set_aside:
                run.ledger.discard_draft_in_progress()
        elif not draft_task.cancelled():
            draft_task.exception()  # a writer that failed while relevance failed too: its error is the run's, not a log's
    why = disagreement(written_from, gate)
    kept = None if why else pruned(draft, written_from, gate)
    if kept is None:
        why = why or "nothing usable is left once the sentences citing only sources relevance did not keep are removed"
        note = f"the draft written while relevance scored the sources was set aside ({why}): written again"
        run.progress.note(note)
        run.ledger.record_warning(note)
        run.ledger.discard_draft_in_progress()
        return Judged(gate)
    if kept.removed:
        note = (f"{kept.removed} sentence(s) of the draft citing only sources relevance did not keep were removed "
                "(it was written while relevance scored them)")  # fmt: skip
        run.progress.note(note)
        run.ledger.record_warning(note)
    return Judged(replace(gate, kept=_in_draft_order(written_from, gate)), kept.draft)


def _in_draft_order(written_from: Gate, gate: Gate) -> tuple[ScoredSource, ...]:
    """The kept sources in the order the writer read them (those it read)."""
    kept = {id(s.source): s for s in gate.kept}
    return tuple(kept[id(s.source)] for s in written_from.kept if id(s.source) in kept)


def _positions(written_from: Gate, gate: Gate) -> dict[int, int]:
    """Each kept source's number in the draft -> its number among the kept sources, in the writer's order."""
    kept = {id(s.source) for s in gate.kept}
    numbers = [n for n, s in enumerate(written_from.kept, start=1) if id(s.source) in kept]
    return {old: new for new, old in enumerate(numbers, start=1)}


def disagreement(written_from: Gate, gate: Gate) -> str:
    """Why a draft written from ``written_from.kept`` cannot stand whatever it cites ("" when it can)."""
    if len(_positions(written_from, gate)) != len(gate.kept):
        return "relevance kept a source the writer did not read"
    return ""


@dataclass(frozen=True)
class Pruned:
    draft: ReportDraft
    removed: int  # sentences and findings removed for citing only dropped sources


def pruned(draft: ReportDraft, written_from: Gate, gate: Gate) -> Pruned | None:
    """``draft`` cited by the kept sources in the writer's order, without the sentences that cite
    only sources relevance did not keep (None when no summary or no usable paragraph is left)."""
    positions = _positions(written_from, gate)
    dropped = {n for n in range(1, len(written_from.kept) + 1) if n not in positions}
    removed = 0

    def prune(text: str) -> str:
        nonlocal removed
        lines = []
        for line in text.split("\n"):
            cut = [s for s in line_sentences(line) if s.numbers and set(s.numbers) <= dropped]
            for sentence in reversed(cut):
                line = line[: sentence.start] + line[sentence.end :].lstrip(" \t")
            removed += len(cut)
            if not cut or _LEAD.sub("", line).strip():
                lines.append(line.rstrip() if cut else line)
        return remap_citations("\n".join(lines).strip("\n"), positions)

    result = replace(
        draft, executive_summary=prune(draft.executive_summary),
        key_findings=tuple(f for f in map(prune, draft.key_findings) if f.strip()),
        sections=tuple((h, b) for h, b in ((h, prune(b)) for h, b in draft.sections) if b.strip()),
        limitations=tuple(x for x in map(prune, draft.limitations) if x.strip()),
    )  # fmt: skip
    if not result.executive_summary.strip() or not usable(result):
        return None
    return Pruned(result, removed)
