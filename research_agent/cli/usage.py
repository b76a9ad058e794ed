"""The command line's manners: global options anywhere, help a person reads, one-line usage errors.

* :func:`hoist_verbose` moves ``-v``/``-vv``/``--verbose`` given after a subcommand to the front,
  where the root group reads them (``run "..." -v`` works as the README shows it).
* :func:`tidy_help` gives every option a metavar a person understands (``N``, ``SECONDS``,
  ``DIR``...) instead of a Python type (``<list[Path]>``), and flags none at all; and every
  subcommand a summary that is a whole sentence (:func:`first_sentence`), never one cut mid-phrase.
* :func:`usage_error` prints a usage error as one line, typer's suggestion kept ("Did you mean
  'memory'?"), and for a ``--json`` command also the one JSON object its stdout promises.
"""

from __future__ import annotations

import functools
import re
import sys
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperArgument, TyperOption

from ..text.controls import one_line
from .boundary import json_error, print_error

__all__ = ["hoist_verbose", "tidy_help", "first_sentence", "usage_error", "ClickException", "UsageError"]

# typer ships its own click: its exception classes, reached through the public BadParameter
if TYPE_CHECKING:  # the same classes, where the type checker finds them
    from typer._click.exceptions import ClickException, UsageError
else:
    ClickException = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")
    UsageError = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")

_VERBOSE = {"-v": 1, "-vv": 2, "-vvv": 3, "--verbose": 1}
_TYPE_METAVARS = {"int": "N", "float": "NUMBER", "Path": "PATH", "str": "TEXT"}


def hoist_verbose(args: list[str]) -> list[str]:
    """``args`` with every verbosity flag (before a ``--``) moved to the front, in order."""
    end = args.index("--") if "--" in args else len(args)
    flags = [a for a in args[:end] if a in _VERBOSE]
    rest = [a for a in args[:end] if a not in _VERBOSE]
    return [*flags, *rest, *args[end:]]


def _no_type(ctx: Any) -> None:
    return None


def _tidy_params(command: Any) -> None:
    for param in command.params:
        if isinstance(param, TyperArgument):
            if param.metavar is None and param.name:
                param.metavar = param.name.upper()
            param.display_type_rich = _no_type  # type: ignore[method-assign]  # QUERY, not "QUERY <str>"
        elif isinstance(param, TyperOption) and param.metavar is None:
            if param.is_flag or param.count:
                param.metavar = ""
            else:
                bare = param.bare_type().removeprefix("list[").removesuffix("]")
                param.metavar = _TYPE_METAVARS.get(bare, bare.upper())


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(])")


def first_sentence(help_text: str) -> str:
    """The first sentence of a help text's first paragraph, whole (click would cut it mid-phrase
    to fit a listing's column; a whole sentence wraps instead)."""
    paragraph = one_line(help_text.split("\n\n")[0])
    return _SENTENCE_END.split(paragraph, maxsplit=1)[0]


def _options_in_panels(command: Any, ctx: Any, formatter: Any) -> None:
    """``command``'s arguments and options as rich panels, one for each ``rich_help_panel`` its
    options name, in the order they come (any other option under "Options", typer's name). Drawn
    here with rich's Panel and Table: typer's own rich help costs its import of rich's markdown and
    traceback modules, tens of milliseconds that every ``--help`` would pay."""
    import io

    from rich import box
    from rich.console import Console
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    panels: dict[str, list[tuple[str, str]]] = {}
    for param in command.get_params(ctx):
        record = param.get_help_record(ctx)
        if record is not None:
            title = "Arguments" if param.param_type_name == "argument" else param.rich_help_panel or "Options"
            panels.setdefault(title, []).append(record)
    out = io.StringIO()
    unicode = (getattr(sys.stdout, "encoding", "") or "").lower().replace("-", "").startswith("utf")
    console = Console(file=out, width=max(formatter.width, 40), color_system=None, highlight=False, emoji=False)
    for title, rows in panels.items():
        table = Table.grid(padding=(0, 2))
        table.add_column(no_wrap=True)
        table.add_column(ratio=1)
        for name, text in rows:
            table.add_row(Text(name), Text(text))
        console.print(Panel(table, title=title, title_align="left", box=box.ROUNDED if unicode else box.ASCII))
    formatter.write_paragraph()
    formatter.write(out.getvalue())


def tidy_help(command: Any) -> None:
    """Give every parameter of ``command`` and its subcommands a readable metavar, every
    subcommand without a summary of its own its help's first sentence as one, and a command whose
    options name help panels (typer's ``rich_help_panel``) its options in those panels (once)."""
    if getattr(command, "_research_agent_tidy", False):
        return
    _tidy_params(command)
    if any(getattr(param, "rich_help_panel", None) for param in command.params):
        command.format_options = functools.partial(_options_in_panels, command)
    for sub in getattr(command, "commands", {}).values():
        if not sub.short_help and sub.help:
            sub.short_help = first_sentence(sub.help)
        tidy_help(sub)
    command._research_agent_tidy = True


def usage_error(exc: Any, *, json_output: bool = False) -> int:
    """Print a usage error (a ClickException) as one line, and for ``--json`` as the JSON object;
    return its exit code."""
    message = exc.format_message().rstrip(".")
    context = getattr(exc, "ctx", None)
    if isinstance(exc, UsageError) and context is not None:
        message += f" (see: {context.command_path} --help)"
    if json_output:
        json_error(message, exc.exit_code)
    print_error(message)
    return exc.exit_code
