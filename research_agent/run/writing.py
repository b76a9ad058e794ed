"""Write and review: draft from the kept sources, attack the draft, review it, revise it.

:func:`write_and_review` is one pass of the story's "write and review" step. It ends
either in ``replan`` (the skeptic rated the answer's viability below the bar, another
plan is allowed, and new sources could help: :mod:`.replan`) or in ``proceed`` with the last draft, after at most
``settings.max_revisions`` revisions for high-confidence critical issues. Each decision
is kept as an :class:`~research_agent.record.Iteration` in the run's ledger, and so is
the latest draft at every step (:meth:`~research_agent.run.ledger.RunLedger.keep_draft`):
a run whose deadline passes after a draft exists publishes the best draft it has.
While the writer streams, its tokens and rate go to the progress line (:class:`TokenMeter`).

The skeptic's call also checks the draft's cited sentences against their passages
(:mod:`research_agent.run.claims.in_run`): an unsupported claim is a critical finding for revise,
and after the last revision (or at the deadline) every sentence still like one, citing its
source, is marked "[Disputed]" by the program.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from ..claims import ClaimCheck, lexical_only
from ..errors import LLMError
from ..progress import TokenMeter
from ..record.parts import Iteration, IterationDecision
from ..results import Outcome
from ..review.checks.addresses import known_addresses, without_unknown
from ..review.checks.rules import RULE_TIMEOUT
from ..review.feedback import format_feedback
from ..review.review import Linted, Review, needs_revision, review_draft, review_linted, still_open
from ..sources import Source
from ..stages._fallback import degrades
from ..stages.decompose import Plan
from ..stages.gate import Gate
from ..stages.skeptic import (
    DEADLINE_BEFORE_SKEPTIC,
    SkepticFinding,
    SkepticReport,
    claim_findings,
    run_skeptic,
)
from ..stages.writing.draft_text import CUT_NOTES
from ..stages.writing.synthesize import ReportDraft, draft_report, revise_report
from .assembly import Run
from .claims.in_run import check_rest, mark_draft, plan_claims, settle
from .meanwhile import lint, lint_meanwhile, read_ahead
from .replan import replan_skip, unfounded
from .report import ReportMeta, compose_report

__all__ = ["Written", "write_and_review", "draft_from", "as_it_stood", "after_revisions", "known_only", "published_after_failure"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Written:
    """What one pass of writing and review produced. ``decision``: replan | proceed.

    ``review`` is None while the draft is not yet reviewed (a draft the run's deadline caught
    is reviewed by :func:`as_it_stood`); ``draft.cut`` says when the writer's answer was cut short."""

    decision: Literal["replan", "proceed"]
    draft: ReportDraft
    skeptic: SkepticReport | None  # None when the mode skips the skeptic (or did not get to it)
    review: Review | None
    revisions: int
    claims: ClaimCheck | None = None  # the claim check of the draft the skeptic read

    @property
    def reviewed(self) -> Review:
        """``review``, of a pass that got to it (every pass a run finishes with)."""
        assert self.review is not None, "the draft is not reviewed yet"
        return self.review


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
    skipped: str = ""  # why a replan the viability asked for was not made (:mod:`.replan`)

    def record(self, run: Run, review: Review, revision: int, decision: IterationDecision, reason: str) -> None:
        if revision == 0 and self.skipped:  # the pass's first iteration says why it did not replan
            reason = f"{reason}; not replanned: {self.skipped}"
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


def _as_reviewed(draft: ReportDraft, kept: Sequence[Source], *, meta: ReportMeta) -> str:
    """The draft's markdown as the review reads it: no skeptic part, not the final report."""
    return compose_report(draft, kept, meta=meta, skeptic=None, final=False).markdown


def after_revisions(revisions: int) -> str:
    """"after 2 revision(s)"; "with no revision made" when none was (a mode without revisions,
    or a revise call that timed out or was cut)."""
    return f"after {revisions} revision(s)" if revisions else "with no revision made"


