"""``research-agent plan``, and the plan a person gives or reviews in ``run``.

* :mod:`.command` ``plan QUESTION``: the decompose stage alone, printed or written as JSON; the
  ``run --plan FILE`` and ``run --review-plan`` options and what they give the run
* :mod:`.review`  the review on a terminal: accept, edit in ``$EDITOR``, or stop (its input and
  editor passed in, so a test gives its own)

The plan itself, its checks and what the pipeline does with it are :mod:`research_agent.plans`'.
"""

from .command import PlanFile, ReviewPlan, person_inputs, plan_command, review_on_terminal

__all__ = ["plan_command", "PlanFile", "ReviewPlan", "person_inputs", "review_on_terminal"]
