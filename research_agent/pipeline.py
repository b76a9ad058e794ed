"""The story of one run, top to bottom: plan, gather, judge, write and review, finish.

:func:`research` assembles the run (:mod:`research_agent.run.assembly`: the model, the
providers, what the run owns, the deadline) and tells its story here. Each step is a call
into the module that owns it: ``stages`` (decompose, relevance and the gate),
``search`` and ``gather`` (finding and reading sources), ``writing`` (draft, skeptic,
review, revise) and ``finish`` (the final report and the run record). Steps return frozen
results; what grows across steps (sources scored, iterations, warnings, failures, the
latest draft) is kept in the run's ledger (:mod:`research_agent.run.ledger`).

The deadline (``--timeout``) or a failing writer is an error before a draft exists; after, the
latest draft is published (``stop_reason: deadline`` for the deadline). A run that read no model
answer at all is an endpoint failure (exit 3), never a report that blames the sources.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .config import Settings
from .errors import LLMError, LLMUnavailable, RunTimeout
from .fetch.gather import SourceReader, gather_sources, source_key
from .interrupts import run_interruptibly
from .journal.run_journal import Journalling
from .lazy import import_later, lazy_module
from .llm import ChatModel
from .llm.client.sdk import wait_for_sdk
from .llm.waiting import Ticker
from .memory.critique.site_names import source_site, source_sites
from .memory.lessons.render import lessons_line, lessons_markdown, lessons_prompt_block
from .memory.lessons.types import LessonSelection
from .plans.plan import ResearchPlan
from .plans.steering import PlanReview, given_plan, lessons_for, reviewed
from .progress import Progress
from .record.parts import IterationDecision
from .results import Briefing, Iteration, Outcome, ResearchResult, SourceSummary
from .run.assembly import LessonsFn, Run, RunInputs, RunLessons, assemble, within_deadline
from .run.ledger import KeptDraft
from .search.base import SearchProvider
from .search.registry import search_all
from .sources import Source
from .stages.decompose import Plan, decompose
from .stages.gate import Gate, decide_gate
from .stages.relevance import score_sources

# The steps of writing, reviewing and finishing a run: imported while its first model call is out
# (:func:`research`), not before it (they would delay it: one interpreter lock serves both).
LATER_STEPS = ("research_agent.run.writing", "research_agent.run.first_draft", "research_agent.run.replan",
               "research_agent.run.finish", "research_agent.stages.writing.writer")  # fmt: skip
if TYPE_CHECKING:
    from .run import finish, first_draft, replan, writing
    from .stages.writing import writer
else:
    writing, first_draft, replan, finish, writer = map(lazy_module, LATER_STEPS)

__all__ = ["research", "research_sync", "ResearchResult", "SourceSummary", "Iteration", "Progress"]


async def research(
    query: str,
    *,
    settings: Settings | None = None,
    model: ChatModel | None = None,
    providers: Sequence[SearchProvider] | None = None,
    reader: SourceReader | None = None,
    lessons: LessonsFn | RunLessons | None = None,
    progress: Progress | None = None,
    now: datetime | None = None,
    rng: random.Random | None = None,
    ticker: Ticker | None = None,
    on_written: Callable[[ResearchResult], None] | None = None,
    plan: ResearchPlan | None = None,
    review_plan: PlanReview | None = None,
    journalling: Journalling | None = None,
) -> ResearchResult:
    """Research ``query`` and write the report; return what the run produced.

    Anything not given is built from ``settings`` (by default, from the environment):
    the model from OPENAI_* settings, providers from the corpus/search settings, the
    page reader when a web provider is used, lessons from ``reports/meta``. The
    deadline (``settings.run_timeout``) covers everything from indexing to writing.
    ``ticker`` paces the "waiting for the model" count on ``progress`` (default: every second).
    ``on_written`` hears the result in the very step that wrote the report and its record (no
    await between them): from then on a cancel comes too late to unwrite anything, which is how a
    front end tells a cancelled run from a finished one (:mod:`research_agent.service.runs`).
    ``plan``: a person's plan, searched instead of asking the model for one; ``review_plan``: shown
    the model's first plan, gives back the one to search (:mod:`research_agent.plans.steering`).
    The run's journal entry is written as it starts and says ``done`` in that same step
    (``journalling``: the front end, the run to resume: :mod:`research_agent.journal`).
    """
    given = RunInputs(settings=settings, model=model, providers=providers, reader=reader, lessons=lessons,
                      progress=progress, now=now, rng=rng, ticker=ticker, journalling=journalling)  # fmt: skip
    async with assemble(query, given) as run:
        import_later(LATER_STEPS, after=wait_for_sdk)  # the model client is built: its SDK is being imported
        try:
            async with within_deadline(run):
                first = await _first_plan(run, plan)
            run, first = await reviewed(run, first, review_plan)  # outside the deadline: it waits for the person
            async with within_deadline(run):
                briefing = await _briefed(run, first)
                outcome = await _plan_until_written(run, briefing, first)
        except RunTimeout as exc:
            outcome = _at_deadline(run, exc)
        except LLMError as exc:
            outcome = writing.published_after_failure(run, exc)
        result = finish.finish_run(run, briefing, outcome)
        run.journal.done(result.report_path)
        if on_written is not None:
            on_written(result)
        return result


def research_sync(query: str, **kwargs: Any) -> ResearchResult:
    """Blocking wrapper around :func:`research` for scripts and notebooks without a loop."""
    return run_interruptibly(research(query, **kwargs))


def _at_deadline(run: Run, timeout: RunTimeout) -> Outcome:
    """The best draft so far, when the deadline passed after one was written (or while the first
    was streaming, once it had a usable paragraph); else the error."""
    kept = run.ledger.latest_draft or _streamed_so_far(run)
    if kept is None:
        raise timeout
    run.ledger.warn(f"{timeout}; the latest draft is published as it stood")
    return Outcome(kept.gate, writing.as_it_stood(run, kept.gate, kept.written), kept.plan, "deadline", timeout.stage)


def _streamed_so_far(run: Run) -> KeptDraft | None:
    """The complete paragraphs (else sentences) of the first draft as far as it had streamed, when they make a draft."""
    arriving = run.ledger.draft_in_progress
    draft = writer.kept_part(arriving.text, "deadline", run.settings.mode.target_words) if arriving is not None else None
    if arriving is None or draft is None:
        return None
    draft = draft.citing(len(arriving.gate.kept))  # citations read as draft_report reads a whole answer's
    run.ledger.count_cut()
    return KeptDraft(arriving.plan, arriving.gate, writing.Written("proceed", draft, None, None, 0))


def _check_something_was_read(run: Run) -> None:
    """A run that has read no model answer at all failed at the endpoint (exit 3, no report)."""
    if run.model.answers_read == 0 and run.model.last_failure:
        raise LLMUnavailable(f"no answer of the model endpoint could be read in this run: {run.model.last_failure}")


# --- plan --------------------------------------------------------------------------------


async def _first_plan(run: Run, given: ResearchPlan | None) -> Plan:
    """The first plan: a person's (``given``: no model call), else the model's, which names the domain too (so
    it is offered every domain's planning lessons; only the named domain's count: :mod:`.memory.lessons.run`).
    The corpus is indexed meanwhile: the first search needs it, the first model call does not."""
    if given is not None:
        return given_plan(given, run.query)
    offered = run.lessons.offer().prompt_block()
    return await run.indexing.alongside(_decomposed(run, 1, lessons_block=offered, pick_domain=True))


async def _briefed(run: Run, first: Plan) -> Briefing:
    """The first plan recorded, the corpus ready, and what the plan's domain gives the run."""
    _recorded(run, first)
    if not run.indexing.done:
        with run.clock.stage("index", "preparing sources"):
            await run.indexing.ready()
    await run.indexing.ready()  # raises what indexing raised
    selection = lessons_for(first, run.lessons.given(first.domain))
    return _briefing(run, first.domain, selection, by_person=bool(first.by_person))


