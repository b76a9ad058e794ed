"""Compose the stages into one run and return a frozen :class:`ResearchResult`.

Nothing here keeps state between runs: everything a run needs is passed in (the
model, the search providers, the page reader, the lessons source, a progress sink)
or built from Settings, and everything it learns is in the result and the run record.
"""

from __future__ import annotations

import asyncio
import logging
import random
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from .config import Settings
from .context import load_context
from .errors import Cancelled, InputError, RunTimeout
from .fetch.gather import Gathered, SourceReader, gather_sources
from .ids import make_run_id
from .llm import ChatModel
from .memory.lessons import LessonSelection, lessons_markdown, lessons_prompt_block, select_lessons
from .report import ReportMeta, compose_report, render_insufficient, render_report, yaml_text
from .results import Iteration, ResearchResult, SourceSummary, summarize_sources
from .review.rules import RuleDeadline
from .sanitize import sanitize
from .search.base import ProviderFailure, SearchProvider
from .sources import ScoredSource, Source
from .stages.classify import classify_domain
from .stages.decompose import decompose
from .stages.relevance import Gate, decide_gate, score_sources
from .stages.skeptic import SkepticReport, run_skeptic
from .stages.synthesize import ReportDraft, draft_report, revise_report
from .usage import UsageRecorder
from .waiting import SystemTicker, Ticker, waits_reported

__all__ = [
    "research",
    "research_sync",
    "ResearchResult",
    "SourceSummary",
    "Iteration",
    "Progress",
    "MAX_QUERY_CHARS",
    "validate_query",
    "default_providers",
]

log = logging.getLogger(__name__)

MAX_QUERY_CHARS = 2000


class Progress(Protocol):
    """Where a run reports what it is doing. The CLI draws it with rich."""

    def stage(self, name: str, detail: str = "") -> None: ...

    def counts(self, **values: int) -> None: ...

    def note(self, message: str) -> None: ...


class _NoProgress:
    def stage(self, name: str, detail: str = "") -> None:
        return None

    def counts(self, **values: int) -> None:
        return None

    def note(self, message: str) -> None:
        return None


def validate_query(query: str) -> str:
    """Return the query stripped, or raise InputError for empty or oversized queries."""
    text = (query or "").strip()
    if not text:
        raise InputError("the query is empty: give a question to research")
    if len(text) > MAX_QUERY_CHARS:
        raise InputError(f"the query is {len(text)} characters long; the limit is {MAX_QUERY_CHARS}")
    return text


# --- lessons seam -----------------------------------------------------------------------


LessonsFn = Callable[[str], LessonSelection]  # domain -> the lessons a run gets


def default_lessons(settings: Settings, *, now: datetime, rng: random.Random) -> LessonsFn:
    """Select lessons from ``settings.meta_dir`` (a baseline run when lessons are off)."""

    def select(domain: str) -> LessonSelection:
        return select_lessons(
            settings.meta_dir,
            domain,
            now=now,
            ttl_days=settings.lesson_ttl_days,
            control_fraction=settings.control_fraction,
            rng=rng,
            force_control=not settings.lessons,
        )

    return select


def _lessons_text(selection: LessonSelection) -> tuple[str, str]:
    """(prompt block, report section) for a selection; empty when not adaptive."""
    if not selection.adaptive or not selection.lessons:
        return "", ""
    return lessons_prompt_block(selection), lessons_markdown(selection)


# --- the run ----------------------------------------------------------------------------


class _Clock:
    """Stage timings and the name of the stage in progress (for deadline messages)."""

    def __init__(self, progress: Progress) -> None:
        self.timings: dict[str, float] = {}
        self.current = "starting"
        self.progress = progress

    @contextmanager
    def stage(self, name: str, detail: str = ""):
        self.current = name
        self.progress.stage(name, detail)
        start = time.perf_counter()
        try:
            yield
        finally:
            self.timings[name] = self.timings.get(name, 0.0) + time.perf_counter() - start


