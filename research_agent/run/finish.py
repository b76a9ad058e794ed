"""Finish a run: render the final report, build its run record and passage store, write all (or none).

The final report is the last draft with every citation renumbered through one map, the
skeptic's findings, and the limitations the run itself knows about; or, when no plan
found enough to write from, an honest short report of what was searched. The run
record is built here and only here (:func:`run_record`), with what only the run can know:
what each sub-query's searches found, whether the user's source limit cut the list, and
how well each citation is supported by the text the writer received for its source. That
text is kept too, per cited source, in the run's passage store (``passages-<id>.json``);
stores beyond the newest ``max_critiques`` runs are pruned after each write.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from ..claims import ClaimCheck
from ..ids import format_utc
from ..journal.prune import prune_journal
from ..memory.critique.citation_support import citation_support
from ..memory.critique.site_names import source_site, source_sites
from ..memory.lessons.render import lessons_markdown
from ..record import (
    FetchFailure,
    LessonsRecord,
    RunRecord,
    SubQueryCount,
    build_passage_store,
    write_run_record,
)
from ..record.passages import prune_passage_stores
from ..record.types import DroppedSubQuery, ReviewOutcome
from ..results import Briefing, Outcome, ResearchResult, summarize_sources
from ..review.checks.addresses import ADDRESS_REMOVED
from ..review.checks.text import CUT_SHORT_NOTE
from ..review.feedback import issue_title, open_issue_lines
from ..review.markdown import REJECTION_MARK
from ..review.review import open_critical_issues
from ..sources import ScoredSource, Source
from ..stages.skeptic import DEADLINE_BEFORE_SKEPTIC, SkepticReport, with_claim_findings
from ..stages.writing.draft_text import CUT_NOTES
from ..stages.writing.synthesize import writer_text
from .assembly import Run
from .ledger import RunLedger
from .report import CITATION, RenderedReport, compose_report, published_lines, render_insufficient
from .writing import Written, after_revisions

__all__ = ["FinalReport", "finish_run", "final_report", "run_record", "searched_note", "writer_texts"]

_MAX_PROVIDER_FAILURES = 50
_MAX_FETCH_FAILURES = 100
PLAN_BY_PERSON = "A person gave or edited this run's plan: its searches are theirs, not the planner's."


@dataclass(frozen=True)
class FinalReport:
    """The report as written. ``decision``: proceed | give_up."""

    markdown: str
    cited: tuple[Source, ...]  # the sources its Sources section lists, in order
    citations_removed: int  # citations to no source, taken out
    decision: str
    review: ReviewOutcome | None = None  # None: no draft was reviewed (the run gave up)


def finish_run(run: Run, briefing: Briefing, outcome: Outcome) -> ResearchResult:
    """Render, record and write the run; return what it produced."""
    settings = run.settings
    briefing = _as_given(run, briefing)
    with run.clock.stage("report"):
        report = final_report(run, briefing, outcome)
    if report.review is not None and report.review.rejected:
        run.ledger.record_warning(rejection_warning(report.review))
    report_path = settings.reports_dir / f"{run.id}.md"
    record_path = settings.meta_dir / f"run-{run.id}.yaml"
    texts = writer_texts(report, token_budget=settings.mode.source_tokens)
    record = run_record(run, briefing, outcome, report, report_path=str(report_path), texts=texts)
    passages = build_passage_store(
        run.id, [(s.title, s.location, text) for s, text in zip(report.cited, texts, strict=True)]
    )
    with run.clock.stage("write"):
        write_run_record(record_path, record, report=report.markdown, passages=passages, output=settings.output)
        prune_passage_stores(settings.meta_dir, settings.max_critiques, protect=[run.id])
        prune_journal(settings.meta_dir, settings.max_critiques, protect=(run.id,))
    return ResearchResult(
        run_record=record,
        report_markdown=report.markdown,
        report_path=report_path,
        run_record_path=record_path,
        timings=dict(run.clock.timings),
    )


def _as_given(run: Run, briefing: Briefing) -> Briefing:
    """The lessons as the run was really given them: a site lesson names a site of the run's own
    sources or reaches no prompt, and so was neither given nor withheld (see ``for_sites``)."""
    seen = source_sites((item.source for item in run.ledger.scored), run.corpus_roots)
    lessons = briefing.lessons.for_sites(seen)
    if lessons is briefing.lessons:
        return briefing
    return replace(briefing, lessons=lessons, lessons_markdown=lessons_markdown(lessons))


def final_report(run: Run, briefing: Briefing, outcome: Outcome) -> FinalReport:
    """The final report: the last draft, or the honest short report when there is none."""
    gate = outcome.gate
    meta = run.report_meta(gate.decision)
    if outcome.written is None:
        markdown = render_insufficient(
            meta=meta,
            reason=gate.reason,
            sub_queries=run.ledger.sub_queries,
            examined=[(s.source, s.score, s.reason) for s in _best_first(run.ledger.scored)],
            failures=[f"{f.provider}: {f.reason}" for f in run.ledger.provider_failures][:10],
            lessons_markdown=briefing.lessons_markdown,
            limitations=[searched_note(run.ledger.sub_queries, dropped)] if (dropped := run.ledger.dropped_sub_queries) else [],
        )
        return FinalReport(markdown, (), 0, "give_up")
    written = outcome.written
    verdict = review_outcome(written)
    if verdict.rejected:
        meta = replace(meta, review="rejected", open_critical=verdict.open_critical)
    kept = tuple(s.source for s in gate.kept)

    def compose(limitations: list[str]) -> RenderedReport:
        return compose_report(
            written.draft, kept, meta=meta, skeptic=with_claim_findings(shown_skeptic(written), written.claims),
            limitations=limitations, lessons_markdown=briefing.lessons_markdown, final=True,
            notice=_rejection_notice(verdict, written.revisions) if verdict.rejected else "",
        )  # fmt: skip

    known = [*_limitations(run, outcome, written), *([PLAN_BY_PERSON] if briefing.plan_by_person else [])]
    # The open issues are listed first, at their lines in the published file: nothing above them
    # depends on them, so a first rendering without them tells where each line of the draft went.
    reviewed = compose_report(written.draft, kept, meta=run.report_meta(gate.decision), skeptic=None, final=False)
    line_of = published_lines(reviewed.markdown, compose(known).markdown)
    rendered = compose([*open_issue_lines(written.reviewed, line_of=line_of), *known])
    return FinalReport(rendered.markdown, rendered.cited, rendered.citations_removed, "proceed", verdict)


def review_outcome(written: Written) -> ReviewOutcome:
    """How the last draft stands with the review: rejected while critical issues stay open
    (claims marked [Disputed] and citations the final report settles are not open)."""
    open_issues = open_critical_issues(written.reviewed)
    if not open_issues:
        return ReviewOutcome("approved", words=written.reviewed.words)
    kinds = tuple(dict.fromkeys(issue_title(i.type).lower() for i in open_issues))
    return ReviewOutcome("rejected", len(open_issues), kinds, written.reviewed.words)


def rejection_warning(verdict: ReviewOutcome) -> str:
    """The one line a run whose report the review rejected prints, and keeps in its warnings."""
    return (
        f"the tool's own review rejected this report: {verdict.open_critical} critical issue(s) still open "
        f"({', '.join(verdict.reasons[:4])}); it is published with review: rejected"
    )


def _rejection_notice(verdict: ReviewOutcome, revisions: int) -> str:
    """The first lines under the title of a report the review rejected: that it did, and why."""
    return (
        f"> {REJECTION_MARK} {verdict.open_critical} critical issue(s) were "
        f"still open {after_revisions(revisions)}: {', '.join(verdict.reasons[:6])}. It is published as the "
        "last revision left it; the issues are listed under Limitations & Gaps."
    )


def shown_skeptic(written: Written) -> SkepticReport | None:
    """The skeptic's report as the final report and the record show it: its viability held to
    the review's (capped while critical lint issues stay open)."""
    skeptic, review = written.skeptic, written.review
    if skeptic is None or skeptic.viability is None or review is None or review.viability == skeptic.viability:
        return skeptic
    return replace(skeptic, viability=review.viability, viability_note=review.viability_note, said=skeptic.viability)


