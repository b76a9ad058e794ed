"""``research-agent run QUERY``: research a question, print the report's path, schedule its critique.

The command reads as its four steps: the options become settings overrides
(:func:`settings_overrides`), the pipeline runs with progress on stderr, the result is
printed (:func:`print_result`: the report path on stdout, or one JSON object), and memory
is asked to critique the run (:func:`research_agent.memory.critique.schedule.after_report`).
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ..config import Settings, load_settings
from ..errors import InputError, ResearchError
from ..files.output import check_output_path
from ..interrupts import interrupt_exit_code, interrupt_word
from ..journal.run_journal import Journalling
from ..run_refs import Runs, named_run_id, short_id
from .boundary import guarded, json_failures, run_async, stderr_console
from .export import ExportPlan, export_after_run, plan_export, print_note
from .plan import PlanFile, ReviewPlan, person_inputs, review_on_terminal
from .progress import RichProgress, cost_text
from .run_options import (
    AllowPrivate,
    Context,
    ContextTokens,
    Corpus,
    Deep,
    Exclude,
    FastModel,
    IgnoreRobots,
    JsonOutput,
    LlmPromptRate,
    LlmTimeout,
    MaxPlans,
    MaxRevisions,
    MaxSources,
    MinViability,
    Model,
    NoCache,
    NoCritique,
    NoLessons,
    NoRetry,
    Output,
    Query,
    Quick,
    ReportsDir,
    ResumeRun,
    Rules,
    RunBrowser,
    RunFormat,
    SampleCorpus,
    Search,
    SearxngUrl,
    Standard,
    Strict,
    Timeout,
    WaitCritique,
    settings_overrides,
)
from .startup import import_later, importing
from .terminal import dumps_json, echo, markup

if TYPE_CHECKING:
    from ..export import Exported
    from ..plans import ResearchPlan
    from ..results import ResearchResult

__all__ = ["run", "settings_overrides", "print_result"]  # settings_overrides lives in run_options

# What the command imports only after its first model request is out: the draft's markdown parser,
# the date parsing and the critique asked for at the end (imported meanwhile: :func:`_started`).
LATER = ("markdown_it", "_strptime", "research_agent.memory.critique.schedule", "research_agent.cli.critique")


@guarded
def run(
    ctx: typer.Context,
    query: Query = None,
    quick: Quick = False,
    standard: Standard = False,
    deep: Deep = False,
    corpus: Corpus = None,
    sample: SampleCorpus = False,
    exclude: Exclude = None,
    search: Search = None,
    searxng_url: SearxngUrl = None,
    max_sources: MaxSources = None,
    no_cache: NoCache = False,
    allow_private: AllowPrivate = False,
    ignore_robots: IgnoreRobots = False,
    model: Model = None,
    fast_model: FastModel = None,
    reports_dir: ReportsDir = None,
    output: Output = None,
    context: Context = None,
    json_output: JsonOutput = False,
    timeout: Timeout = None,
    llm_timeout: LlmTimeout = None,
    llm_prompt_rate: LlmPromptRate = None,
    context_tokens: ContextTokens = None,
    no_retry: NoRetry = False,
    min_viability: MinViability = None,
    max_plans: MaxPlans = None,
    max_revisions: MaxRevisions = None,
    rules: Rules = None,
    no_critique: NoCritique = False,
    wait_critique: WaitCritique = False,
    no_lessons: NoLessons = False,
    fmt: RunFormat = "md",
    browser: RunBrowser = None,
    strict: Strict = False,
    plan_file: PlanFile = None,
    review_plan: ReviewPlan = False,
    resume: ResumeRun = None,
) -> None:
    """Research QUERY and write reports/<id>.md plus a run record in reports/meta/
    (and, with --format html|pdf, reports/<id>.html or .pdf, or --output in that format).

    A report the tool's own review rejected is written all the same, marked as such;
    --strict then makes the command exit 1."""
    if query is None and not sample and plan_file is None and resume is None:  # a usage error, before anything else
        raise _missing_query(ctx)
    with json_failures(json_output):
        query, settings, journalling = _what_to_run(ctx, query, sample, context is not None, resume)
        query, given, review = person_inputs(query, plan_file, review_plan)  # a plan of a person's, or reviewed
        plan, settings = _plan_output(settings, output, fmt, browser)
        started = time.monotonic()  # --timeout covers what the command waits for: the critique too
        result = _research(str(query), settings, journalling, given, review)
        exported, failure = _export(plan, result, settings)
        print_result(result, json_output=json_output, exported=exported)
    _critique_afterwards(result.run_record_path, settings, settings.run_timeout - (time.monotonic() - started))
    if failure is not None:
        raise failure
    if strict and _rejected(result):
        raise typer.Exit(1)


def _what_to_run(
    ctx: typer.Context, query: str | None, sample: bool, context_given: bool, resume: str | None
) -> tuple[str | None, Settings, Journalling]:
    """The question, the settings (every option above, by name) and the journal's part: a resumed
    run's own question and settings, from its journal entry (the other options are not used)."""
    if resume is not None:
        from ..journal.resume import resume_settings

        if ctx.params.get("plan_file") is not None or ctx.params.get("review_plan"):
            raise InputError("--resume continues a run with the plan it had: leave out --plan and --review-plan")
        run_id, question, settings = resume_settings(resume, ctx.params.get("reports_dir"))
        return question, settings, Journalling("cli", resume=run_id)
    settings = load_settings(settings_overrides(ctx.params))
    return (*_on_the_sample(query, settings, context_given), Journalling("cli")) if sample else (query, settings, Journalling("cli"))


