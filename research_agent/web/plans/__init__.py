"""The workbench's plan review: "review the plan first" on the ask form pauses the run after its
plan, and the run's page shows the sub-queries, editable, with Continue and Cancel.

* :mod:`.waiting` :class:`WaitingReview`, the run's :data:`~research_agent.plans.steering.PlanReview`:
  it waits for the person's answer, which the page's form gives it
* :mod:`.pages`   ``POST /runs/<key>/plan``: the edited sub-queries (CSRF, loopback only), checked as
  any plan is; a refusal is said on the run's page above the person's own text
"""

from .waiting import WaitingReview

__all__ = ["WaitingReview"]
