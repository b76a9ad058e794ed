"""The plan a person can review, over MCP: the ``research_plan`` tool (the decompose stage alone)
and the ``plan`` argument the ``research`` tool takes back (:mod:`.tool`)."""

from .tool import PlanArgument, PlanOutput, given_plan_of, plan_text, research_plan

__all__ = ["research_plan", "PlanArgument", "PlanOutput", "given_plan_of", "plan_text"]
