"""A plan review the run waits for, answered from the run's page."""

from __future__ import annotations

import asyncio

from ...errors import InputError
from ...plans import ResearchPlan, plan_from_text
from ...text.controls import one_line, without_controls

__all__ = ["WaitingReview", "EMPTY"]

EMPTY = "no sub-query is left: give at least one search query, or Cancel the run"


class WaitingReview:
    """The run's plan review (:data:`~research_agent.plans.steering.PlanReview`): awaited by the run
    once it has its plan (:attr:`shown`), answered by :meth:`answer`; a cancelled run stops waiting.
    A refused answer keeps the person's text (:attr:`typed`) and why (:attr:`problem`) for the page."""

    def __init__(self) -> None:
        self.shown: ResearchPlan | None = None
        self.typed = ""
        self.problem = ""
        self.edited = False
        self._answer: asyncio.Future[ResearchPlan] | None = None

    @property
    def pending(self) -> bool:
        """The run waits for the person."""
        return self._answer is not None and not self._answer.done()

    @property
    def text(self) -> str:
        """What the form's box holds: the person's refused text, else the plan's sub-queries, one a line."""
        if self.typed:
            return self.typed
        return "".join(f"{query}\n" for query in self.shown.sub_queries) if self.shown is not None else ""

    async def __call__(self, plan: ResearchPlan) -> ResearchPlan:
        self.shown = plan
        self._answer = asyncio.get_running_loop().create_future()
        return await self._answer

    def answer(self, text: str) -> bool:
        """The person's sub-queries (one a line): True when the run goes on with them; False, with
        :attr:`problem` said, when they are refused (or the run no longer waits)."""
        if not self.pending or self.shown is None or self._answer is None:
            self.problem = "this run is not waiting for its plan any more"
            return False
        try:
            plan = plan_from_text(self.shown, text, where="your plan")
        except InputError as exc:
            plan, self.problem = None, one_line(exc)
        else:
            self.problem = "" if plan is not None else EMPTY
        if plan is None:
            self.typed = without_controls(text)[:20_000]
            return False
        self.edited = plan != self.shown
        self.typed = ""
        self._answer.set_result(plan)
        return True