async def write_and_review(
    run: Run, plan: Plan, gate: Gate, *, can_replan: bool, drafted: ReportDraft | None = None
) -> Written:
    """Draft, attack, review and revise the answer from ``gate.kept`` (``drafted``: the draft
    already written from them, beside relevance: :mod:`.first_draft`)."""
    meta = run.report_meta(gate.decision)
    kept = tuple(s.source for s in gate.kept)
    draft = drafted if drafted is not None else await draft_from(run, plan, gate)
    run.ledger.keep_draft(plan.number, gate, Written("proceed", draft, None, None, 0))
    markdown = _as_reviewed(draft, kept, meta=meta)
    claims: ClaimCheck | None  # the check, until marking the disputed sentences may leave none
    linting = lint_meanwhile(run, markdown, draft)  # while the skeptic reads the same draft
    skeptic, claims = await _attack(run, kept, markdown)
    findings = (*(skeptic.findings if skeptic else ()), *claim_findings(claims))
    skeptic = _weigh_viability(run, skeptic, findings)
    run.ledger.keep_draft(plan.number, gate, Written("proceed", draft, skeptic, None, 0, claims))
    first = _Pass(plan, gate, skeptic.viability if skeptic else None)
    review = _review(run, markdown, findings, first.viability, draft, await linting)
    run.ledger.keep_draft(plan.number, gate, Written("proceed", draft, skeptic, review, 0, claims))
    this = _replan_or_not(run, first, review, skeptic, findings, can_replan=can_replan)
    if this is None:
        return Written("replan", draft, skeptic, review, 0, claims)
    revised = await _revise(run, this, kept, meta, _Revised(draft, review, findings, 0), skeptic, claims)
    revised, claims = _mark_disputed(run, this, kept, meta, revised, claims)
    review = revised.review
    if needs_revision(review):
        reason = f"{review.critical_count} critical issue(s) left {after_revisions(revised.revisions)}"
    else:
        reason = "approved" if review.approved else "no high-confidence critical issues"
    this.record(run, review, revised.revisions, "proceed", reason)
    return Written("proceed", revised.draft, skeptic, review, revised.revisions, claims)


def _weigh_viability(
    run: Run, skeptic: SkepticReport | None, findings: Sequence[SkepticFinding]
) -> SkepticReport | None:
    """The skeptic's report, its viability set aside (``unfounded``, said once) when it is below
    the bar with no finding behind it: such a score decides no replan (:mod:`.replan`)."""
    min_viability = run.settings.min_viability
    if skeptic is None or not unfounded(skeptic.viability, min_viability, findings):
        return skeptic
    note = f"viability {skeptic.viability} is below {min_viability} with no finding behind it: not credible, set aside"
    run.ledger.warn(f"the skeptic's {note} (no replan)")
    return replace(skeptic, unfounded=True, viability_note=f"{skeptic.viability_note}; {note}".lstrip("; "))


def _replan_or_not(
    run: Run, this: _Pass, review: Review, skeptic: SkepticReport | None, findings: Sequence[SkepticFinding],
    *, can_replan: bool,
) -> _Pass | None:
    """None when the viability asks for a replan that new sources could answer (recorded);
    else the pass, with the reason a replan was not made when one was asked for."""
    min_viability = run.settings.min_viability
    if this.viability is None or this.viability >= min_viability:
        return this
    if skeptic is not None and skeptic.unfounded:
        return replace(this, skipped="the viability had no finding behind it") if can_replan else this
    if not can_replan:
        run.ledger.record_warning(
            f"viability {this.viability} stayed below {min_viability} after {this.plan.number} plan(s)"
        )
        return this
    skip = replan_skip(this.plan, review, findings)
    if skip:
        run.ledger.not_replanned(skip)
        return replace(this, skipped=skip)
    this.record(run, review, 0, "replan", f"viability {this.viability} < {min_viability}")
    return None


async def draft_from(run: Run, plan: Plan, gate: Gate) -> ReportDraft:
    """The writer's draft from ``gate.kept``, streamed to the progress line and kept as it
    arrives (what the deadline publishes when it comes first)."""
    mode = run.settings.mode
    kept = tuple(s.source for s in gate.kept)
    meter = TokenMeter(run.progress, run.ticker.now)
    arriving = run.ledger.drafting(plan.number, gate)
    reading = read_ahead(run, kept)  # for the claim check, once the writer has its prompt

    def heard(tokens: int, piece: str) -> None:
        reading()
        meter(tokens, piece)
        arriving(tokens, piece)

    with run.clock.stage("draft", f"{len(kept)} sources"):
        try:
            draft = await draft_report(
                run.model, run.query, kept, target_words=mode.target_words, source_tokens=mode.source_tokens,
                context_block=run.context_block, short=gate.decision == "short_report", on_tokens=heard,
                idle=run.settings.llm_timeout, notify=run.ledger.warn,
            )  # fmt: skip
        finally:
            meter.finish()
    if draft.cut:
        run.ledger.count_cut()
    return known_only(draft, kept)


