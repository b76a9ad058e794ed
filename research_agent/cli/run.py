"""``research-agent run QUERY``: research a question, print the report's path, schedule its critique.

The command reads as its four steps: the options become settings overrides
(:func:`settings_overrides`), the pipeline runs with progress on stderr, the result is
printed (:func:`print_result`: the report path on stdout, or one JSON object), and memory
is asked to critique the run (:func:`research_agent.memory.schedule.after_report`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import typer

from ..config import Settings, load_settings
from ..errors import InputError
from ..memory.schedule import after_report
from ..results import ResearchResult
from .boundary import guarded, run_async, stderr_console
from .critique import print_scheduled
from .progress import RichProgress, cost_text
from .startup import importing
from .terminal import dumps_json, echo

__all__ = ["run", "settings_overrides", "print_result"]

Query = Annotated[str, typer.Argument(help="The question to research (at most 2,000 characters).")]
Quick = Annotated[bool, typer.Option("--quick", help="Fewer sources, no skeptic, no critique.")]
Standard = Annotated[bool, typer.Option("--standard", help="The default mode.")]
Deep = Annotated[bool, typer.Option("--deep", help="More sub-queries and sources, a deeper skeptic.")]
Corpus = Annotated[
    list[Path] | None,
    typer.Option("--corpus", help="A folder of your documents (repeatable). Alone, it means local only."),
]
Search = Annotated[
    str | None, typer.Option("--search", help="Search providers, comma-separated: ddgs, searxng, tavily, local.")
]
SearxngUrl = Annotated[str | None, typer.Option("--searxng-url", help="Base URL of a SearXNG instance.")]
MaxSources = Annotated[
    int | None, typer.Option("--max-sources", help="At most this many sources fetched and scored per plan.")
]
NoCache = Annotated[bool, typer.Option("--no-cache", help="Do not read or write the page cache.")]
AllowPrivate = Annotated[
    bool, typer.Option("--allow-private", help="Allow fetching loopback and private-network addresses.")
]
IgnoreRobots = Annotated[bool, typer.Option("--ignore-robots", help="Do not check robots.txt.")]
Model = Annotated[str | None, typer.Option("--model", help="Main model (RESEARCH_AGENT_MODEL).")]
FastModel = Annotated[str | None, typer.Option("--fast-model", help="Cheaper model for relevance and critique.")]
ReportsDir = Annotated[
    Path | None, typer.Option("--reports-dir", help="Where reports go (RESEARCH_AGENT_REPORTS_DIR).")
]
Output = Annotated[Path | None, typer.Option("--output", "-o", help="Also write the report here.")]
Context = Annotated[
    str | None, typer.Option("--context", help="Business context file, or 'none' (default: ./research_context.md).")
]
JsonOutput = Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")]
Timeout = Annotated[float | None, typer.Option("--timeout", help="Overall deadline in seconds.")]
LlmTimeout = Annotated[
    float | None,
    typer.Option("--llm-timeout", help="Seconds one model call may take (RESEARCH_AGENT_LLM_TIMEOUT; default 180)."),
]
NoRetry = Annotated[bool, typer.Option("--no-retry", help="No replanning and no revision loop.")]
MinViability = Annotated[
    int | None, typer.Option("--min-viability", help="Replan below this skeptic viability (0-100).")
]
MaxPlans = Annotated[int | None, typer.Option("--max-plans", help="At most this many plans.")]
MaxRevisions = Annotated[int | None, typer.Option("--max-revisions", help="At most this many revisions.")]
Rules = Annotated[Path | None, typer.Option("--rules", help="Custom lint rules (YAML).")]
NoCritique = Annotated[bool, typer.Option("--no-critique", help="Do not critique the report afterwards.")]
WaitCritique = Annotated[bool, typer.Option("--wait-critique", help="Wait for the critique and print its summary.")]
NoLessons = Annotated[
    bool, typer.Option("--no-lessons", help="Run without lessons from past critiques (a baseline run).")
]

# Options that map one to one onto a Settings field (the rest are translated below).
_SAME_VALUE = {
    "search": "search_providers",
    "searxng_url": "searxng_url",
    "max_sources": "max_sources",
    "model": "model",
    "fast_model": "fast_model",
    "reports_dir": "reports_dir",
    "output": "output",
    "context": "context_path",
    "timeout": "run_timeout",
    "llm_timeout": "llm_timeout",
    "min_viability": "min_viability",
    "max_plans": "max_plans",
    "max_revisions": "max_revisions",
    "rules": "rules_path",
}
# Flags that, when given, set a Settings field to a fixed value.
_FLAG_VALUE = {
    "no_cache": ("use_cache", False),
    "allow_private": ("allow_private", True),
    "ignore_robots": ("respect_robots", False),
    "no_retry": ("retry", False),
    "no_critique": ("critique", False),
    "wait_critique": ("wait_critique", True),
    "no_lessons": ("lessons", False),
}


def settings_overrides(options: Mapping[str, Any]) -> dict[str, Any]:
    """The Settings overrides the ``run`` options ask for (None: not given, keep the setting).

    Raises InputError when more than one of --quick, --standard, --deep is given.
    """
    quick, standard, deep = (bool(options.get(name)) for name in ("quick", "standard", "deep"))
    if quick + standard + deep > 1:
        raise InputError("choose one of --quick, --standard, --deep")
    corpus = options.get("corpus")
    overrides: dict[str, Any] = {
        "mode": "quick" if quick else "deep" if deep else "standard" if standard else None,
        "corpus_dirs": tuple(corpus) if corpus else None,
    }
    overrides.update({field: options.get(option) for option, field in _SAME_VALUE.items()})
    for option, (field, value) in _FLAG_VALUE.items():
        overrides[field] = value if options.get(option) else None
    return overrides


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
        console.print("interrupted: the report is written; its critique was not", soft_wrap=True)
        raise typer.Exit(130) from None
    print_scheduled(scheduled, console)
