"""The options ``run`` takes, and the Settings overrides they stand for.

Shared by every command that runs the pipeline (``run``, ``memory ab``, ``batch``, ``mcp``,
``serve``), so that an option means the same thing everywhere and becomes the same setting; a
block of them that several commands take alike is listed once (:data:`SERVER_SETTINGS`,
:data:`PIPELINE_SETTINGS`) and added to each command's signature by :func:`with_options`. Each option names the
help panel ``--help`` lists it in (typer's ``rich_help_panel``, drawn by
:func:`research_agent.cli.usage.tidy_help`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import fields
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from ..config import MODES, Settings
from ..errors import InputError
from .export import BROWSER_HELP, FORMAT_HELP

__all__ = ["settings_overrides", "with_options", "SERVER_SETTINGS", "PIPELINE_SETTINGS", "RUN", "SOURCES", "MODEL", "OUTPUT", "REVIEW", "MEMORY"]

# The help panels of run's options, in the order --help shows them.
RUN, SOURCES, MODEL, OUTPUT, REVIEW, MEMORY = (
    "The run", "Sources", "Model", "Output", "Review and retries", "Critique and lessons",
)  # fmt: skip


def _default(name: str) -> str:
    """A setting's built-in default, as help shows it ("1800", "gpt-4o-mini")."""
    value = next(f.default for f in fields(Settings) if f.name == name)
    return f"{value:g}" if isinstance(value, float) else str(value)


Query = Annotated[
    str | None, typer.Argument(help="The question to research (at most 2,000 characters); with --sample, "
                               "one of the sample's own when left out.", show_default=False)
]
Quick = Annotated[bool, typer.Option("--quick", help="Fewer sources, no skeptic, no critique.", rich_help_panel=RUN)]
Standard = Annotated[bool, typer.Option("--standard", help="The default mode.", rich_help_panel=RUN)]
Deep = Annotated[bool, typer.Option("--deep", help="More sub-queries and sources, a deeper skeptic.", rich_help_panel=RUN)]
Corpus = Annotated[
    list[Path] | None,
    typer.Option("--corpus", metavar="DIR", help="A folder of your documents (repeatable). Alone, it means local only.", rich_help_panel=SOURCES),
]
Exclude = Annotated[
    list[str] | None,
    typer.Option("--exclude", metavar="GLOB", help="Leave out corpus files matching this gitignore-style pattern "
                 "(repeatable; filters the index as it is, without re-indexing).", rich_help_panel=SOURCES),
]
Search = Annotated[
    str | None, typer.Option("--search", metavar="LIST", help="Search providers, comma-separated: ddgs, searxng, tavily, local, openalex, "
                 "arxiv, pubmed, semanticscholar, wikipedia; academic = the four paper indexes.",
                 show_default="local with --corpus, else ddgs", rich_help_panel=SOURCES)
]
SampleCorpus = Annotated[
    bool, typer.Option("--sample", help="Research the sample shipped with the tool instead: a small fictional world "
                       "(firms, towns, people and landmarks, all invented, so no model can answer from memory), "
                       "written once into the cache folder. Local only: never the web.", rich_help_panel=SOURCES),
]
SearxngUrl = Annotated[str | None, typer.Option("--searxng-url", metavar="URL", help="Base URL of a SearXNG instance.", rich_help_panel=SOURCES)]
MaxSources = Annotated[
    int | None, typer.Option("--max-sources", metavar="N", help="At most this many sources fetched and scored per plan.",
                 show_default=", ".join(f"{m.name} {m.sources_scored}" for m in MODES.values()), rich_help_panel=SOURCES)
]
NoCache = Annotated[bool, typer.Option("--no-cache", help="Do not read or write the page cache.", rich_help_panel=SOURCES)]
AllowPrivate = Annotated[
    bool, typer.Option("--allow-private", help="Allow fetching loopback and private-network addresses.", rich_help_panel=SOURCES)
]
IgnoreRobots = Annotated[bool, typer.Option("--ignore-robots", help="Do not check robots.txt.", rich_help_panel=SOURCES)]
Model = Annotated[str | None, typer.Option("--model", metavar="NAME", help="Main model (RESEARCH_AGENT_MODEL).", show_default=_default("model"), rich_help_panel=MODEL)]
FastModel = Annotated[str | None, typer.Option("--fast-model", metavar="NAME", help="Cheaper model for relevance and critique.",
                 show_default="the main model", rich_help_panel=MODEL)]
