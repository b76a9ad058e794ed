"""A plan a person can review: the question, its domain and the sub-queries a run searches.

* :mod:`.plan`     the plan as a person sees it (:class:`ResearchPlan`, the JSON object
  ``{"question", "domain", "sub_queries"}``), read from a file or a form and checked as a planner's
  sub-queries are (:func:`checked_plan`), and the text a person edits (:func:`editable_text`)
* :mod:`.making`   the decompose stage alone (``research-agent plan``, MCP ``research_plan``):
  :func:`make_plan`
* :mod:`.steering` what the pipeline does with a person's plan: a plan given (no decompose call,
  no planning lesson said to be applied), and a review after decompose (:data:`PlanReview`), which
  the run's deadline waits for

A run whose plan a person gave or edited says so in its run record (``plan_by_person``), and it
does not replan (another plan would not be the person's). Its critique carries the flag into the
trial ledger, which leaves such a run out of every planning lesson's arms and keeps it in the
judging lessons' (:mod:`research_agent.memory.effects.decisions`).
"""

from .plan import MAX_SUB_QUERIES, ResearchPlan, checked_plan, editable_text, plan_from_text, read_plan_file

__all__ = ["MAX_SUB_QUERIES", "ResearchPlan", "checked_plan", "editable_text", "plan_from_text", "read_plan_file"]
