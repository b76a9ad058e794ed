"""The claim check: every cited sentence checked against the passage it cites, before the report is final.

* :mod:`.sentences` the cited sentences of report text, line by line
* :mod:`.select`    which sentences are checked in each mode, paired with their passages, in how many calls
* :mod:`.verdicts`  the model's verdicts and the program's check of their quotes
* :mod:`.disputed`  after the last revision: every sentence like an unsupported claim, still citing
  its source, marked "[Disputed]"
* :mod:`.check`     what the check found: the report's Limitations line, the record, the critique facts

No model is called here: the verdicts ride in the skeptic's call
(:mod:`research_agent.stages.claim_check`); ``review --check-claims`` runs the same check
on a finished report (:mod:`research_agent.run.claims.on_report`).
"""

from .check import ClaimCheck, lexical_only
from .disputed import SIMILAR, Marked, mark_unsupported, similarity
from .select import CitedClaim, choose_claims, cited_claims, pack
from .sentences import DISPUTED, is_disputed
from .verdicts import OUTCOMES, VERDICTS, ClaimVerdict, quote_found, read_verdicts

__all__ = [
    "DISPUTED",
    "OUTCOMES",
    "SIMILAR",
    "VERDICTS",
    "CitedClaim",
    "ClaimCheck",
    "ClaimVerdict",
    "Marked",
    "choose_claims",
    "cited_claims",
    "is_disputed",
    "lexical_only",
    "mark_unsupported",
    "pack",
    "quote_found",
    "read_verdicts",
    "similarity",
]
