"""Whether another plan could help: a replan costs a new search and a new draft, so a run
makes one only when new sources could do better than these.

A low viability asks for a replan; one is made only when the problem is the evidence:

- a viability with no finding behind it (no concern or critical finding, the skeptic's own or
  the claim check's) is not credible (:func:`unfounded`): it decides nothing;
- a plan a person gave or edited is theirs: another plan would not be (:mod:`research_agent.plans`);
- a plan whose sub-queries fell back to the question itself would be followed by one that
  searches the same (a planner that gave nothing usable gives nothing usable again);
- a draft with open critical lint issues (debris, empty sections, repeats, no citation...) is
  the writer's problem, whatever the skeptic made of it: new sources would be written up the
  same way;
- the skeptic's findings must be about what the sources cover (the lenses scope, recency, bias
  and counterarguments); the evidence lens is about the draft's own claims (not supported by
  the passages they cite, or without a citation), which revising fixes.

Otherwise (:func:`replan_skip` says why not) the run revises instead, or publishes the draft
rejected; the skip is kept in the run record (its warnings and the iteration's reason) and in
the report's Limitations. When the gate finds too little to write from, only the fallback rule
applies: the gate's decision is about the evidence. :func:`guidance` is what a new plan is told.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..review.feedback import issue_title
from ..review.review import Review, open_critical_issues
from ..stages.decompose import Plan
from ..stages.gate import Gate
from ..stages.skeptic import SkepticFinding, SkepticReport
from ..text.sanitize import sanitize

__all__ = ["SOURCE_LENSES", "FELL_BACK", "BY_PERSON", "unfounded", "replan_skip", "guidance"]

# The skeptic's lenses whose findings more or other sources could answer.
SOURCE_LENSES = frozenset({"scope", "recency", "bias", "counterarguments"})
FELL_BACK = "the sub-queries fell back to the question itself, so another plan would search the same"
BY_PERSON = "a person gave the plan, and another would not be theirs"
_REASONED = ("concern", "critical")


def unfounded(viability: int | None, min_viability: int, findings: Iterable[SkepticFinding]) -> bool:
    """A viability below ``min_viability`` with no concern or critical finding behind it."""
    if viability is None or viability >= min_viability:
        return False
    return not any(f.severity in _REASONED for f in findings)


def replan_skip(plan: Plan, review: Review | None = None, findings: Sequence[SkepticFinding] = ()) -> str:
    """Why another plan would not help after ``plan`` (its draft's ``review`` and the
    ``findings`` behind a low viability); "" when new sources could. Without a review (the
    gate found too little to write from) only the fallback counts."""
    if plan.by_person:
        return BY_PERSON
    if plan.fell_back:
        return FELL_BACK
    if review is None:
        return ""
    writing = [i for i in open_critical_issues(review) if i.origin == "lint"]
    if writing:
        kinds = ", ".join(dict.fromkeys(issue_title(i.type).lower() for i in writing))
        return f"the sources were not the problem: the draft's writing was ({len(writing)} critical issue(s): {kinds})"
    if not any(f.severity in _REASONED and f.lens in SOURCE_LENSES for f in findings):
        return "the sources were not the problem: the skeptic's findings are about the draft's own claims"
    return ""


def guidance(gate: Gate, skeptic: SkepticReport | None, sub_queries: Sequence[str]) -> str:
    """What the next plan is told about this one: its queries, and where it fell short."""
    parts = [f"Earlier queries: {'; '.join(sub_queries)}."]
    if not gate.can_write:
        parts.append(f"They found too little: {gate.reason}.")
    if skeptic is not None:
        if skeptic.viability is not None:
            parts.append(f"A reviewer rated the answer's viability {skeptic.viability}/100.")
        for finding in skeptic.critical[:5]:
            parts.append(f"Critical gap: {sanitize(finding.reason, max_chars=200, single_line=True)}")
    return " ".join(parts)
