"""The ``research-agent`` Typer app: the root options, and every command group mounted on it
(:data:`COMMANDS`, each loaded when it is used: ``--help`` and ``--version`` load none).

Each command lives in its own module of this package and runs inside the one error
boundary (:func:`research_agent.cli.boundary.guarded`). Progress goes to stderr; stdout
carries only what a command prints as its result (a report path, a table, JSON).

The root group (:class:`_Root`) also makes the command line behave alike everywhere:
``-v``/``-vv`` may follow the subcommand (:func:`research_agent.cli.usage.hoist_verbose`),
help shows metavars a person reads (:func:`research_agent.cli.usage.tidy_help`), a usage
error is one line with typer's suggestion kept (plus one JSON object on stdout for ``--json``),
and output whose reader closed the pipe early (``| head``) ends quietly
(:func:`research_agent.cli.boundary.pipe_closed`), help included.
"""

from __future__ import annotations

import importlib
import logging
import sys
from collections.abc import Sequence
from difflib import get_close_matches
from typing import Annotated, Any, NamedTuple

import typer
from typer.core import TyperCommand, TyperGroup

from ..interrupts import interrupt_exit_code, interrupt_word
from .boundary import pipe_closed, set_verbose, stderr_console
from .startup import importing, settle
from .terminal import VisibleFormatter
from .usage import ClickException, UsageError, hoist_verbose, tidy_help, usage_error

__all__ = ["app", "main"]

_QUIET_LOGGERS = ("httpx", "httpcore", "openai", "trafilatura", "htmldate", "charset_normalizer", "asyncio",
                  "markdown_it", "urllib3", "primp", "mcp")  # fmt: skip


class _Command(NamedTuple):
    """A command of the root group: where it lives, its help's first paragraph (tests/test_startup.py
    holds the two the same), and the one whole sentence ``--help`` lists it with."""

    module: str  # a module of this package
    attribute: str  # its command function, or its Typer app for a group
    summary: str
    short: str  # fits the listing's line at 80 columns: click would cut a longer one mid-phrase
    group: bool = False


# Every command, loaded only when it is run or asked for its own help: ``--help`` and ``--version``
# import none of them (nor the pipeline, the model client or the memory store behind them).
COMMANDS: dict[str, _Command] = {
    "run": _Command("run", "run", "Research QUERY and write reports/<id>.md plus a run record in reports/meta/\n"
                    "(and, with --format html|pdf, reports/<id>.html or .pdf, or --output in that format).",
                    "Research a question and write a cited report."),
    "plan": _Command("plan", "plan_command", "Plan QUESTION as a run would (the domain and the sub-queries, the planning lessons in the prompt),\n"
                     "search nothing, and print the plan; --json prints it as JSON, --output FILE writes it there, for\n"
                     "you to edit and give to `research-agent run --plan FILE`.",
                     "Plan a question's searches, for you to review or edit."),
    "batch": _Command("batch", "batch_command", "Research every question of FILE (reports/<id>.md each), critique each report as it finishes,\n"
                      "and write the batch page reports/batch-<id>.md; the state in reports/meta/batch-<id>.yaml lets\n"
                      "the same command (or --resume ID) continue where it stopped.",
                      "Research every question of a file, resumably."),
    "runs": _Command("runs", "runs_command", "List the run journal, newest first: every run from its start (running, done, failed, cancelled,\n"
                     "or interrupted when its process died), and how to resume one (run --resume ID).",
                     "List every run from its start, and resume one."),
    "critique": _Command("critique", "critique_command",
                         "Critique a finished run and store reports/meta/critique-<id>.yaml next to its record.",
                         "Critique a finished run and store the critique."),
    "review": _Command("review", "review_command",
                       "Lint a markdown report: exit 0 when it would be approved, 1 when rejected.",
                       "Lint a markdown report (exit 1 when rejected)."),
    "export": _Command("export", "export_command", "Export a report as one self-contained HTML page whose "
                       "citations preview their passage, or as PDF.", "Export a report as one HTML page, or as PDF."),
    "doctor": _Command("doctor", "doctor_command", "Check settings, the model endpoint, folders, search providers "
                       "and optional extras; exit 1 if\nsomething is wrong.", "Check the settings, the model endpoint and the folders."),
    "mcp": _Command("servers", "mcp_command",
                    "Serve research, review and memory as MCP tools over stdio (or --http PORT).",
                    "Serve research, review and memory as MCP tools."),
    "serve": _Command("servers", "serve_command", "Serve the research workbench in your browser: ask, watch a run, "
                      "read reports, see what the memory learned.", "Serve the research workbench in your browser."),
    "eval": _Command("eval", "app", "Quality measured against ground truth: research every question of a world with known answers,\n"
                     "grade each report by program, and compare evals.", "Grade reports against a world with known answers.",
                     group=True),
    "corpus": _Command("corpus", "app", "Index and search local document folders.",
                       "Index and search local document folders.", group=True),
    "memory": _Command("memory", "app", "Stored critiques and lessons: list, show, retry, lessons, effects, stats "
                       "(memory stats --plot FILE draws the score history), validate, prune, ab.",
                       "See the stored critiques and what the memory learned.", group=True),
    "cache": _Command("cache", "app", "Manage the on-disk page cache.", "Manage the on-disk page cache.", group=True),
}  # fmt: skip