def _missing_query(ctx: typer.Context) -> Exception:
    """typer's own "Missing argument 'QUERY'" usage error, naming what a newcomer can run instead."""
    missing = next(c for c in typer.BadParameter.__subclasses__() if c.__name__ == "MissingParameter")
    param = next(p for p in ctx.command.params if p.name == "query")
    return missing("Ask a question, or try --sample", ctx=ctx, param=param)  # type: ignore[arg-type]  # a TyperArgument


def _on_the_sample(query: str | None, settings: Settings, context_given: bool) -> tuple[str, Settings]:
    """The question and settings of a run on the sample, written into the cache folder first; a line
    on stderr says what the sample is, and which of its questions is asked when none was given. The
    business context file is left out unless ``--context`` names one, as an eval leaves it out: a
    person's background has nothing to say about an invented world."""
    from ..eval.world.sample import write_sample

    sample = write_sample(settings.cache_dir)
    console = stderr_console()
    console.print(f"sample: {sample.pages} pages of an invented world in {markup(str(sample.corpus))} "
                  "(no model knows it: the answer must come from the pages)", soft_wrap=True)  # fmt: skip
    if query is None:
        query = sample.question
        console.print(f"question: {markup(query)} (one of the sample's own; the others are in "
                      f"{markup(str(sample.questions_file))})",
                      soft_wrap=True)  # fmt: skip
    return query, settings.replace(corpus_dirs=(sample.corpus,), **({} if context_given else {"context_path": None}))


def _plan_output(
    settings: Settings, output: Path | None, fmt: str, browser: Path | None
) -> tuple[ExportPlan, Settings]:
    """Check ``--output`` and ``--format`` before the run (never after the user has paid for it):
    the export plan, and the settings the run writes its markdown with."""
    if output is not None:  # in whatever format: never onto a file another run owns
        check_output_path(output, reports_dir=settings.reports_dir, cache_dir=settings.cache_dir)
    plan = plan_export(fmt, output, browser)
    if plan.format != "md":
        settings = settings.replace(output=None)  # --output gets the chosen format, not the markdown
    return plan, settings


def _export(plan: ExportPlan, result: ResearchResult, settings: Settings) -> tuple[Exported | None, ResearchError | None]:
    """The report exported as ``--format`` asks (None for md), or the error that stopped the export:
    the command raises it only once the written report is printed and its critique scheduled."""
    if plan.format == "md":
        return None, None
    try:
        return export_after_run(plan, result.report_path, settings.reports_dir), None
    except ResearchError as exc:
        return None, exc