def _best_first(scored: tuple[ScoredSource, ...]) -> list[ScoredSource]:
    """The sources examined, the most relevant first (unscored last), in the order scored within a score."""
    return sorted(scored, key=lambda s: -1 if s.score is None else -s.score)


def _limitations(run: Run, outcome: Outcome, written: Written) -> list[str]:
    """What the run itself knows its report lacks, for the Limitations & Gaps section (after the
    issues the review left open, which :func:`final_report` lists first)."""
    skeptic, gate, min_viability = written.skeptic, outcome.gate, run.settings.min_viability
    limitations: list[str] = []
    if written.draft.cut:
        limitations.append(
            f"{CUT_SHORT_NOTE} ({CUT_NOTES.get(written.draft.cut, written.draft.cut)}): "
            "it ends at its last complete paragraph (or, when none ended, its last complete sentence), "
            "and parts of the answer may be missing."
        )
    if outcome.stop_reason == "deadline":
        limitations.append(_deadline_note(run, outcome, written))
    if skeptic is not None and skeptic.unavailable and skeptic.unavailable != DEADLINE_BEFORE_SKEPTIC:
        why = skeptic.unavailable.rsplit("; ", 1)[0]  # the error, without the outcome the warning adds
        limitations.append(
            f"The skeptic's answers could not be used ({why}), so this report has no adversarial findings: "
            "its claims were not independently challenged."
        )
    if skeptic is not None and skeptic.unfounded:
        limitations.append(
            f"The skeptic rated viability {skeptic.viability}/100 without naming a problem behind the score: "
            "it was set aside, and decided no replan."
        )
    elif skeptic is not None and skeptic.viability is not None and skeptic.viability < min_viability:
        limitations.append(
            f"The skeptic rated viability {skeptic.viability}/100, below the threshold of "
            f"{min_viability}, after {outcome.plans} plan(s): treat the conclusions as tentative."
        )
    limitations += [f"Not replanned: {reason}." for reason in run.ledger.replans_skipped]
    if run.ledger.dropped_sub_queries:
        limitations.append(searched_note(run.ledger.sub_queries, run.ledger.dropped_sub_queries))
    if gate.decision == "short_report":
        limitations.append(f"Short report: {gate.reason}.")
    if any(s.source.snippet_only for s in gate.kept):
        limitations.append("Some sources could only be read from their search snippets.")
    if run.ledger.provider_failures:
        names = sorted({f.provider for f in run.ledger.provider_failures})
        limitations.append(f"Search provider(s) failed during the run: {', '.join(names)}.")
    if written.claims is not None:
        limitations.append(written.claims.limitations_line())
    taken = sum(text.count(ADDRESS_REMOVED) for text in (*written.draft.texts, *written.draft.limitations))
    if taken:
        limitations.append(f"{taken} web address(es) that no source of this research has were taken out of the "
                           f"writer's text, each marked \u201c{ADDRESS_REMOVED}\u201d: nothing here was read there.")
    return limitations