def load_command(name: str) -> Any:
    """The click command ``name`` of :data:`COMMANDS`, built as typer builds a mounted one."""
    spec = COMMANDS[name]
    with importing():
        module = importlib.import_module(f"{__package__}.{spec.module}")
    one = typer.Typer(rich_markup_mode=None, add_completion=False, pretty_exceptions_enable=False)
    one.callback()(lambda: None)  # a group, so that the command keeps its name
    if spec.group:
        one.add_typer(getattr(module, spec.attribute), name=name, help=spec.summary)
    else:
        one.command(name)(getattr(module, spec.attribute))
    command = typer.main.get_group(one).commands[name]
    command.short_help = spec.short
    tidy_help(command)
    return command


class _Root(TyperGroup):
    """The root group: global options anywhere, readable help, one-line usage errors, and its
    commands (:data:`COMMANDS`) loaded on first use."""

    _listing = False  # while --help lists the commands: their summaries, nothing loaded

    def list_commands(self, ctx: Any) -> list[str]:
        return [*COMMANDS, *(name for name in super().list_commands(ctx) if name not in COMMANDS)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in COMMANDS or cmd_name in self.commands:
            return super().get_command(ctx, cmd_name)
        if self._listing:
            return TyperCommand(cmd_name, help=COMMANDS[cmd_name].summary, short_help=COMMANDS[cmd_name].short)
        self.commands[cmd_name] = load_command(cmd_name)
        return self.commands[cmd_name]

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        try:
            return super().resolve_command(ctx, args)
        except UsageError as exc:  # typer suggests only among the loaded commands: suggest among all
            matches = get_close_matches(args[0], list(COMMANDS)) if args else []
            if matches and "Did you mean" not in exc.message:
                exc.message = f"{exc.message.rstrip('.')}. Did you mean {', '.join(map(repr, matches))}?"
            raise

    def make_context(self, info_name: str | None, args: list[str], parent: Any = None, **extra: Any) -> Any:
        try:  # the root's --help is printed here
            return super().make_context(info_name, args, parent=parent, **extra)
        except BrokenPipeError:
            raise pipe_closed() from None

    def invoke(self, ctx: Any) -> Any:
        try:  # a command's --help, and whatever a command prints outside its boundary
            return super().invoke(ctx)
        except BrokenPipeError:
            raise pipe_closed() from None

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        self._listing = True
        try:
            super().format_commands(ctx, formatter)
        finally:
            self._listing = False

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, windows_expand_args: bool = True, **extra: Any) -> Any:  # fmt: skip
        given = hoist_verbose(list(sys.argv[1:] if args is None else args))
        tidy_help(self)
        try:
            code = super().main(args=given, prog_name=prog_name or "research-agent", complete_var=complete_var,
                                standalone_mode=False, windows_expand_args=windows_expand_args, **extra)  # fmt: skip
        except ClickException as exc:
            code = usage_error(exc, json_output="--json" in given)
        if standalone_mode:
            sys.exit(code if isinstance(code, int) else 0)
        return code


app = typer.Typer(
    name="research-agent",
    cls=_Root,
    rich_markup_mode=None,
    help=(
        "Research a question over the web or your own documents and write a cited markdown report.\n\n"
        "Configure a model endpoint first: OPENAI_API_KEY for OpenAI, or OPENAI_BASE_URL for any "
        "OpenAI-compatible server (e.g. http://localhost:11434/v1 for Ollama); `research-agent doctor` "
        "checks the setup."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _print_version(asked: bool) -> None:
    """``--version``: eager, so it answers before typer asks for a command."""
    if asked:
        from ..version import __version__  # the package metadata, read only when asked

        typer.echo(f"research-agent {__version__}")
        raise typer.Exit(0)


def configure_logging(verbosity: int) -> None:
    """``-v``: research_agent's own debug lines; ``-vv``: every library's too; else warnings only
    (and the chattiest libraries only their errors)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(VisibleFormatter("%(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.DEBUG if verbosity >= 2 else logging.WARNING, handlers=[handler])
    logging.getLogger("research_agent").setLevel(logging.DEBUG if verbosity >= 1 else logging.NOTSET)
    if verbosity < 2:
        for noisy in _QUIET_LOGGERS:
            logging.getLogger(noisy).setLevel(logging.ERROR)


@app.callback()
def _root(
    verbose: Annotated[
        int,
        typer.Option(
            "--verbose", "-v", count=True,
            help="-v: debug lines and full tracebacks; -vv: the libraries' debug lines too. Before or after the command.",
        ),
    ] = 0,
    version: Annotated[
        bool,
        typer.Option("--version", help="Print the version and exit.", is_eager=True, callback=_print_version),
    ] = False,
) -> None:
    set_verbose(verbose > 0)
    configure_logging(verbose)


def main() -> None:
    """Entry point of the ``research-agent`` script."""
    settle()
    try:
        app()
    except KeyboardInterrupt:
        stderr_console().print(interrupt_word(), soft_wrap=True)
        sys.exit(interrupt_exit_code())
    finally:
        settle()
