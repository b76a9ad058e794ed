"""The options ``run`` takes, and the Settings overrides they stand for.

Shared by every command that runs the pipeline (``run``, ``memory ab``), so that an
option means the same thing everywhere and becomes the same setting.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import typer

from ..errors import InputError

__all__ = ["settings_overrides"]

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
Strict = Annotated[
    bool, typer.Option("--strict", help="Exit 1 when the tool's own review rejects the report (it is still written).")
]
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