_SHOWN_QUERIES = 8


def searched_note(searched: Sequence[str], dropped: Sequence[DroppedSubQuery]) -> str:
    """The Limitations line of a run that dropped sub-queries: how many, why, and what was searched
    instead (each query quoted; a bracket that reads as a citation shown in parentheses)."""
    reasons = list(dict.fromkeys(d.reason.split(" (")[0] for d in dropped))
    shown = ", ".join(f"\u201c{CITATION.sub(lambda m: f'({m.group(1)})', q)}\u201d" for q in searched[:_SHOWN_QUERIES])
    if len(searched) > _SHOWN_QUERIES:
        shown += f" and {len(searched) - _SHOWN_QUERIES} more"
    one = len(dropped) == 1
    return (
        f"{len(dropped)} sub-quer{'y' if one else 'ies'} the planner wrote {'was' if one else 'were'} not searched "
        f"({'; '.join(reasons[:3])}); what was searched: {shown or 'nothing'}."
    )


def _deadline_note(run: Run, outcome: Outcome, written: Written) -> str:
    """The Limitations line of a report published at the run's deadline."""
    if written.skeptic is not None and written.skeptic.unavailable == DEADLINE_BEFORE_SKEPTIC:
        missing = "before the skeptic challenged it"
    else:
        missing = "before the run could finish revising it or planning again"
    return (
        f"The run reached its {run.settings.run_timeout:g}s deadline during the {outcome.deadline_stage or 'last'} "
        f"stage: this is the latest draft as it stood, published {missing}."
    )


