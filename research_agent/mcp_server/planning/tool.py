"""``research_plan``: plan a question as a run would and search nothing; and ``research``'s ``plan``.

A client shows the plan to its person (or edits it itself), then calls ``research`` with it: that
run makes no decompose call, searches the plan's sub-queries, records ``plan_by_person`` and does not
replan (:mod:`research_agent.plans`). The plan is checked as ``run --plan FILE`` checks a file.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from pydantic import Field
from typing_extensions import TypedDict  # pydantic reads TypedDicts from here below Python 3.12

from ...plans import ResearchPlan, checked_plan
from ...plans.making import make_plan
from ...shapes import plain, shape
from ..answers import answered, service_of
from ..arguments import ModeName, Question
from ..progress import NotifyingProgress

__all__ = ["research_plan", "PlanArgument", "PlanOutput", "PlanIn", "given_plan_of", "plan_text"]


class PlanIn(TypedDict, total=False):
    """A plan as ``research_plan`` gives it, maybe edited."""

    question: str
    domain: str
    sub_queries: list[str]


PlanArgument = Annotated[
    PlanIn | None,
    Field(description="A plan to search instead of asking the model for one: research_plan's answer "
                      "({question, domain, sub_queries}), as given or edited (1 to 12 search queries). "
                      "The run records that a person gave the plan, and does not replan."),
]  # fmt: skip


@dataclass(frozen=True)
class PlanOutput:
    """A plan for a person to review, and what making it cost."""

    plan: ResearchPlan = field(metadata=shape(flatten=True))  # its question, domain and sub_queries
    fell_back: bool
    warnings: tuple[str, ...]
    total_tokens: int
    cost_usd: float | None


def given_plan_of(plan: Mapping[str, Any] | None, question: str) -> ResearchPlan | None:
    """The ``plan`` argument checked (for ``question``), or None when none was given; InputError if bad."""
    return None if plan is None else checked_plan(dict(plan), question=question, where="the plan argument")


def plan_text(data: Mapping[str, Any]) -> str:
    """research_plan: the plan, one sub-query a line, and how to use it."""
    lines = [f"Plan ({data['domain']}) for: {data['question']}"]
    lines += [f"- {query}" for query in data["sub_queries"]]
    lines.append("Give it (edited or not) as the plan argument of research to search it.")
    lines += [f"Warning: {w}" for w in data["warnings"][:5]]
    return "\n".join(lines)


@answered(PlanOutput, summary=plan_text)
async def research_plan(question: Question, ctx: Context, mode: ModeName = "standard") -> dict[str, Any]:
    """Plan a question as a research run would, and search nothing: its domain and sub-queries.

    The same planning as `research-agent plan` (one model call, the planning lessons in the prompt).
    Show the plan to the person, let them edit it, then pass it as the `plan` argument of `research`:
    that run searches exactly those sub-queries, with no planning call of its own.
    """
    service = service_of(ctx)
    settings = service.run_settings(mode=mode)
    with service.slots.take():
        progress = NotifyingProgress(asyncio.get_running_loop())
        async with progress.forwarding(ctx.report_progress):
            made = await make_plan(question, settings=settings, progress=progress)
    return plain(PlanOutput(made.plan, made.fell_back, made.warnings, made.usage.tokens, made.usage.cost_usd))
