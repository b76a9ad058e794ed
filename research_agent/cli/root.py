"""The ``research-agent`` Typer app: the root options, and every command group mounted on it.

Each command lives in its own module of this package and runs inside the one error
boundary (:func:`research_agent.cli.boundary.guarded`). Progress goes to stderr; stdout
carries only what a command prints as its result (a report path, a table, JSON).

The root group (:class:`_Root`) also makes the command line behave alike everywhere:
``-v``/``-vv`` may follow the subcommand (:func:`research_agent.cli.usage.hoist_verbose`),
help shows metavars a person reads (:func:`research_agent.cli.usage.tidy_help`), and a usage
error is one line with typer's suggestion kept (plus one JSON object on stdout for ``--json``).
"""

from __future__ import annotations

import logging
import sys
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from ..interrupts import interrupt_exit_code, interrupt_word
from ..version import __version__
from . import cache, corpus, critique, doctor, export, memory, review, run, servers
from .boundary import set_verbose, stderr_console
from .startup import settle
from .terminal import VisibleFormatter
from .usage import ClickException, hoist_verbose, tidy_help, usage_error

__all__ = ["app", "main"]

_QUIET_LOGGERS = ("httpx", "httpcore", "openai", "trafilatura", "htmldate", "charset_normalizer", "asyncio",
                  "markdown_it", "urllib3", "primp", "mcp")  # fmt: skip


class _Root(TyperGroup):
    """The root group: global options anywhere, readable help, one-line usage errors."""

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:  # fmt: skip
        given = hoist_verbose(list(sys.argv[1:] if args is None else args))
        tidy_help(self)
        try:
            code = super().main(args=given, prog_name=prog_name or "research-agent", complete_var=complete_var,
                                standalone_mode=False, **extra)  # fmt: skip
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


app.command("run")(run.run)
app.command("critique")(critique.critique_command)
app.command("review")(review.review_command)
app.command("export")(export.export_command)
app.command("doctor")(doctor.doctor_command)
app.command("mcp")(servers.mcp_command)
app.command("serve")(servers.serve_command)
app.add_typer(corpus.app, name="corpus", help="Index and search local document folders.")
app.add_typer(
    memory.app,
    name="memory",
    help="Stored critiques and lessons: list, show, retry, lessons, effects, stats (memory stats --plot FILE "
    "draws the score history), validate, prune, ab.",
)
app.add_typer(cache.app, name="cache", help="Manage the on-disk page cache.")


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