def run_record(
    run: Run,
    briefing: Briefing,
    outcome: Outcome,
    report: FinalReport,
    *,
    report_path: str,
    texts: Sequence[str],
) -> RunRecord:
    """The run record: the one place it is built. ``texts``: what the writer was given of each
    cited source (:func:`writer_texts`), which its citations are measured against."""
    settings, ledger, gate = run.settings, run.ledger, outcome.gate
    skeptic = shown_skeptic(outcome.written) if outcome.written is not None else None
    claims = outcome.written.claims if outcome.written is not None else None
    return RunRecord(
        id=run.id,
        query=run.query,
        mode=settings.mode.name,
        domain=briefing.domain,
        started=format_utc(run.started),
        finished=format_utc(datetime.now(UTC)),
        model=settings.model,
        fast_model=settings.fast_model_name,
        report_path=report_path,
        gate_decision=gate.decision,
        gate_reason=gate.reason,
        sub_queries=ledger.sub_queries,
        dropped_sub_queries=ledger.dropped_sub_queries,
        sub_query_counts=_sub_query_counts(ledger),
        sources=summarize_sources(ledger.scored, {s.source.key for s in gate.kept}, report.cited, ledger.sub_queries,
                                  site_of=lambda s: source_site(s, run.corpus_roots)),  # as the gate counts it
        found_count=len(set().union(ledger.scored_keys, *ledger.found.values())),
        capped_by_user=ledger.capped_by_user,
        citations_removed=report.citations_removed,
        citation_support=citation_support(report.markdown, dict(enumerate(texts, start=1))),
        skeptic=skeptic if skeptic is not None else SkepticReport((), None),
        claim_check=_final_numbers(claims, tuple(s.source for s in gate.kept), report.cited),
        iterations=ledger.iterations,
        final_decision=report.decision,
        stop_reason=outcome.stop_reason,
        draft_cut=outcome.written.draft.cut if outcome.written is not None else "",
        cut_answers=ledger.cut_answers,
        controls_dropped=run.model.controls_dropped,
        review=report.review,
        lessons=LessonsRecord.from_dict(briefing.lessons.as_record()),
        plan_by_person=briefing.plan_by_person,
        provider_failures=tuple(f"{f.provider}: {f.query}: {f.reason}" for f in ledger.provider_failures)[
            :_MAX_PROVIDER_FAILURES
        ],
        fetch_failures=tuple(FetchFailure(loc, why) for loc, why in ledger.fetch_failures)[:_MAX_FETCH_FAILURES],
        corpus=run.corpus,
        fetch_stats=run.reader.stats.as_dict() if run.reader is not None else {},
        usage=dict(run.model.by_stage),
        cost_usd=run.model.cost_usd,
        timings=dict(run.clock.timings),
        warnings=ledger.warnings,
    )


def _final_numbers(check: ClaimCheck | None, kept: Sequence[Source], cited: Sequence[Source]) -> ClaimCheck | None:
    """The claim check with its sources in the final report's numbering (the draft cites by
    position in ``kept``; the report numbers ``cited``), and their addresses."""
    if check is None:
        return None
    final = {source.key: n for n, source in enumerate(cited, start=1)}

    def source_of(n: int) -> tuple[int | None, str]:
        if not 1 <= n <= len(kept):
            return None, ""
        return final.get(kept[n - 1].key), kept[n - 1].location

    return check.renumbered(source_of)


def _sub_query_counts(ledger: RunLedger) -> tuple[SubQueryCount, ...]:
    """Per sub-query asked: distinct sources its searches found, and how many of them were read."""
    found = ledger.found
    return tuple(
        SubQueryCount(
            index=i,
            found=len(found.get(query, ())),
            fetched=sum(1 for item in ledger.scored if query in item.source.sub_queries),
        )
        for i, query in enumerate(ledger.sub_queries, start=1)
    )


def writer_texts(report: FinalReport, *, token_budget: int) -> list[str]:
    """What the writer was given of each source the report cites, in the report's numbering:
    what its citations are measured against, and what its passage store keeps."""
    return [writer_text(source, token_budget=token_budget) for source in report.cited]
