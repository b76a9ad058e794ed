"""The decompose stage alone: the plan a run would start from, for a person to read and edit.

:func:`make_plan` assembles a run as ``research()`` does (the model, the business context, the
lessons, the deadline; no search provider, nothing indexed) and asks the planner once, as a run's
first plan asks it: offered the planning lessons of every domain that has some, naming the
question's domain. Nothing is searched and nothing is written but the reports folders a run
needs. A planner whose answer cannot be used gives the question itself, domain ``other``, with a
warning, as a run does.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime

from ..config import Settings
from ..llm import ChatModel
from ..llm.usage import Usage
from ..memory.lessons.run import LessonsFn, RunLessons
from ..progress import Progress
from ..run.assembly import RunInputs, assemble, within_deadline
from ..stages.decompose import decompose
from .plan import ResearchPlan

__all__ = ["MadePlan", "make_plan"]


@dataclass(frozen=True)
class MadePlan:
    """The plan, what the planner said on the way (warnings), and the tokens it spent."""

    plan: ResearchPlan
    warnings: tuple[str, ...]
    usage: Usage
    fell_back: bool = False


async def make_plan(
    question: str,
    *,
    settings: Settings | None = None,
    model: ChatModel | None = None,
    lessons: LessonsFn | RunLessons | None = None,
    progress: Progress | None = None,
    now: datetime | None = None,
    rng: random.Random | None = None,
) -> MadePlan:
    """Plan ``question`` as a run's first plan is made (see the module docstring)."""
    given = RunInputs(settings=settings, model=model, providers=(), lessons=lessons, progress=progress, now=now, rng=rng)
    async with assemble(question, given) as run:
        async with within_deadline(run):
            offered = run.lessons.offer().prompt_block()
            with run.clock.stage("decompose"):
                plan = await decompose(
                    run.model, run.query, count=run.settings.mode.sub_queries, context_block=run.context_block,
                    lessons_block=offered, pick_domain=True, notify=run.ledger.warn,
                )  # fmt: skip
        return MadePlan(
            ResearchPlan(run.query, plan.domain, plan.sub_queries), run.ledger.warnings, run.model.total, plan.fell_back
        )