def _rejected(result: ResearchResult) -> bool:
    review = result.run_record.review
    return review is not None and review.rejected


def _research(query: str, settings: Settings, journalling: Journalling, given: ResearchPlan | None = None,
              review: bool = False) -> ResearchResult:  # fmt: skip
    """Run the pipeline with live progress on stderr; Ctrl-C says what it left behind. ``given``: a
    person's plan (``--plan``); ``review``: the model's plan shown on the terminal first."""
    with importing():
        from ..llm.client.transport import load_tls_ahead

        load_tls_ahead()  # the model client's TLS context is made in a thread while the pipeline loads
        from ..pipeline import research

    progress = RichProgress(stderr_console())
    try:
        reviewer = review_on_terminal(progress) if review else None
        running = research(query, settings=settings, progress=progress, plan=given, review_plan=reviewer,
                           journalling=_started(journalling))  # fmt: skip
        return run_async(running, interrupted=progress.interrupted)
    finally:
        progress.stop()


def _started(journalling: Journalling) -> Journalling:
    """``journalling``, which also starts importing :data:`LATER` once the run has started (its model
    client built) and the model SDK is imported: the first request is on its way then."""
    told = journalling.on_started

    def started(run_id: str) -> None:
        from ..llm.client.sdk import wait_for_sdk

        import_later(LATER, after=wait_for_sdk)
        if told is not None:
            told(run_id)

    return replace(journalling, on_started=started)


def print_result(result: ResearchResult, *, json_output: bool, exported: Exported | None = None) -> None:
    """The report's path (and the exported file's) on stdout and a one-line summary (with the run's
    short id) on stderr, or one JSON object on stdout; a warning line on stderr when the tool's own
    review rejected it."""
    if _rejected(result):  # the same line is in the record's warnings, hence in --json's
        line = next(w for w in result.warnings if w.startswith("the tool's own review rejected"))
        stderr_console().print(f"[yellow]warning[/yellow]: {markup(line)}", markup=True, soft_wrap=True)
    short = short_id(result.id, Runs.scan(Path(result.report_path).parent).ids())
    if json_output:
        summary = {**result.summary(), "short_id": short}
        if exported is not None:
            summary["export"] = {
                "format": exported.format, "path": str(exported.path), "previews": exported.previews,
            }  # fmt: skip
        typer.echo(dumps_json(summary))
        return
    echo(result.report_path)
    if exported is not None:
        echo(exported.path)
        print_note(exported)
    usage = result.total_usage
    cited = sum(1 for source in result.sources if source.n)
    stderr_console().print(
        f"[green]done[/green] ({short}): {result.gate_decision}, {cited} sources cited, "
        f"{usage.prompt_tokens + usage.completion_tokens:,} tokens, {cost_text(result.cost_usd)}",
        markup=True,
    )


def _critique_afterwards(run_record_path: Path, settings: Settings, time_left: float) -> None:
    """Ask memory to critique the run (skipped, waited for within ``time_left`` seconds, or
    detached, as settings say) and tell how it went, and which earlier critiques failed since the
    last command. Loaded here: the run does not need it."""
    from ..memory.critique.schedule import after_report
    from .critique import print_scheduled, tell_failed_critiques

    console = stderr_console()
    try:
        scheduled = after_report(run_record_path, settings, time_left=time_left)
    except KeyboardInterrupt:  # typer would turn it into a silent exit 130
        console.print(f"{interrupt_word()}: the report is written; its critique was not", soft_wrap=True)
        raise typer.Exit(interrupt_exit_code()) from None
    print_scheduled(scheduled, console, record=Path(run_record_path), settings=settings)
    told = {named_run_id(Path(run_record_path).name)} if scheduled.state in ("failed", "not_started") else set()
    tell_failed_critiques(settings, console, told=told)  # an earlier run's, failed since the last command
