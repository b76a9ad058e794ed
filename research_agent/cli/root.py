"""The ``research-agent`` Typer app: the root options, and every command group mounted on it.

Each command lives in its own module of this package and runs inside the one error
boundary (:func:`research_agent.cli.boundary.guarded`). Progress goes to stderr; stdout
carries only what a command prints as its result (a report path, a table, JSON).
"""

from __future__ import annotations

import logging
import sys
from typing import Annotated

import typer

from ..version import __version__
from . import cache, corpus, critique, doctor, mcp, memory, memory_ab, review, run
from .boundary import set_verbose, stderr_console
from .signals import interrupt_exit_code, interrupt_word
from .startup import settle
from .terminal import VisibleFormatter

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

_QUIET_LOGGERS = ("httpx", "openai", "trafilatura", "htmldate", "charset_normalizer")


def _print_version(asked: bool) -> None:
    """``--version``: eager, so it answers before typer asks for a command."""
    if asked:
        typer.echo(f"research-agent {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Debug logging and full tracebacks.")] = False,
    version: Annotated[
        bool,
        typer.Option("--version", help="Print the version and exit.", is_eager=True, callback=_print_version),
    ] = False,
) -> None:
    set_verbose(verbose)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(VisibleFormatter("%(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.DEBUG if verbose else logging.WARNING, handlers=[handler])
    if not verbose:
        for noisy in _QUIET_LOGGERS:
            logging.getLogger(noisy).setLevel(logging.ERROR)


app.command("run")(run.run)
app.command("critique")(critique.critique_command)
app.command("review")(review.review_command)
app.command("doctor")(doctor.doctor_command)
app.command("mcp")(mcp.mcp_command)
app.add_typer(corpus.app, name="corpus", help="Index and search local document folders.")
# ``memory ab`` lives in its own module, which uses cli/memory's MemoryDeps: registered here, not
# in cli/memory.py, so that the two modules do not import each other.
memory.app.command("ab")(memory_ab.ab_command)
app.add_typer(memory.app, name="memory", help="Inspect and manage stored critiques and lessons.")
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