@dataclass
class _Run:
    """Mutable bookkeeping of one run; it never outlives the call to research()."""

    settings: Settings
    model: UsageRecorder
    providers: Sequence[SearchProvider]
    reader: SourceReader | None
    progress: Progress
    clock: _Clock
    query: str
    context_block: str = ""
    lessons_block: str = ""
    scored: dict[str, ScoredSource] = field(default_factory=dict)
    failures: list[ProviderFailure] = field(default_factory=list)
    fetch_failures: list[tuple[str, str]] = field(default_factory=list)
    iterations: list[Iteration] = field(default_factory=list)
    sub_queries: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    corpus: list[dict[str, Any]] = field(default_factory=list)
    rules: tuple = ()
    deadline: float | None = None  # the run's deadline on the event loop's clock

    def rule_limits(self) -> Any:
        """Time limits for custom lint rules: their own budget, and never past the run's deadline."""
        from .review.rules import RuleLimits

        return RuleLimits(deadline=self.deadline, clock=asyncio.get_running_loop().time)

    def drop_slow_rules(self, review: Any) -> None:
        """Skip, for the rest of the run, every custom rule that ran past its budget; say so once."""
        from .review.lint import RULE_TIMEOUT

        slow = sorted({i.matched for i in review.issues if i.type == RULE_TIMEOUT})
        if not slow:
            return
        self.rules = tuple(r for r in self.rules if r.name not in slow)
        for name in slow:
            message = f"custom rule {name!r} ran past its time budget and was stopped; it is skipped from now on"
            self.warnings.append(message)
            self.progress.note(message)

    def tokens(self) -> int:
        return self.model.total.tokens

    def degraded(self, message: str) -> None:
        """A stage went on without the model's answer: say so now and in the run record."""
        self.progress.note(message)
        self.warnings.append(message)


def _load_rules(settings: Settings) -> tuple:
    from .review.rules import load_rules

    if settings.rules_path is not None:
        return load_rules(settings.rules_path)
    if settings.context_path is not None:
        beside = settings.context_path.parent / "rules.yaml"
        if beside.is_file():
            return load_rules(beside)
    return ()