def _briefing(run: Run, domain: str, selection: LessonSelection, *, by_person: bool = False) -> Briefing:
    """The domain and the lessons the run was given: the prompt blocks and the report's section."""
    for warning in selection.warnings:
        run.ledger.warn(warning)
    if line := lessons_line(selection):  # what the run got: lessons given, withheld for their trial, or a control run
        run.progress.note(line)
    given = selection.adaptive and bool(selection.lessons)
    return Briefing(
        domain, selection, lessons_markdown=lessons_markdown(selection),
        decompose_lessons=lessons_prompt_block(selection, "decompose") if given else "",
        relevance_lessons=lessons_prompt_block(selection, "relevance") if given else "", plan_by_person=by_person,
    )  # fmt: skip


async def _plan_until_written(run: Run, briefing: Briefing, first: Plan) -> Outcome:
    """Gather, judge, write and review the ``first`` plan; plan again (with what fell short)
    while the sources cannot support an answer or the skeptic finds it not viable, up to the limit,
    and only while new sources could help (:mod:`.run.replan`)."""
    max_plans = _max_plans(run)
    written: writing.Written | None = None
    plan = first
    while True:
        can_replan = plan.number < max_plans
        judged = await _judge_and_draft(run, briefing, plan, await _gather(run, plan.sub_queries))
        gate = judged.gate
        if not gate.can_write:
            _check_something_was_read(run)  # another plan cannot help an endpoint that answers nothing readable
            skip = replan.replan_skip(plan) if can_replan else ""
            if skip:
                run.ledger.not_replanned(skip)
            _record_gate(run, plan, gate, "replan" if can_replan and not skip else "give_up")
            if not can_replan or skip:
                return Outcome(
                    gate, written, plan.number, f"{gate.decision} after {plan.number} plan(s): {gate.reason}"
                )
            run.progress.note(f"replanning ({plan.number + 1}/{max_plans}): {gate.decision}, {gate.reason}")
            guidance = replan.guidance(gate, None, plan.sub_queries)
        else:
            written = await writing.write_and_review(run, plan, gate, can_replan=can_replan, drafted=judged.draft)
            if written.decision != "replan":
                return Outcome(gate, written, plan.number, run.ledger.iterations[-1].reason)
            viability = written.skeptic.viability if written.skeptic else None
            run.progress.note(
                f"replanning ({plan.number + 1}/{max_plans}): viability {viability} < {run.settings.min_viability}"
            )
            guidance = replan.guidance(gate, written.skeptic, plan.sub_queries)
        plan = _recorded(run, await _decomposed(run, plan.number + 1, lessons_block=briefing.decompose_lessons,
                                                guidance=guidance))  # fmt: skip


