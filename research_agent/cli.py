"""The ``research-agent`` command line.

This is the one place that turns ResearchError into a one-line message and an exit
code. Progress goes to stderr; stdout carries only the report path (or JSON).
"""

from __future__ import annotations

import asyncio
import logging
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from . import __version__
from .config import Settings, load_settings
from .errors import ResearchError
from .terminal import VisibleFormatter, dumps_json, echo, markup, one_line

__all__ = ["app", "main"]

app = typer.Typer(
    name="research-agent",
    help=(
        "Research a question over the web or your own documents and write a cited markdown report.\n\n"
        "Configure a model endpoint first: OPENAI_API_KEY for OpenAI, or OPENAI_BASE_URL for any "
        "OpenAI-compatible server (e.g. http://localhost:11434/v1 for Ollama)."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
stderr = Console(stderr=True, highlight=False)


class _State:
    verbose = False


def fail(exc: BaseException) -> typer.Exit:
    """Print ``exc`` as one line on stderr and return the Exit to raise."""
    if isinstance(exc, ResearchError):
        stderr.print(f"[red]error:[/red] {markup(one_line(exc))}", markup=True, soft_wrap=True)
        return typer.Exit(exc.exit_code)
    if _State.verbose:
        traceback.print_exception(exc)
    else:
        stderr.print(
            f"[red]error:[/red] unexpected {type(exc).__name__}: {markup(one_line(exc))} (run with -v for details)",
            markup=True,
            soft_wrap=True,
        )
    return typer.Exit(1)


def run_async(coro: Any, *, interrupted: Callable[[], str] | None = None) -> Any:
    """Run a coroutine; Ctrl-C becomes a one-line message (``interrupted()``) and exit code 130."""
    try:
        return asyncio.run(coro)
    except KeyboardInterrupt:
        message = interrupted() if interrupted else "interrupted: stopped before writing anything"
        stderr.print(message, soft_wrap=True)
        raise typer.Exit(130) from None


def settings_from(overrides: dict[str, Any]) -> Settings:
    try:
        return load_settings(overrides)
    except ResearchError as exc:
        raise fail(exc) from None


def waiting_text(seconds: int) -> str:
    """The progress line's part for a model call in flight, e.g. ``waiting for the model, 45 s``."""
    return f"waiting for the model, {seconds} s" if seconds > 0 else ""


def cost_text(cost_usd: float | None) -> str:
    """``~$0.0123``, or ``cost unknown`` when a price was unknown (never shown as $0)."""
    return "cost unknown" if cost_usd is None else f"~${cost_usd:.4f}"


class RichProgress:
    """Live progress on stderr: a spinner on a terminal, plain lines otherwise.

    Without a terminal a long wait for the model is printed once every
    ``WAIT_LINE_EVERY`` seconds, so logs show a slow model is not a hang.
    """

    WAIT_LINE_EVERY = 30

    def __init__(self, console: Console) -> None:
        self.console = console
        self.values: dict[str, int] = {}
        self.current = ""
        self.status = console.status("starting") if console.is_terminal else None
        if self.status is not None:
            self.status.start()

    def _line(self) -> str:
        v = self.values
        bits = [self.current]
        if "sub_queries" in v:
            bits.append(f"sub-queries {v['sub_queries']}")
        if "found" in v:
            bits.append(f"sources found {v['found']}")
        if "scored" in v:
            bits.append(f"kept {v.get('kept', 0)}/{v['scored']}")
        if "tokens" in v:
            bits.append(f"tokens {v['tokens']:,}")
        bits.append(waiting_text(v.get("waiting", 0)))
        return markup(" · ".join(b for b in bits if b))

    def stage(self, name: str, detail: str = "") -> None:
        self.current = f"{name}: {detail}" if detail else name
        if self.status is not None:
            self.status.update(self._line())
        else:
            self.console.print(f"… {markup(self.current)}", soft_wrap=True, highlight=False)

    def counts(self, **values: int) -> None:
        before = self.values.get("waiting", 0)
        self.values.update(values)
        if self.status is not None:
            self.status.update(self._line())
            return
        waited = self.values.get("waiting", 0)
        if waited // self.WAIT_LINE_EVERY > before // self.WAIT_LINE_EVERY:
            self.console.print(f"… {self.current}: {waiting_text(waited)}", soft_wrap=True, highlight=False)

    def note(self, message: str) -> None:
        self.console.print(f"[yellow]![/yellow] {markup(message)}", soft_wrap=True, markup=True, highlight=False)

    def interrupted(self) -> str:
        """What Ctrl-C leaves behind, by the stage it came in."""
        if self.current.startswith("write"):
            return "interrupted while writing: any report in the reports folder is complete"
        return "interrupted: stopped before writing anything"

    def stop(self) -> None:
        if self.status is not None:
            self.status.stop()


@app.callback()
def _root(
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Debug logging and full tracebacks.")] = False,
    version: Annotated[bool, typer.Option("--version", help="Print the version and exit.")] = False,
) -> None:
    _State.verbose = verbose
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(VisibleFormatter("%(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.DEBUG if verbose else logging.WARNING, handlers=[handler])
    if not verbose:
        for noisy in ("httpx", "openai", "trafilatura", "htmldate", "charset_normalizer"):
            logging.getLogger(noisy).setLevel(logging.ERROR)
    if version:
        typer.echo(f"research-agent {__version__}")
        raise typer.Exit(0)


@app.command()
def run(
    query: Annotated[str, typer.Argument(help="The question to research (at most 2,000 characters).")],
    quick: Annotated[bool, typer.Option("--quick", help="Fewer sources, no skeptic, no critique.")] = False,
    standard: Annotated[bool, typer.Option("--standard", help="The default mode.")] = False,
    deep: Annotated[bool, typer.Option("--deep", help="More sub-queries and sources, a deeper skeptic.")] = False,
    corpus: Annotated[
        list[Path] | None,
        typer.Option("--corpus", help="A folder of your documents (repeatable). Alone, it means local only."),
    ] = None,
    search: Annotated[
        str | None, typer.Option("--search", help="Search providers, comma-separated: ddgs, searxng, tavily, local.")
    ] = None,
    searxng_url: Annotated[str | None, typer.Option("--searxng-url", help="Base URL of a SearXNG instance.")] = None,
    max_sources: Annotated[
        int | None, typer.Option("--max-sources", help="At most this many sources fetched and scored per plan.")
    ] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Do not read or write the page cache.")] = False,
    allow_private: Annotated[
        bool, typer.Option("--allow-private", help="Allow fetching loopback and private-network addresses.")
    ] = False,
    ignore_robots: Annotated[bool, typer.Option("--ignore-robots", help="Do not check robots.txt.")] = False,
    model: Annotated[str | None, typer.Option("--model", help="Main model (RESEARCH_AGENT_MODEL).")] = None,
    fast_model: Annotated[
        str | None, typer.Option("--fast-model", help="Cheaper model for relevance and critique.")
    ] = None,
    reports_dir: Annotated[
        Path | None, typer.Option("--reports-dir", help="Where reports go (RESEARCH_AGENT_REPORTS_DIR).")
    ] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Also write the report here.")] = None,
    context: Annotated[
        str | None, typer.Option("--context", help="Business context file, or 'none' (default: ./research_context.md).")
    ] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")] = False,
    timeout: Annotated[float | None, typer.Option("--timeout", help="Overall deadline in seconds.")] = None,
    llm_timeout: Annotated[
        float | None,
        typer.Option("--llm-timeout", help="Seconds one model call may take (RESEARCH_AGENT_LLM_TIMEOUT; default 180)."),
    ] = None,
    no_retry: Annotated[bool, typer.Option("--no-retry", help="No replanning and no revision loop.")] = False,
    min_viability: Annotated[
        int | None, typer.Option("--min-viability", help="Replan below this skeptic viability (0-100).")
    ] = None,
    max_plans: Annotated[int | None, typer.Option("--max-plans", help="At most this many plans.")] = None,
    max_revisions: Annotated[int | None, typer.Option("--max-revisions", help="At most this many revisions.")] = None,
    rules: Annotated[Path | None, typer.Option("--rules", help="Custom lint rules (YAML).")] = None,
    no_critique: Annotated[bool, typer.Option("--no-critique", help="Do not critique the report afterwards.")] = False,
    wait_critique: Annotated[
        bool, typer.Option("--wait-critique", help="Wait for the critique and print its summary.")
    ] = False,
    no_lessons: Annotated[
        bool, typer.Option("--no-lessons", help="Run without lessons from past critiques (a baseline run).")
    ] = False,
) -> None:
    """Research QUERY and write reports/<id>.md plus a run record in reports/meta/."""
    if sum((quick, standard, deep)) > 1:
        raise fail(_input_error("choose one of --quick, --standard, --deep"))
    mode = "quick" if quick else "deep" if deep else "standard" if standard else None
    overrides: dict[str, Any] = {
        "mode": mode,
        "corpus_dirs": tuple(corpus) if corpus else None,
        "search_providers": search,
        "searxng_url": searxng_url,
        "max_sources": max_sources,
        "use_cache": False if no_cache else None,
        "allow_private": True if allow_private else None,
        "respect_robots": False if ignore_robots else None,
        "model": model,
        "fast_model": fast_model,
        "reports_dir": reports_dir,
        "output": output,
        "context_path": context,
        "run_timeout": timeout,
        "llm_timeout": llm_timeout,
        "retry": False if no_retry else None,
        "min_viability": min_viability,
        "max_plans": max_plans,
        "max_revisions": max_revisions,
        "rules_path": rules,
        "critique": False if no_critique else None,
        "wait_critique": True if wait_critique else None,
        "lessons": False if no_lessons else None,
    }
    settings = settings_from(overrides)
    progress = RichProgress(stderr)
    try:
        from .pipeline import research

        result = run_async(research(query, settings=settings, progress=progress), interrupted=progress.interrupted)
    except typer.Exit:
        raise
    except Exception as exc:
        raise fail(exc) from None
    finally:
        progress.stop()
    if json_output:
        typer.echo(dumps_json(result.summary()))
    else:
        echo(result.report_path)
        usage = result.total_usage
        stderr.print(
            f"[green]done[/green]: {result.gate_decision}, {sum(1 for s in result.sources if s.n)} sources cited, "
            f"{usage.prompt_tokens + usage.completion_tokens:,} tokens, {cost_text(result.cost_usd)}",
            markup=True,
            highlight=False,
        )
    _after_report(result, settings)


def _input_error(message: str) -> ResearchError:
    from .errors import InputError

    return InputError(message)


def _after_report(result: Any, settings: Settings) -> None:
    """Critique the run once the user has the report: detached, or waited for."""
    if settings.mode.name == "quick" or not settings.critique:
        return
    from .memory import spawn

    if settings.wait_critique:
        from .cli_memory import run_critique_and_report

        try:
            run_critique_and_report(result.run_record_path, settings, console=stderr)
        except KeyboardInterrupt:  # typer would turn it into a silent exit 130
            stderr.print("interrupted: the report is written; its critique was not", soft_wrap=True)
            raise typer.Exit(130) from None
        except Exception as exc:  # the report is already written; a failed critique only logs
            stderr.print(f"[yellow]critique failed:[/yellow] {markup(one_line(exc))}", markup=True, soft_wrap=True)
        return
    try:
        spawn.spawn_critique(result.run_record_path, reports_dir=settings.reports_dir, settings=settings)
    except (OSError, ResearchError) as exc:
        stderr.print(
            f"[yellow]could not start the critique:[/yellow] {markup(one_line(exc))}", markup=True, soft_wrap=True
        )


def _register_subcommands() -> None:
    from . import cli_cache, cli_corpus, cli_doctor, cli_memory, cli_review

    app.add_typer(cli_corpus.app, name="corpus", help="Index and search local document folders.")
    app.add_typer(cli_memory.app, name="memory", help="Inspect and manage stored critiques and lessons.")
    app.add_typer(cli_cache.app, name="cache", help="Manage the on-disk page cache.")
    app.command("critique")(cli_memory.critique_command)
    app.command("review")(cli_review.review_command)
    app.command("doctor")(cli_doctor.doctor_command)


_register_subcommands()


def main() -> None:
    """Entry point of the ``research-agent`` script."""
    try:
        app()
    except KeyboardInterrupt:
        stderr.print("interrupted", soft_wrap=True)
        sys.exit(130)