async def _search_and_score(run: _Run, sub_queries: tuple[str, ...]) -> Gate:
    from .search.registry import search_all

    settings, mode = run.settings, run.settings.mode

    def on_failure(failure: ProviderFailure) -> None:
        if all(f.provider != failure.provider for f in run.failures):  # one line per provider
            reason = " ".join(failure.reason.split())[:160]
            run.progress.note(f"search provider {failure.provider} failed: {reason}")
        run.failures.append(failure)

    # Ask for enough hits that overlapping sub-queries can still fill the source limit.
    per_query = max(mode.results_per_query, -(-3 * settings.source_limit // max(1, len(sub_queries))))
    with run.clock.stage("search", f"{len(sub_queries)} sub-queries"):
        results = await search_all(run.providers, list(sub_queries), max_results=per_query, on_failure=on_failure)
        found = len({h.location for hits in results.hits.values() for h in hits})
        run.progress.counts(found=found)
    with run.clock.stage("fetch"):
        gathered: Gathered = await gather_sources(
            results.hits,
            limit=settings.source_limit,
            token_budget=mode.source_tokens,
            reader=run.reader,
            exclude=set(run.scored),
        )
        run.fetch_failures.extend(gathered.fetch_failures)
    with run.clock.stage("relevance", f"scoring {len(gathered.sources)} sources"):
        scored = await score_sources(run.model, run.query, gathered.sources, lessons_block=run.lessons_block)
        for item in scored:
            run.scored[item.source.key] = item
        unscored = [item for item in scored if item.score is None]
        if unscored:
            run.degraded(f"{len(unscored)} source(s) could not be scored and are left out ({unscored[0].reason})")
        gate = decide_gate(tuple(run.scored.values()), mode)
        run.progress.counts(scored=len(run.scored), kept=len(gate.kept), tokens=run.tokens())
    return gate


def _replan_guidance(gate: Gate, skeptic: SkepticReport | None, sub_queries: Sequence[str]) -> str:
    parts = [f"Earlier queries: {'; '.join(sub_queries)}."]
    if not gate.can_write:
        parts.append(f"They found too little: {gate.reason}.")
    if skeptic is not None:
        if skeptic.viability is not None:
            parts.append(f"A reviewer rated the answer's viability {skeptic.viability}/100.")
        for finding in skeptic.critical[:5]:
            parts.append(f"Critical gap: {sanitize(finding.reason, max_chars=200, single_line=True)}")
    return " ".join(parts)


def _still_open(findings: Sequence[Any], markdown: str) -> tuple[Any, ...]:
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


async def _write_and_review(
    run: _Run,
    gate: Gate,
    plan_no: int,
    sub_queries: tuple[str, ...],
    meta: ReportMeta,
    can_replan: bool,
) -> tuple[str, ReportDraft | None, SkepticReport | None, Any, int]:
    """Draft, attack, review and revise. Returns (decision, draft, skeptic, review, revisions)."""
    from .review.feedback import format_feedback
    from .review.review import needs_revision, review_draft

    settings, mode = run.settings, run.settings.mode
    kept = tuple(s.source for s in gate.kept)
    with run.clock.stage("draft", f"{len(kept)} sources"):
        draft = await draft_report(
            run.model,
            run.query,
            kept,
            target_words=mode.target_words,
            source_tokens=mode.source_tokens,
            context_block=run.context_block,
            short=gate.decision == "short_report",
        )
    markdown, _ = render_report(draft, kept, meta=meta, skeptic=None, final=False)
    skeptic: SkepticReport | None = None
    if mode.skeptic:
        with run.clock.stage("skeptic", ", ".join(mode.skeptic_lenses)):
            skeptic = await run_skeptic(
                run.model, run.query, markdown, kept, lenses=mode.skeptic_lenses, source_tokens=mode.source_tokens,
                notify=run.degraded,
            )
        if skeptic.viability_note:
            run.warnings.append(skeptic.viability_note)
    findings = skeptic.findings if skeptic else ()
    viability = skeptic.viability if skeptic else None

    def review_of(markdown: str, findings: Sequence[Any]) -> Any:
        result = review_draft(
            markdown,
            target_words=mode.target_words,
            findings=findings,
            viability=viability,
            min_viability=settings.min_viability,
            rules=run.rules,
            rule_limits=run.rule_limits(),
        )
        run.drop_slow_rules(result)
        return result

    review = review_of(markdown, findings)

    def record(revision: int, decision: str, reason: str) -> None:
        run.iterations.append(
            Iteration(
                plan=plan_no,
                revision=revision,
                sub_queries=sub_queries,
                gate=gate.decision,
                sources_scored=len(run.scored),
                sources_kept=len(gate.kept),
                viability=viability,
                critical=review.critical_count,
                warnings=review.warning_count,
                decision=decision,
                reason=reason,
                tokens=run.tokens(),
            )
        )

    if viability is not None and viability < settings.min_viability:
        if can_replan:
            record(0, "replan", f"viability {viability} < {settings.min_viability}")
            return "replan", draft, skeptic, review, 0
        run.warnings.append(
            f"viability {viability} stayed below {settings.min_viability} after {plan_no} plan(s)"
        )

    allowed = settings.max_revisions if settings.retry else min(1, settings.max_revisions)
    revisions = 0
    while revisions < allowed and needs_revision(review):
        record(revisions, "revise", f"{review.critical_count} critical issue(s)")
        feedback = format_feedback(review)
        log.debug("review feedback:\n%s", feedback)
        label = f"{revisions + 1}/{allowed}"
        run.progress.note(f"revising ({label}): {review.critical_count} critical issue(s)")
        with run.clock.stage("revise", label):
            revised = await revise_report(
                run.model,
                run.query,
                draft,
                feedback,
                kept,
                target_words=mode.target_words,
                source_tokens=mode.source_tokens,
                notify=run.degraded,
            )
        if revised is draft:  # the revision could not be read: keep the draft, stop revising
            break
        draft = revised
        revisions += 1
        markdown, _ = render_report(draft, kept, meta=meta, skeptic=None, final=False)
        findings = _still_open(findings, markdown)
        review = review_of(markdown, findings)
    if needs_revision(review):
        reason = f"{review.critical_count} critical issue(s) left after {revisions} revision(s)"
    else:
        reason = "approved" if review.approved else "no high-confidence critical issues"
    record(revisions, "proceed", reason)
    return "proceed", draft, skeptic, review, revisions


async def _pipeline(run: _Run, run_id: str, started: datetime, lessons_fn: LessonsFn) -> ResearchResult:
    settings, mode = run.settings, run.settings.mode
    with run.clock.stage("classify"):
        domain = await classify_domain(run.model, run.query, notify=run.degraded)
    selection = lessons_fn(domain)
    run.lessons_block, lessons_md = _lessons_text(selection)
    for warning in selection.warnings:
        run.progress.note(warning)
        run.warnings.append(warning)
    model_name = settings.model
    meta = ReportMeta(run.query, mode.name, started.date().isoformat(), model_name, "")

    max_plans = settings.max_plans if settings.retry else 1
    guidance = ""
    plan_no = 0
    gate: Gate | None = None
    draft: ReportDraft | None = None
    skeptic: SkepticReport | None = None
    review: Any = None
    stop_reason = ""
    while True:
        plan_no += 1
        can_replan = plan_no < max_plans
        detail = f"plan {plan_no}/{max_plans}" if plan_no > 1 else ""
        with run.clock.stage("decompose", detail):
            plan = await decompose(
                run.model,
                run.query,
                count=mode.sub_queries,
                number=plan_no,
                context_block=run.context_block,
                lessons_block=run.lessons_block,
                guidance=guidance,
                notify=run.degraded,
            )
        run.sub_queries.extend(q for q in plan.sub_queries if q not in run.sub_queries)
        run.progress.counts(sub_queries=len(run.sub_queries), tokens=run.tokens())
        gate = await _search_and_score(run, plan.sub_queries)
        if not gate.can_write:
            decision = "replan" if can_replan else "give_up"
            run.iterations.append(
                Iteration(plan_no, 0, plan.sub_queries, gate.decision, len(run.scored), len(gate.kept), None, 0, 0,
                          decision, gate.reason, run.tokens())
            )
            if can_replan:
                run.progress.note(f"replanning ({plan_no + 1}/{max_plans}): {gate.decision}, {gate.reason}")
                guidance = _replan_guidance(gate, None, plan.sub_queries)
                continue
            stop_reason = f"{gate.decision} after {plan_no} plan(s): {gate.reason}"
            break
        meta = ReportMeta(run.query, mode.name, started.date().isoformat(), model_name, gate.decision)
        decision, draft, skeptic, review, _ = await _write_and_review(
            run, gate, plan_no, plan.sub_queries, meta, can_replan
        )
        if decision == "replan":
            run.progress.note(
                f"replanning ({plan_no + 1}/{max_plans}): viability {skeptic.viability} < {settings.min_viability}"
            )
            guidance = _replan_guidance(gate, skeptic, plan.sub_queries)
            continue
        stop_reason = run.iterations[-1].reason
        break

    from .review.review import open_issue_lines

    assert gate is not None
    meta = ReportMeta(run.query, mode.name, started.date().isoformat(), model_name, gate.decision)
    with run.clock.stage("report"):
        if draft is None:
            examined = [(s.source, s.score, s.reason) for s in run.scored.values()]
            failures = [f"{f.provider}: {f.reason}" for f in run.failures]
            markdown = render_insufficient(
                meta=meta,
                reason=gate.reason,
                sub_queries=run.sub_queries,
                examined=examined[:30],
                failures=failures[:10],
                lessons_markdown=lessons_md,
            )
            cited: tuple[Source, ...] = ()
            removed = 0
            final_decision = "give_up"
        else:
            limitations = list(open_issue_lines(review))
            if skeptic is not None and skeptic.unavailable:
                limitations.append(
                    "The skeptic's answers could not be read, so this report has no adversarial findings: "
                    "its claims were not independently challenged."
                )
            if skeptic is not None and skeptic.viability is not None and skeptic.viability < settings.min_viability:
                limitations.append(
                    f"The skeptic rated viability {skeptic.viability}/100, below the threshold of "
                    f"{settings.min_viability}, after {plan_no} plan(s): treat the conclusions as tentative."
                )
            if gate.decision == "short_report":
                limitations.append(f"Short report: {gate.reason}.")
            if any(s.source.snippet_only for s in gate.kept):
                limitations.append("Some sources could only be read from their search snippets.")
            if run.failures:
                names = sorted({f.provider for f in run.failures})
                limitations.append(f"Search provider(s) failed during the run: {', '.join(names)}.")
            rendered = compose_report(
                draft, tuple(s.source for s in gate.kept), meta=meta, skeptic=skeptic,
                limitations=limitations, lessons_markdown=lessons_md, final=True,
            )
            markdown, cited, removed = rendered.markdown, rendered.cited, rendered.citations_removed
            final_decision = "proceed"
    return _finish(run, run_id, started, domain, gate, selection, markdown, cited, skeptic, stop_reason,
                   final_decision, citations_removed=removed)


def _finish(
    run: _Run,
    run_id: str,
    started: datetime,
    domain: str,
    gate: Gate,
    selection: LessonSelection,
    markdown: str,
    cited: tuple[Source, ...],
    skeptic: SkepticReport | None,
    stop_reason: str,
    final_decision: str,
    *,
    citations_removed: int = 0,
) -> ResearchResult:
    settings = run.settings
    report_path = settings.reports_dir / f"{run_id}.md"
    record_path = settings.meta_dir / f"run-{run_id}.yaml"
    sources = summarize_sources(run.scored.values(), {s.source.key for s in gate.kept}, cited)
    usage = dict(run.model.by_stage)
    cost = run.model.cost_usd
    lessons_record = selection.as_record()
    applied = tuple(item.get("text", "") for item in lessons_record.get("applied", []))
    finished = datetime.now(UTC)
    record: dict[str, Any] = {
        "schema_version": 1,
        "id": run_id,
        "query": run.query,
        "mode": settings.mode.name,
        "domain": domain,
        "started": started.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        "finished": finished.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        "model": settings.model,
        "fast_model": settings.fast_model_name,
        "report_path": str(report_path),
        "gate_decision": gate.decision,
        "gate_reason": gate.reason,
        "sub_queries": list(run.sub_queries),
        "sources": [s.as_dict() for s in sources],
        "source_count": sum(1 for s in sources if s.n is not None),
        "dropped_count": sum(1 for s in sources if s.status != "kept"),
        "distinct_sites": len({s.site for s in sources if s.n is not None}),
        "citations_removed": citations_removed,  # citations to no source, taken out of the final report
        "skeptic": {
            "viability": skeptic.viability if skeptic else None,
            "viability_note": skeptic.viability_note if skeptic else "",
            "unavailable": skeptic.unavailable if skeptic else "",
            "findings": [f.as_dict() for f in skeptic.findings] if skeptic else [],
        },
        "iterations": [i.as_dict() for i in run.iterations],
        "final_decision": final_decision,
        "stop_reason": stop_reason,
        "lessons": lessons_record,
        "provider_failures": [f"{f.provider}: {f.query}: {f.reason}" for f in run.failures][:50],
        "fetch_failures": [{"location": loc, "reason": why} for loc, why in run.fetch_failures][:100],
        "corpus": run.corpus,
        "fetch_stats": run.reader.stats.as_dict() if hasattr(run.reader, "stats") else {},
        "usage": run.model.as_record(),
        "cost_usd": None if cost is None else round(cost, 6),
        "timings": {k: round(v, 3) for k, v in run.clock.timings.items()},
        "warnings": list(run.warnings),
    }
    from .fsutil import atomic_write_all

    with run.clock.stage("write"):
        # The report and its record, both or neither; the --output copy last, as it may replace a file.
        files = [(report_path, markdown.encode("utf-8")), (record_path, yaml_text(record).encode("utf-8"))]
        if settings.output is not None:
            files.append((settings.output, markdown.encode("utf-8")))
        atomic_write_all(files)
    return ResearchResult(
        id=run_id,
        query=run.query,
        mode=settings.mode.name,
        domain=domain,
        gate_decision=gate.decision,
        report_markdown=markdown,
        report_path=report_path,
        run_record_path=record_path,
        sources=sources,
        usage=usage,
        cost_usd=cost,
        timings=dict(run.clock.timings),
        iterations=tuple(run.iterations),
        final_decision=final_decision,
        stop_reason=stop_reason,
        adaptive=bool(lessons_record.get("adaptive")),
        lessons_applied=applied,
        warnings=tuple(run.warnings),
        record=record,
    )


def _check_output(output: Path | None) -> None:
    """Refuse an output file that is a directory, FIFO, device or symlink, before any model call."""
    from .errors import StorageError
    from .fsutil import ensure_writable_dir, existing_file_mode

    if output is None:
        return
    try:
        existing_file_mode(output)
    except StorageError as exc:
        raise InputError(f"output file: {exc}") from None
    ensure_writable_dir(Path(output).parent)


def _unique_id(settings: Settings, query: str, now: datetime) -> str:
    run_id = make_run_id(query, now)
    while (settings.reports_dir / f"{run_id}.md").exists():
        now = datetime.now(UTC)
        run_id = make_run_id(query, now)
    return run_id


def default_providers(
    settings: Settings, *, http_client: Any = None, on_index: Callable[[Path, int, int], None] | None = None
) -> tuple[list[SearchProvider], list[Any]]:
    """Build the providers Settings ask for; the local corpus is indexed up front.

    Returns the providers and the corpus index stats (empty without a corpus).
    """
    from .search.local import LocalSearchProvider
    from .search.registry import build_providers, provider_names

    local = None
    stats: list[Any] = []
    if "local" in provider_names(settings):
        local = LocalSearchProvider(
            settings.corpus_dirs,
            settings.cache_dir,
            token_budget=settings.mode.source_tokens,
            exclude=(settings.reports_dir,),
        )
        stats = local.prepare(progress=on_index)
    return build_providers(settings, http_client=http_client, local_provider=local), stats


def _corpus_record(stats: Sequence[Any]) -> list[dict[str, Any]]:
    return [
        {
            "root": str(s.root),
            "documents": s.documents,
            "indexed": s.indexed,
            "unchanged": s.unchanged,
            "removed": s.removed,
            "skipped": dict(s.skipped),
        }
        for s in stats
    ]


async def _prepare_providers(
    settings: Settings, progress: Progress, owned: list[Any]
) -> tuple[list[SearchProvider], list[Any]]:
    """Build the providers from settings, indexing the corpus in a worker thread."""
    import httpx

    from . import __version__

    client = httpx.AsyncClient(timeout=settings.fetch_timeout, headers={"User-Agent": f"research-agent/{__version__}"})
    owned.append(client)
    stop_indexing = threading.Event()

    def on_index(root: Path, done: int, total: int) -> None:
        if stop_indexing.is_set():  # Ctrl-C or the deadline: the worker thread stops at the next file
            raise Cancelled("indexing stopped")
        if done == total or done % 25 == 0:
            progress.stage("index", f"{root.name}: {done}/{total} files read")

    try:
        providers, corpus_stats = await asyncio.to_thread(
            default_providers, settings, http_client=client, on_index=on_index
        )
    except asyncio.CancelledError:
        stop_indexing.set()  # else asyncio.run waits for the whole corpus to be read
        raise
    for stats in corpus_stats:
        if stats.skipped:
            skipped = ", ".join(f"{n} {why}" for why, n in stats.skipped.items())
            progress.note(f"corpus {stats.root}: skipped {skipped}")
    return providers, corpus_stats


async def research(
    query: str,
    *,
    settings: Settings | None = None,
    model: ChatModel | None = None,
    providers: Sequence[SearchProvider] | None = None,
    reader: SourceReader | None = None,
    lessons: LessonsFn | None = None,
    progress: Progress | None = None,
    now: datetime | None = None,
    rng: random.Random | None = None,
    ticker: Ticker | None = None,
) -> ResearchResult:
    """Research ``query`` and write the report; return what the run produced.

    Anything not given is built from ``settings`` (by default, from the environment):
    the model from OPENAI_* settings, providers from the corpus/search settings, the
    page reader when a web provider is used, lessons from ``reports/meta``. The
    deadline (``settings.run_timeout``) covers everything from indexing to writing.
    ``ticker`` paces the "waiting for the model" count on ``progress`` (default: every second).
    """
    from .config import load_settings
    from .fsutil import ensure_writable_dir, remove_stale_temps
    from .safefile import check_folder_inside

    query = validate_query(query)
    settings = settings or load_settings()
    progress = progress or _NoProgress()
    started = (now or datetime.now(UTC)).astimezone(UTC)
    rng = rng or random.Random()
    clock = _Clock(progress)
    owned: list[Any] = []
    deadline = asyncio.timeout(settings.run_timeout)
    try:
        if model is None:
            from .llm import OpenAIChatModel

            model = OpenAIChatModel.from_settings(settings)
            owned.append(model)
        context_block = load_context(
            settings.context_path,
            required=settings.context_path is not None and settings.context_path != Path("research_context.md"),
        )
        rules = _load_rules(settings)  # a bad rules file fails before any work
        check_folder_inside(settings.meta_dir, settings.reports_dir)  # reports/meta must not lead elsewhere
        for folder in (settings.reports_dir, settings.meta_dir):
            remove_stale_temps(folder)
        async with deadline:
            corpus_stats: list[Any] = []
            if providers is None:
                with clock.stage("index", "preparing sources"):
                    providers, corpus_stats = await _prepare_providers(settings, progress, owned)
            if reader is None and any(p.name != "local" for p in providers):
                from .fetch import Fetcher

                reader = Fetcher.from_settings(settings)
                owned.append(reader)
            for folder in (settings.reports_dir, settings.meta_dir):
                ensure_writable_dir(folder)  # fail before spending tokens on a report that cannot be saved
            ticker = ticker or SystemTicker()
            warnings: list[str] = []
            _check_output(settings.output)
            run = _Run(
                settings=settings,
                model=UsageRecorder(model, on_note=warnings.append, clock=ticker.now),
                warnings=warnings,
                providers=providers,
                reader=reader,
                progress=progress,
                clock=clock,
                query=query,
                context_block=context_block,
                corpus=_corpus_record(corpus_stats),
                rules=rules,
                deadline=deadline.when(),
            )
            lessons = lessons or default_lessons(settings, now=started, rng=rng)
            async with waits_reported(run.model, progress, ticker):
                return await _pipeline(run, _unique_id(settings, query, started), started, lessons)
    except RuleDeadline as exc:  # lint is not awaited: the deadline reaches it through its time budget
        raise RunTimeout(
            f"the run passed its {settings.run_timeout:g}s deadline during the review stage, in custom rule "
            f"{exc.rule!r} (raise it with --timeout, or simplify the rule)",
            stage="review",
        ) from None
    except TimeoutError:
        if not deadline.expired():
            raise
        raise RunTimeout(
            f"the run passed its {settings.run_timeout:g}s deadline during the {clock.current} stage "
            "(raise it with --timeout)",
            stage=clock.current,
        ) from None
    finally:
        for resource in owned:
            close = getattr(resource, "aclose", None)
            if close is not None:
                try:
                    await close()
                except Exception as exc:  # closing must never hide the run's own outcome
                    log.debug("closing %r failed: %s", resource, exc)


def research_sync(query: str, **kwargs: Any) -> ResearchResult:
    """Blocking wrapper around :func:`research` for scripts and notebooks without a loop."""
    return asyncio.run(research(query, **kwargs))

