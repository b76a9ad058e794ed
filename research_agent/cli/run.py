"""``research-agent run QUERY``: research a question, print the report's path, schedule its critique.

The command reads as its four steps: the options become settings overrides
(:func:`settings_overrides`), the pipeline runs with progress on stderr, the result is
printed (:func:`print_result`: the report path on stdout, or one JSON object), and memory
is asked to critique the run (:func:`research_agent.memory.critique.schedule.after_report`).
"""

from __future__ import annotations

from pathlib import Path

import typer

from ..config import Settings, load_settings
from ..memory.critique.schedule import after_report
from ..results import ResearchResult
from .boundary import guarded, run_async, stderr_console
from .critique import print_scheduled
from .progress import RichProgress, cost_text
from .run_options import (
    AllowPrivate,
    Context,
    Corpus,
    Deep,
    FastModel,
    IgnoreRobots,
    JsonOutput,
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
    Rules,
    Search,
    SearxngUrl,
    Standard,
    Timeout,
    WaitCritique,
    settings_overrides,
)
from .signals import interrupt_exit_code, interrupt_word
from .startup import importing
from .terminal import dumps_json, echo

__all__ = ["run", "settings_overrides", "print_result"]  # settings_overrides lives in run_options


@guarded
def run(
    ctx: typer.Context,
    query: Query,
    quick: Quick = False,
    standard: Standard = False,
    deep: Deep = False,
    corpus: Corpus = None,
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
    no_retry: NoRetry = False,
    min_viability: MinViability = None,
    max_plans: MaxPlans = None,
    max_revisions: MaxRevisions = None,
    rules: Rules = None,
    no_critique: NoCritique = False,
    wait_critique: WaitCritique = False,
    no_lessons: NoLessons = False,
) -> None:
    """Research QUERY and write reports/<id>.md plus a run record in reports/meta/."""
    settings = load_settings(settings_overrides(ctx.params))  # every option above, by name
    result = _research(query, settings)
    print_result(result, json_output=json_output)
    _critique_afterwards(result.run_record_path, settings)


def _research(query: str, settings: Settings) -> ResearchResult:
    """Run the pipeline with live progress on stderr; Ctrl-C says what it left behind."""
    with importing():  # everything the run needs, the openai package included, loaded up front
        from ..llm.openai_compat import import_openai
        from ..pipeline import research

        import_openai()

    progress = RichProgress(stderr_console())
    try:
        return run_async(research(query, settings=settings, progress=progress), interrupted=progress.interrupted)
    finally:
        progress.stop()


def print_result(result: ResearchResult, *, json_output: bool) -> None:
    """The report's path on stdout and a one-line summary on stderr, or one JSON object on stdout."""
    if json_output:
        typer.echo(dumps_json(result.summary()))
        return
    echo(result.report_path)
    usage = result.total_usage
    cited = sum(1 for source in result.sources if source.n)
    stderr_console().print(
        f"[green]done[/green]: {result.gate_decision}, {cited} sources cited, "
        f"{usage.prompt_tokens + usage.completion_tokens:,} tokens, {cost_text(result.cost_usd)}",
        markup=True,
    )


def _critique_afterwards(run_record_path: Path, settings: Settings) -> None:
    """Ask memory to critique the run (skipped, waited for or detached, as settings say) and tell how it went."""
    console = stderr_console()
    try:
        scheduled = after_report(run_record_path, settings)
    except KeyboardInterrupt:  # typer would turn it into a silent exit 130
        console.print(f"{interrupt_word()}: the report is written; its critique was not", soft_wrap=True)
        raise typer.Exit(interrupt_exit_code()) from None
    print_scheduled(scheduled, console)
