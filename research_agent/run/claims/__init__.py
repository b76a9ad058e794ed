"""The claim check as a run does it (:mod:`research_agent.claims` holds what it checks with).

* :mod:`.in_run`     the claim check in a run: planned from the draft, answered in the skeptic's round
* :mod:`.on_report`  ``review --check-claims``: the same claim check on a finished report, from what its run stored

Importing this package loads none of its modules.
"""
