"""What the pipeline does with a person's plan.

* **Given** (``run --plan FILE``, MCP ``research(plan=...)``): :func:`given_plan` is the run's first
  plan; the decompose stage is not called. No prompt got a planning lesson, so none is said to be
  applied: :func:`without_planning` moves them to the selection's ``excluded`` list (a planning
  lesson withheld by its trial stays withheld: it was not given either way).
* **Reviewed** (``run --review-plan``, the workbench's "review the plan first"): the model plans as
  always, then :func:`reviewed` shows the plan to a :data:`PlanReview` and waits. The person accepts
  it (the run goes on as if nobody had looked), edits it (the plan becomes ``edited``), or stops
  (the review raises :class:`~research_agent.errors.Cancelled`, or is cancelled: nothing is written).
  The run's deadline does not count the wait: it moves on by the time the person took.

A plan given or edited is the person's (``Plan.by_person``): the run records ``plan_by_person``,
and does not replan (:data:`research_agent.run.replan.BY_PERSON`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import replace

from ..memory.lessons.offer import NOT_OFFERED
from ..memory.lessons.types import LessonSelection
from ..run.assembly import Run
from ..stages.decompose import Plan
from .plan import ResearchPlan, checked_plan

__all__ = ["PlanReview", "REVIEW_STAGE", "given_plan", "lessons_for", "reviewed", "without_planning"]

# Shows the plan to a person and gives back the plan to search (the same one when accepted);
# raises Cancelled (or is cancelled) when the person stops the run.
PlanReview = Callable[[ResearchPlan], Awaitable[ResearchPlan]]
REVIEW_STAGE = "plan review"
GIVEN_REASON = "a person gave the plan: no planning prompt was written"


def given_plan(plan: ResearchPlan, question: str) -> Plan:
    """The run's first plan, as a person gave it for ``question``: checked as a plan file is (a library
    caller may have built it by hand), InputError before any model call."""
    plan = checked_plan(plan.as_dict(), question=question)
    return Plan(1, plan.sub_queries, domain=plan.domain, by_person="given")


def without_planning(selection: LessonSelection) -> LessonSelection:
    """``selection`` with no planning lesson given, each listed in ``excluded`` as a person's plan
    leaves it: no planning prompt was written to give it in. (A run that makes no planning offer
    has them moved out as "not offered" already: that reason is put right.)"""
    planning = [lesson.key for lesson in selection.lessons if lesson.stage == "decompose"]
    relabelled = tuple((key, GIVEN_REASON if why == NOT_OFFERED else why) for key, why in selection.excluded)
    lessons = tuple(lesson for lesson in selection.lessons if lesson.stage != "decompose")
    reason = selection.reason
    if not lessons and (planning or reason == f"no lessons: none of the {selection.domain} lessons fit in the planning prompt"):
        reason = f"no lessons: a person gave the plan, and the {selection.domain} lessons are for planning"
    return replace(
        selection, lessons=lessons, adaptive=selection.adaptive and bool(lessons), reason=reason,
        excluded=(*relabelled, *((key, GIVEN_REASON) for key in planning)),
    )  # fmt: skip


def lessons_for(plan: Plan, selection: LessonSelection) -> LessonSelection:
    """The lessons of a run whose first plan is ``plan``: none for planning when a person gave it."""
    return without_planning(selection) if plan.by_person == "given" else selection


async def reviewed(run: Run, plan: Plan, review: PlanReview | None) -> tuple[Run, Plan]:
    """``plan`` (the model's first) as the person left it, and the run with its deadline moved on by
    the time they took (no ``review``, or a plan the person gave: as they are). Call it outside the
    run's deadline."""
    if review is None or plan.by_person:
        return run, plan
    loop = asyncio.get_running_loop()
    began = loop.time()
    shown = ResearchPlan(run.query, plan.domain, plan.sub_queries)
    with run.clock.stage(REVIEW_STAGE, "waiting for a person to accept, edit or stop"):
        answer = await review(shown)
    run = replace(run, deadline=run.deadline + (loop.time() - began))
    if (answer.domain, answer.sub_queries) == (plan.domain, plan.sub_queries):
        return run, plan
    run.progress.note(f"{REVIEW_STAGE}: the plan was edited ({len(answer.sub_queries)} sub-queries)")
    return run, replace(plan, sub_queries=answer.sub_queries, domain=answer.domain, by_person="edited", fell_back=False)