ReportsDir = Annotated[
    Path | None, typer.Option("--reports-dir", metavar="DIR", help="Where reports go (RESEARCH_AGENT_REPORTS_DIR).",
                 show_default=_default("reports_dir"), rich_help_panel=OUTPUT)
]
Output = Annotated[Path | None, typer.Option("--output", "-o", metavar="FILE", help="Also write the report here.", rich_help_panel=OUTPUT)]
Context = Annotated[
    str | None, typer.Option("--context", metavar="FILE|none", help="Business context file, or 'none'.",
                 show_default="./research_context.md", rich_help_panel=RUN)
]
ResumeRun = Annotated[str | None, typer.Option(
    "--resume", metavar="ID", help="Continue an interrupted, failed or cancelled run (its id or a unique prefix: see "
    "`research-agent runs`) from its checkpoints, with its own question and settings; the model is asked only for "
    "what the run does not have yet.", rich_help_panel=RUN)]
JsonOutput = Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.", rich_help_panel=OUTPUT)]
Timeout = Annotated[float | None, typer.Option("--timeout", metavar="SECONDS",
                                    help="Overall deadline of the run; a draft that exists by then is published.",
                                    show_default=_default("run_timeout"), rich_help_panel=RUN)]
LlmTimeout = Annotated[
    float | None,
    typer.Option("--llm-timeout", metavar="SECONDS", help="How long one structured model call may take, and how "
                 "long the streamed draft may go without a token (RESEARCH_AGENT_LLM_TIMEOUT).",
                 show_default=_default("llm_timeout"), rich_help_panel=MODEL),
]
LlmPromptRate = Annotated[
    float | None,
    typer.Option("--llm-prompt-rate", metavar="TOKENS/S", help="How fast the model server reads a prompt: the first "
                 "streamed token may take --llm-timeout plus the prompt at this rate (RESEARCH_AGENT_LLM_PROMPT_RATE).",
                 show_default=_default("llm_prompt_rate"), rich_help_panel=MODEL),
]
ContextTokens = Annotated[
    int | None,
    typer.Option("--context-tokens", metavar="N", help="The model's context window, when its server does not say it "
                 "(llama.cpp /props, Ollama /api/show): prompts and answers are fitted to it "
                 "(RESEARCH_AGENT_CONTEXT_TOKENS).", show_default="what the server says", rich_help_panel=MODEL),
]
NoRetry = Annotated[bool, typer.Option("--no-retry", help="No replanning and no revision loop.", rich_help_panel=REVIEW)]
MinViability = Annotated[
    int | None, typer.Option("--min-viability", metavar="0-100", help="Replan below this skeptic viability.",
                 show_default=_default("min_viability"), rich_help_panel=REVIEW)
]
MaxPlans = Annotated[int | None, typer.Option("--max-plans", metavar="N", help="At most this many plans.", show_default=_default("max_plans"), rich_help_panel=REVIEW)]
MaxRevisions = Annotated[int | None, typer.Option("--max-revisions", metavar="N", help="At most this many revisions.",
                                          show_default=_default("max_revisions"), rich_help_panel=REVIEW)]
Rules = Annotated[Path | None, typer.Option("--rules", metavar="FILE", help="Custom lint rules (YAML).", show_default="rules.yaml beside the context file", rich_help_panel=REVIEW)]
NoCritique = Annotated[bool, typer.Option("--no-critique", help="Do not critique the report afterwards.", rich_help_panel=MEMORY)]
WaitCritique = Annotated[bool, typer.Option("--wait-critique", help="Wait for the critique and print its summary.", rich_help_panel=MEMORY)]
Strict = Annotated[
    bool, typer.Option("--strict", help="Exit 1 when the tool's own review rejects the report (it is still written).", rich_help_panel=OUTPUT)
]
RunFormat = Annotated[str, typer.Option("--format", "-f", help=FORMAT_HELP, rich_help_panel=OUTPUT)]  # export's, in a panel
RunBrowser = Annotated[Path | None, typer.Option("--browser", help=BROWSER_HELP, show_default=False, rich_help_panel=OUTPUT)]
NoLessons = Annotated[
    bool, typer.Option("--no-lessons", help="Run without lessons from past critiques (a baseline run).", rich_help_panel=MEMORY)
]

