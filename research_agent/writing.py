"""Write and review: draft from the kept sources, attack the draft, review it, revise it.

:func:`write_and_review` is one pass of the story's "write and review" step. It ends
either in ``replan`` (the skeptic rated the answer's viability below the bar and another
plan is allowed) or in ``proceed`` with the last draft, after at most
``settings.max_revisions`` revisions for high-confidence critical issues. Each decision
is kept as an :class:`~research_agent.record.Iteration` in the run's ledger.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from .assembly import Run
from .record import Iteration
from .report import ReportMeta, render_report
from .review.checks_rules import RULE_TIMEOUT
from .review.feedback import format_feedback
from .review.review import Review, needs_revision, review_draft
from .sources import Source
from .stages.decompose import Plan
from .stages.relevance import Gate
from .stages.skeptic import SkepticFinding, SkepticReport, run_skeptic
from .stages.synthesize import ReportDraft, draft_report, revise_report

__all__ = ["Written", "write_and_review"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Written:
    """What one pass of writing and review produced. ``decision``: replan | proceed."""

    decision: str
    draft: ReportDraft
    skeptic: SkepticReport | None  # None when the mode skips the skeptic
    review: Review
    revisions: int


@dataclass(frozen=True)
class _Revised:
    """Where revising stands: the draft, its review, the skeptic findings still open."""

    draft: ReportDraft
    review: Review
    findings: tuple[SkepticFinding, ...]
    revisions: int


@dataclass(frozen=True)
class _Pass:
    """What every iteration of this pass records."""

    plan: Plan
    gate: Gate
    viability: int | None  # the skeptic's own score: what decides a replan

    def record(self, run: Run, review: Review, revision: int, decision: str, reason: str) -> None:
        run.ledger.add_iteration(
            Iteration(
                plan=self.plan.number,
                revision=revision,
                sub_queries=self.plan.sub_queries,
                gate=self.gate.decision,
                scored_count=len(run.ledger.scored),
                kept_count=len(self.gate.kept),
                viability=review.viability,  # as shown: capped while critical lint issues are open
                critical_count=review.critical_count,
                warning_count=review.warning_count,
                decision=decision,
                reason=reason,
                tokens=run.tokens(),
            )
        )


async def write_and_review(run: Run, plan: Plan, gate: Gate, *, can_replan: bool) -> Written:
    """Draft, attack, review and revise the answer from ``gate.kept``."""
    min_viability = run.settings.min_viability
    meta = run.report_meta(gate.decision)
    kept = tuple(s.source for s in gate.kept)
    draft = await _draft(run, kept, short=gate.decision == "short_report")
    markdown, _ = render_report(draft, kept, meta=meta, skeptic=None, final=False)
    skeptic = await _attack(run, kept, markdown)
    findings = skeptic.findings if skeptic else ()
    this = _Pass(plan, gate, skeptic.viability if skeptic else None)
    review = _review(run, markdown, findings, this.viability)
    if this.viability is not None and this.viability < min_viability:
        if can_replan:
            this.record(run, review, 0, "replan", f"viability {this.viability} < {min_viability}")
            return Written("replan", draft, skeptic, review, 0)
        run.ledger.record_warning(
            f"viability {this.viability} stayed below {min_viability} after {plan.number} plan(s)"
        )
    revised = await _revise(run, this, kept, meta, _Revised(draft, review, findings, 0))
    review = revised.review
    if needs_revision(review):
        reason = f"{review.critical_count} critical issue(s) left after {revised.revisions} revision(s)"
    else:
        reason = "approved" if review.approved else "no high-confidence critical issues"
    this.record(run, review, revised.revisions, "proceed", reason)
    return Written("proceed", revised.draft, skeptic, review, revised.revisions)


async def _draft(run: Run, kept: tuple[Source, ...], *, short: bool) -> ReportDraft:
    mode = run.settings.mode
    with run.clock.stage("draft", f"{len(kept)} sources"):
        return await draft_report(
            run.model,
            run.query,
            kept,
            target_words=mode.target_words,
            source_tokens=mode.source_tokens,
            context_block=run.context_block,
            short=short,
        )


async def _attack(run: Run, kept: tuple[Source, ...], markdown: str) -> SkepticReport | None:
    """The skeptic's findings and viability (None when the mode skips the skeptic)."""
    mode = run.settings.mode
    if not mode.skeptic:
        return None
    with run.clock.stage("skeptic", ", ".join(mode.skeptic_lenses)):
        skeptic = await run_skeptic(
            run.model, run.query, markdown, kept, lenses=mode.skeptic_lenses, source_tokens=mode.source_tokens,
            cited_tokens=mode.cited_tokens, notify=run.ledger.warn,
        )
    if skeptic.viability_note:
        run.ledger.record_warning(skeptic.viability_note)
    return skeptic


def _review(run: Run, markdown: str, findings: Sequence[SkepticFinding], viability: int | None) -> Review:
    """Lint plus the skeptic's findings; a custom rule that overran its budget is skipped from now on."""
    review = review_draft(
        markdown,
        target_words=run.settings.mode.target_words,
        findings=findings,
        viability=viability,
        min_viability=run.settings.min_viability,
        rules=run.ledger.active_rules(run.rules),
        rule_limits=run.rule_limits(),
    )
    run.ledger.skip_slow_rules(i.matched for i in review.issues if i.type == RULE_TIMEOUT)
    return review


async def _revise(run: Run, this: _Pass, kept: tuple[Source, ...], meta: ReportMeta, state: _Revised) -> _Revised:
    """Revise while high-confidence critical issues stand, at most ``max_revisions`` times
    (once without retries); stop when a revision cannot be read."""
    settings = run.settings
    allowed = settings.max_revisions if settings.retry else min(1, settings.max_revisions)
    while state.revisions < allowed and needs_revision(state.review):
        this.record(run, state.review, state.revisions, "revise", f"{state.review.critical_count} critical issue(s)")
        feedback = format_feedback(state.review)
        log.debug("review feedback:\n%s", feedback)
        label = f"{state.revisions + 1}/{allowed}"
        run.progress.note(f"revising ({label}): {state.review.critical_count} critical issue(s)")
        with run.clock.stage("revise", label):
            revised = await revise_report(
                run.model, run.query, state.draft, feedback, kept, target_words=settings.mode.target_words,
                source_tokens=settings.mode.source_tokens, notify=run.ledger.warn,
            )
        if revised is state.draft:  # the revision could not be read: keep the draft, stop revising
            break
        markdown, _ = render_report(revised, kept, meta=meta, skeptic=None, final=False)
        findings = _still_open(state.findings, markdown)
        state = _Revised(revised, _review(run, markdown, findings, this.viability), findings, state.revisions + 1)
    return state


def _still_open(findings: Sequence[SkepticFinding], markdown: str) -> tuple[SkepticFinding, ...]:
    """Skeptic findings whose quoted claim still stands in the draft (and is not marked disputed)."""
    lines = [" ".join(line.split()).lower() for line in markdown.splitlines()]
    open_findings = []
    for finding in findings:
        claim = " ".join(finding.claim.split()).lower()
        if not claim:
            continue
        for line in lines:
            if claim in line and "[disputed]" not in line:
                open_findings.append(finding)
                break
    return tuple(open_findings)