def _max_plans(run: Run) -> int:
    return run.settings.max_plans if run.settings.retry else 1


async def _decomposed(run: Run, number: int, *, lessons_block: str, guidance: str = "", pick_domain: bool = False) -> Plan:
    detail = f"plan {number}/{_max_plans(run)}" if number > 1 else ""
    with run.clock.stage("decompose", detail):
        return await decompose(
            run.model, run.query, count=run.settings.mode.sub_queries, number=number, context_block=run.context_block,
            lessons_block=lessons_block, guidance=guidance, pick_domain=pick_domain, notify=run.ledger.warn,
        )  # fmt: skip


def _recorded(run: Run, plan: Plan) -> Plan:
    """``plan``, its sub-queries (and those dropped) kept in the run's ledger and counted."""
    run.ledger.add_sub_queries(plan.sub_queries)
    run.ledger.add_dropped(plan)
    if plan.dropped:
        run.progress.note(f"plan {plan.number}: {len(plan.dropped)} sub-quer{'y' if len(plan.dropped) == 1 else 'ies'} "
                          "dropped as no search queries (see the run record)")  # fmt: skip
    run.progress.counts(sub_queries=len(run.ledger.sub_queries), tokens=run.tokens())
    return plan


# --- gather ------------------------------------------------------------------------------