def known_only(draft: ReportDraft, sources: Sequence[Source]) -> ReportDraft:
    """``draft`` without the web addresses none of ``sources`` has, each marked where it stood
    (:mod:`research_agent.review.checks.addresses`); the draft itself when it has none."""
    known = known_addresses(s.location for s in sources)
    taken = 0

    def clean(text: str) -> str:
        nonlocal taken
        text, found = without_unknown(text, known)
        taken += found
        return text

    cleaned = replace(draft, executive_summary=clean(draft.executive_summary),
                      key_findings=tuple(clean(f) for f in draft.key_findings),
                      sections=tuple((heading, clean(body)) for heading, body in draft.sections),
                      limitations=tuple(clean(x) for x in draft.limitations))  # fmt: skip
    return cleaned if taken else draft


async def _attack(
    run: Run, kept: tuple[Source, ...], markdown: str
) -> tuple[SkepticReport | None, ClaimCheck]:
    """The skeptic's findings and viability (None when the mode skips the skeptic), and the
    claim check that rides in its call (and, for a long list, in calls beside it)."""
    mode = run.settings.mode
    plan = plan_claims(run, kept, markdown)
    if not mode.skeptic:
        claims = settle(plan, None, ())
        run.progress.counts(**_attack_counts(None, claims))
        return None, claims
    with run.clock.stage("skeptic", ", ".join(mode.skeptic_lenses)):
        skeptic, answers = await asyncio.gather(
            run_skeptic(
                run.model, run.query, markdown, kept, lenses=mode.skeptic_lenses, source_tokens=mode.source_tokens,
                cited_tokens=mode.cited_tokens, notify=run.ledger.warn, claims=plan.first, elided=plan.elided,
            ),
            check_rest(run, plan),
        )  # fmt: skip
    if skeptic.dropped:
        run.ledger.warn(f"{skeptic.dropped} skeptic finding(s) were debris (a claim or reason with no real word) "
                        "and were dropped")  # fmt: skip
    if skeptic.viability_note:  # an unusable score is said now: the report says it too
        (run.ledger.warn if skeptic.unusable else run.ledger.record_warning)(skeptic.viability_note)
    claims = settle(plan, skeptic, answers)
    run.progress.counts(**_attack_counts(skeptic, claims))
    return skeptic, claims


def _attack_counts(skeptic: SkepticReport | None, claims: ClaimCheck) -> dict[str, int]:
    """The skeptic's findings and the claim check as progress counts (a web page shows them live).
    A check not made (quick mode, ``--no-claims``) counts no verdict: no 0 beside "not checked"."""
    counts: dict[str, int] = {"claims_cited": claims.cited}
    if not claims.skipped:
        facts = claims.facts()
        counts.update(claims_checked=facts.checked, claims_supported=facts.supported, claims_partial=facts.partial,
                      claims_unsupported=facts.unsupported)  # fmt: skip
    if skeptic is not None:
        counts["findings"] = len(skeptic.findings)
        counts["findings_critical"] = len(skeptic.critical)
        if skeptic.viability is not None:
            counts["viability"] = skeptic.viability
    return counts


def as_it_stood(run: Run, gate: Gate, written: Written) -> Written:
    """A draft the run's deadline caught, made ready to publish: a skeptic the mode asks for but
    the run did not reach says so (and so does the claim check), an unsupported claim is marked
    "[Disputed]" as after a last revision, and a draft not yet reviewed gets the lint now (no
    custom rules: their time budget ended with the deadline; the skeptic's findings still open)."""
    mode = run.settings.mode
    if written.skeptic is None and mode.skeptic:
        written = replace(written, skeptic=SkepticReport((), None, unavailable=DEADLINE_BEFORE_SKEPTIC))
    if written.claims is None:
        reason = DEADLINE_BEFORE_SKEPTIC if mode.skeptic else lexical_only(mode.name)
        written = replace(written, claims=ClaimCheck.not_run(reason))
    draft, claims, marked = mark_draft(written.draft, written.claims)
    if marked:
        written = replace(written, draft=draft, claims=claims, review=None)
    if written.review is None:
        kept = tuple(s.source for s in gate.kept)
        markdown = _as_reviewed(written.draft, kept, meta=run.report_meta(gate.decision))
        found = (*(written.skeptic.findings if written.skeptic else ()), *claim_findings(written.claims))
        review = review_draft(markdown, target_words=mode.target_words, findings=still_open(found, markdown),
                              viability=written.skeptic.viability if written.skeptic else None,
                              min_viability=run.settings.min_viability,
                              short_reason=CUT_NOTES.get(written.draft.cut, written.draft.cut))  # fmt: skip
        written = replace(written, review=review)
    return written


