"""The memory tools: the lessons a run would get now, the stored critiques, one critique.

They read what the CLI's ``memory`` commands read (``reports/meta``), with the same
selection rules; only ``memory_lessons`` may call a model (the fast one, to classify the
question's domain, as ``research-agent memory lessons`` does). ``memory_proposals`` lists the
critic's proposed lessons; approving or rejecting one is a person's act in the CLI, and no
tool does it: an agent must not approve its own lessons.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from pydantic import Field

from ..config import Settings
from ..domains import DOMAINS, parse_domain
from ..errors import InputError, ResearchError
from ..llm import OpenAIChatModel
from ..memory.store.failures import load_failures
from ..memory.store.files import critique_path, load_critique
from ..memory.store.person.proposals import Proposal
from ..record.lessons import LeftOut
from ..run.assembly import validate_query
from ..run_refs import Runs
from ..service.memory import Memory
from ..service.person import undecided_proposals
from ..shapes import plain
from ..stages.classify import classify_domain
from .answers import answered, service_of
from .shapes import (
    EffectsOutput,
    FailedOut,
    LessonsOutput,
    MemoryListOutput,
    MemoryShowOutput,
    ProposalsOutput,
    critique_summary,
    lessons_output,
)
from .summaries import effects_text, lessons_text, list_text, proposals_text, show_text

__all__ = [
    "memory_lessons", "memory_list", "memory_show", "memory_effects", "memory_proposals", "load_by_id", "MAX_LIST",
]

MAX_LIST = 500

DomainName = Annotated[
    str | None,
    Field(description="Skip classification and use this domain.", json_schema_extra={"enum": [*DOMAINS, None]}),
]


@answered(LessonsOutput, summary=lessons_text)
async def memory_lessons(
    question: Annotated[str, Field(description="The question a run would research.")],
    ctx: Context,
    domain: DomainName = None,
) -> dict[str, Any]:
    """The lessons from past critiques that a run of this question would get now, and why;
    every critique file left out, with its reason.

    Without a domain, the question's domain is classified first by a call to the fast
    model (as `research-agent memory lessons` does); give the domain to avoid that call.
    """
    settings = service_of(ctx).settings()
    question = validate_query(question)
    chosen = parse_domain(domain) if domain is not None else await _classify(settings, question)
    selection, note = await asyncio.to_thread(Memory(settings).preview, chosen, now=datetime.now(UTC))
    return lessons_output(selection, note)


async def _classify(settings: Settings, question: str) -> str:
    """The question's domain, by the model (closed afterwards)."""
    model = OpenAIChatModel.from_settings(settings)
    try:
        chosen = await classify_domain(model, question)
    finally:
        await model.aclose()
    if chosen not in DOMAINS:
        raise InputError(f"the classifier returned an unknown domain {chosen[:40]!r}")
    return chosen


@answered(MemoryListOutput, summary=list_text)
async def memory_list(
    ctx: Context,
    domain: DomainName = None,
    limit: Annotated[int, Field(description="At most this many critiques, newest first.")] = 20,
) -> dict[str, Any]:
    """Stored critiques of past reports, newest first (optionally of one domain), with each run's
    short id; the runs whose critique failed, with the reason; and the critique files that failed
    validation with the reason."""
    if not 1 <= limit <= MAX_LIST:
        raise InputError(f"limit must be from 1 to {MAX_LIST}, not {limit}")
    wanted = parse_domain(domain) if domain is not None else None
    settings = service_of(ctx).settings()
    loaded = await asyncio.to_thread(Memory(settings).critiques, now=datetime.now(UTC))
    failed = await asyncio.to_thread(load_failures, settings.meta_dir)
    shorts = (await asyncio.to_thread(Runs.scan, settings.reports_dir)).shorts()
    good = [item.critique for item in loaded if item.critique is not None]
    chosen = [c for c in good if wanted is None or c.query_domain == wanted][:limit]
    return plain(MemoryListOutput(
        critiques=tuple(critique_summary(c, shorts.get(c.id, "")) for c in chosen),
        failed=tuple(FailedOut(f, shorts.get(f.run_id, "")) for f in failed[:limit]),
        invalid=tuple(LeftOut(item.name, item.error or "") for item in loaded if item.critique is None),
    ))  # fmt: skip


@answered(MemoryShowOutput, summary=show_text)
async def memory_show(
    ctx: Context,
    id: Annotated[
        str, Field(description="A run's id, short id, a unique prefix of either, latest or latest~N.")
    ],
) -> dict[str, Any]:
    """One stored critique: scores, pass or fail, weaknesses, suggestions, tags, usage. A lesson
    it applied shows its text only when that is the lesson's text now (stored text that was
    edited or planted is blank)."""
    settings = service_of(ctx).settings()
    runs = await asyncio.to_thread(Runs.scan, settings.reports_dir)
    critique = await asyncio.to_thread(load_by_id, runs, id)
    critique = await asyncio.to_thread(Memory(settings).shown_texts, critique, now=datetime.now(UTC))
    return plain(MemoryShowOutput(critique.as_dict(), runs.short(critique.id)))


@answered(EffectsOutput, summary=effects_text)
async def memory_effects(ctx: Context, domain: DomainName = None) -> dict[str, Any]:
    """Each lesson's measured effect: runs given it and runs that withheld it by its own random
    trial draw (control runs count in neither), the mean of its target with and without it, the
    difference (positive means better) with an always-valid interval (paired by question, adjusted
    for the other lessons), the same for the mean score (score), the keys it was never apart from
    (confounded_with), its status (helpful, active, measuring, no-effect: ranked last, or retired:
    never given again unless a person reinstates it), the measure that decided it (decided_on), the
    run of its domain at which the evidence first reached the decision (decided_after: run N), the
    runs of its domain since its trial began (trial_runs) and, while undecided, about how many more
    a decision needs at the current spread (more_runs)."""
    wanted = parse_domain(domain) if domain is not None else None
    settings = service_of(ctx).settings()
    found = await asyncio.to_thread(Memory(settings).effects, now=datetime.now(UTC), domain=wanted)
    return plain(EffectsOutput(tuple(found)))


APPROVAL_NOTE = (
    "A proposal reaches no prompt. Only the person running research-agent decides one, in the CLI: "
    "`research-agent memory approve KEY` or `research-agent memory reject KEY`; no tool can."
)


def _undecided_proposals(memory: Memory) -> tuple[Proposal, ...]:
    return tuple(undecided_proposals(memory.place, now=datetime.now(UTC)))


@answered(ProposalsOutput, summary=proposals_text)
async def memory_proposals(ctx: Context) -> dict[str, Any]:
    """The lessons critics proposed that no person has decided yet, each with the critiques
    that proposed it. They are quarantined: none reaches a prompt unless the person running
    research-agent approves it in the CLI. This server cannot approve or reject them."""
    settings = service_of(ctx).settings()
    found = await asyncio.to_thread(_undecided_proposals, Memory(settings))
    return plain(ProposalsOutput(found, APPROVAL_NOTE))


def load_by_id(runs: Runs, ref: str) -> Any:
    """The critique ``ref`` names among ``runs``; UnknownRun when there is none, InputError when it
    is ambiguous or invalid."""
    run_id = runs.resolve(ref, "critique")
    meta_dir = runs.reports_dir / "meta"
    path = critique_path(meta_dir, run_id)
    try:
        return load_critique(path, meta_dir=meta_dir)
    except ResearchError as exc:
        raise InputError(f"{path.name}: {exc}") from None