# The run settings a server (``mcp``, ``serve``) takes for the runs it starts: name, option, default.
SERVER_SETTINGS: tuple[tuple[str, Any, Any], ...] = (
    ("model", Model, None), ("fast_model", FastModel, None), ("reports_dir", ReportsDir, None),
    ("searxng_url", SearxngUrl, None), ("context", Context, None), ("rules", Rules, None), ("timeout", Timeout, None),
    ("llm_timeout", LlmTimeout, None), ("no_cache", NoCache, False), ("no_critique", NoCritique, False),
    ("no_lessons", NoLessons, False),
)  # fmt: skip

# The pipeline's settings that ``batch`` and ``memory ab`` take as ``run`` does, in run's order.
PIPELINE_SETTINGS: tuple[tuple[str, Any, Any], ...] = (
    ("standard", Standard, False), ("deep", Deep, False), ("corpus", Corpus, None), ("exclude", Exclude, None),
    ("search", Search, None), ("searxng_url", SearxngUrl, None), ("max_sources", MaxSources, None),
    ("no_cache", NoCache, False), ("allow_private", AllowPrivate, False), ("ignore_robots", IgnoreRobots, False),
    ("model", Model, None), ("fast_model", FastModel, None), ("reports_dir", ReportsDir, None),
    ("context", Context, None), ("timeout", Timeout, None), ("llm_timeout", LlmTimeout, None),
    ("no_retry", NoRetry, False), ("min_viability", MinViability, None), ("max_plans", MaxPlans, None),
    ("max_revisions", MaxRevisions, None), ("rules", Rules, None),
)  # fmt: skip

Command = TypeVar("Command", bound=Callable[..., Any])


def with_options(options: tuple[tuple[str, Any, Any], ...]) -> Callable[[Command], Command]:
    """Add ``options`` (name, option, default), in order, to a command's signature after its own
    parameters, for typer to read; the command takes them as ``**kwargs`` (``ctx.params`` has them too)."""

    def add(command: Command) -> Command:
        signature = inspect.signature(command, eval_str=True)  # typer reads a given signature as it is
        own = [p for p in signature.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
        more = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=option, default=default)
                for name, option, default in options]  # fmt: skip
        setattr(command, "__signature__", signature.replace(parameters=[*own, *more]))  # noqa: B010
        return command

    return add


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
    "llm_prompt_rate": "llm_prompt_rate",
    "context_tokens": "context_tokens",
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

    Raises InputError when more than one of --quick, --standard, --deep is given, and when
    ``--sample`` is given with ``--corpus`` or a web search provider (it always means local only;
    the run's corpus, the sample's folder, is known once the settings say where the cache is).
    """
    quick, standard, deep = (bool(options.get(name)) for name in ("quick", "standard", "deep"))
    if quick + standard + deep > 1:
        raise InputError("choose one of --quick, --standard, --deep")
    corpus, exclude = options.get("corpus"), options.get("exclude")
    if options.get("sample"):
        _check_sample(options)
    overrides: dict[str, Any] = {
        "mode": "quick" if quick else "deep" if deep else "standard" if standard else None,
        "corpus_dirs": tuple(corpus) if corpus else None,
        "corpus_exclude": tuple(exclude) if exclude else None,
    }
    overrides.update({field: options.get(option) for option, field in _SAME_VALUE.items()})
    for option, (field, value) in _FLAG_VALUE.items():
        overrides[field] = value if options.get(option) else None
    if options.get("sample"):
        overrides["search_providers"] = "local"  # whatever the environment or config file names: no web
    return overrides


def _check_sample(options: Mapping[str, Any]) -> None:
    """Refuse what ``--sample`` cannot go with: another corpus, or a web search provider."""
    search = [p.strip() for p in (options.get("search") or "").split(",") if p.strip()]
    web = [p for p in search if p.lower() != "local"]
    given = ("--corpus" if options.get("corpus") else "--search " + ",".join(web) if web
             else "--searxng-url" if options.get("searxng_url") else None)  # fmt: skip
    if given:
        raise InputError(f"--sample reads only its own pages, never the web or another folder: leave out {given}")