async def _gather(run: Run, sub_queries: tuple[str, ...]) -> tuple[Source, ...]:
    """Search every sub-query, then read the new sources, up to the run's source limit."""
    settings = run.settings
    # Ask for enough hits that overlapping sub-queries can still fill the source limit.
    per_query = max(settings.mode.results_per_query, -(-3 * settings.source_limit // max(1, len(sub_queries))))
    with run.clock.stage("search", f"{len(sub_queries)} sub-queries"):
        results = await search_all(
            run.providers, list(sub_queries), max_results=per_query, on_failure=run.ledger.provider_failed
        )
        run.progress.counts(found=len({h.location for hits in results.hits.values() for h in hits}))
    with run.clock.stage("fetch"):
        gathered = await gather_sources(
            results.hits,
            limit=settings.source_limit,
            token_budget=settings.mode.source_tokens,
            reader=run.reader,
            exclude=run.ledger.scored_keys,
        )
        run.ledger.fetches_failed(gathered.fetch_failures)
    run.ledger.add_found(
        {query: [source_key(h) for h in hits] for query, hits in results.hits.items()},
        capped_by_user=settings.max_sources is not None and gathered.candidates > settings.source_limit,
    )
    return gathered.sources


# --- judge -------------------------------------------------------------------------------


async def _judge_and_draft(run: Run, briefing: Briefing, plan: Plan, sources: tuple[Source, ...]) -> first_draft.Judged:
    """Relevance and the gate; where the model has slots to spare, the first draft is written
    beside them and kept where relevance agrees with it (:mod:`.run.first_draft`)."""
    if not sources or not first_draft.drafts_beside(run, plan.number):
        return first_draft.Judged(await _judge(run, briefing, sources))
    written_from = first_draft.provisional(sources)
    return await first_draft.judge_beside_draft(
        run, _judge(run, briefing, sources), writing.draft_from(run, plan, written_from), written_from
    )


async def _judge(run: Run, briefing: Briefing, sources: tuple[Source, ...]) -> Gate:
    """Score the new sources for relevance; decide on every source scored so far."""
    with run.clock.stage("relevance", f"scoring {len(sources)} sources"):
        scored = await score_sources(
            run.model, run.query, sources, token_budget=run.settings.mode.relevance_tokens,
            lessons_block=_relevance_lessons(run, briefing, sources), batch_tokens=run.settings.relevance_batch_tokens,
            notify=run.ledger.warn,
        )
        run.ledger.add_scored(scored)  # score_sources said how many are left out unscored
        gate = decide_gate(run.ledger.scored, run.settings.mode, site_of=lambda s: source_site(s, run.corpus_roots))
        run.progress.counts(scored=len(run.ledger.scored), kept=len(gate.kept), tokens=run.tokens())
    return gate


def _relevance_lessons(run: Run, briefing: Briefing, sources: tuple[Source, ...]) -> str:
    """The relevance prompt's lessons: a site lesson only when its site is one of the run's own
    sources (judged before, or being judged now), so no other site name reaches the prompt."""
    if not briefing.relevance_lessons:
        return ""
    seen = source_sites([*(item.source for item in run.ledger.scored), *sources], run.corpus_roots)
    return lessons_prompt_block(briefing.lessons.for_sites(seen), "relevance")


def _record_gate(run: Run, plan: Plan, gate: Gate, decision: IterationDecision) -> None:
    """An iteration that ended at the gate: too little to write from."""
    run.ledger.add_iteration(Iteration(
        plan=plan.number, revision=0, sub_queries=plan.sub_queries, gate=gate.decision,
        scored_count=len(run.ledger.scored), kept_count=len(gate.kept), viability=None, critical_count=0,
        warning_count=0, decision=decision, reason=gate.reason, tokens=run.tokens(),
    ))  # fmt: skip
