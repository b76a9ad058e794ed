"""The command line's manners: global options anywhere, help a person reads, one-line usage errors.

* :func:`hoist_verbose` moves ``-v``/``-vv``/``--verbose`` given after a subcommand to the front,
  where the root group reads them (``run "..." -v`` works as the README shows it).
* :func:`tidy_help` gives every option a metavar a person understands (``N``, ``SECONDS``,
  ``DIR``...) instead of a Python type (``<list[Path]>``), and flags none at all.
* :func:`usage_error` prints a usage error as one line, typer's suggestion kept ("Did you mean
  'memory'?"), and for a ``--json`` command also the one JSON object its stdout promises.
"""

from __future__ import annotations

from typing import Any

import typer
from typer.core import TyperArgument, TyperOption

from .boundary import json_error, print_error

__all__ = ["hoist_verbose", "tidy_help", "usage_error", "ClickException", "UsageError"]

# typer ships its own click: its exception classes, reached through the public BadParameter
ClickException: type[Exception] = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")
UsageError: type[Exception] = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")

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


def tidy_help(command: Any) -> None:
    """Give every parameter of ``command`` and its subcommands a readable metavar (once)."""
    if getattr(command, "_research_agent_tidy", False):
        return
    _tidy_params(command)
    for sub in getattr(command, "commands", {}).values():
        tidy_help(sub)
    command._research_agent_tidy = True  # type: ignore[attr-defined]


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