def published_after_failure(run: Run, failure: LLMError) -> Outcome:
    """The latest draft of the run (an earlier plan's, or this plan's before its revision), published
    as it stood when a later writer call failed (``failure``): a run that has a usable draft never
    ends without a report for the writer's sake. Re-raises ``failure`` when there is none (or when it
    is a setting to fix, an unknown model)."""
    kept = run.ledger.latest_draft
    if kept is None or not degrades(failure):
        raise failure
    run.ledger.warn(f"{failure}; the draft of plan {kept.plan} is published as it stood")
    # Reviewed again as a final draft is: a finding counts while its claim still stands in the text.
    written = as_it_stood(run, kept.gate, replace(kept.written, review=None))
    return Outcome(kept.gate, written, kept.plan, f"writer failed: {failure}")


def _review(
    run: Run, markdown: str, findings: Sequence[SkepticFinding], viability: int | None, draft: ReportDraft,
    linted: Linted | None = None,
) -> Review:
    """The run's lint (``linted``, if made already: :mod:`.meanwhile`) plus the skeptic's findings; a
    custom rule that overran its budget is skipped from now on."""
    review = review_linted(markdown, linted or lint(run, markdown, draft), findings=findings, viability=viability,
                           min_viability=run.settings.min_viability)  # fmt: skip
    run.ledger.skip_slow_rules(i.matched for i in review.issues if i.type == RULE_TIMEOUT)
    return review


async def _revise(
    run: Run, this: _Pass, kept: tuple[Source, ...], meta: ReportMeta, state: _Revised, skeptic: SkepticReport | None,
    claims: ClaimCheck | None,
) -> _Revised:
    """Revise while high-confidence critical issues stand, at most ``max_revisions`` times
    (once without retries); stop when a revision cannot be read or was cut short."""
    settings = run.settings
    allowed = settings.max_revisions if settings.retry else min(1, settings.max_revisions)
    while state.revisions < allowed and needs_revision(state.review):
        this.record(run, state.review, state.revisions, "revise", f"{state.review.critical_count} critical issue(s)")
        feedback = format_feedback(state.review)
        log.debug("review feedback:\n%s", feedback)
        label = f"{state.revisions + 1}/{allowed}"
        run.progress.note(f"revising ({label}): {state.review.critical_count} critical issue(s)")
        meter = TokenMeter(run.progress, run.ticker.now)
        with run.clock.stage("revise", label):
            try:
                revised = await revise_report(
                    run.model, run.query, state.draft, feedback, kept, target_words=settings.mode.target_words,
                    source_tokens=settings.mode.source_tokens, notify=run.ledger.warn, on_tokens=meter,
                    idle=settings.llm_timeout, on_cut=lambda _: run.ledger.count_cut(),
                    short=this.gate.decision == "short_report", context_block=run.context_block,
                )  # fmt: skip
            finally:
                meter.finish()
        if revised is state.draft:  # the revision could not be used: keep the draft, stop revising
            break
        revised = known_only(revised, kept)
        markdown = _as_reviewed(revised, kept, meta=meta)
        findings = still_open(state.findings, markdown)
        review = _review(run, markdown, findings, this.viability, revised)
        state = _Revised(revised, review, findings, state.revisions + 1)
        run.ledger.keep_draft(this.plan.number, this.gate, Written("proceed", revised, skeptic, state.review,
                                                                   state.revisions, claims))  # fmt: skip
    return state


def _mark_disputed(
    run: Run, this: _Pass, kept: tuple[Source, ...], meta: ReportMeta, state: _Revised, claims: ClaimCheck | None
) -> tuple[_Revised, ClaimCheck | None]:
    """After the last revision: every unmarked sentence still like an unsupported claim, and still
    citing its source, marked "[Disputed]" (and the draft reviewed again); each claim's outcome."""
    draft, claims, marked = mark_draft(state.draft, claims)
    if not marked:
        return state, claims
    run.progress.note(f"{marked} unsupported claim(s) left in the draft marked [Disputed]")
    markdown = _as_reviewed(draft, kept, meta=meta)
    findings = still_open(state.findings, markdown)
    review = _review(run, markdown, findings, this.viability, draft)
    return _Revised(draft, review, findings, state.revisions), claims
