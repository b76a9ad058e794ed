"""The ``research-agent`` command line: one module per command group.

* :mod:`.root`      the root app (``-v``, ``--version``, logging) with every group mounted
* :mod:`.run`       ``run``: options to settings, the run with progress, the result, the critique asked for
  (:mod:`.run_options`: the options themselves, shared with ``memory ab``)
* :mod:`.plan`      ``plan``, and ``run --plan FILE`` / ``run --review-plan`` (a package: the terminal review)
* :mod:`.critique`  ``critique``, and how a run's critique is told
* :mod:`.review`    ``review``: lint any markdown report
* :mod:`.export`    ``export``: a report as one HTML page or PDF (and ``run --format``'s step after the run)
* :mod:`.memory`    ``memory list|show|lessons|effects|validate|prune|stats|ab``: a package, one module per family
* :mod:`.batch`     ``batch FILE``, and :mod:`.eval` ``eval run|compare``: packages (the work is
  :mod:`research_agent.batch`'s and :mod:`research_agent.eval`'s)
* :mod:`.mcp`       ``mcp``: the MCP server's options (the server is :mod:`research_agent.mcp_server`)
* :mod:`.corpus`    ``corpus index|search``;  :mod:`.cache`  ``cache clear``;  :mod:`.doctor`  ``doctor``
* :mod:`.boundary`  the one error boundary every command runs in (SIGTERM as Ctrl-C: :mod:`research_agent.interrupts`)
* :mod:`.progress`  the progress line;  :mod:`.terminal`  printing outside text inertly

The console script is ``research_agent.cli:main``; ``python -m research_agent`` runs it too.

Importing this package loads none of the commands: :func:`main` and :data:`app` load them
on first use. A process started by :mod:`multiprocessing` (an extraction worker) imports
its parent's main module, which for the console script is ``from research_agent.cli import
main``; that must not cost it the whole command line (typer, rich, every command).
"""

from __future__ import annotations

import sys
from typing import Any

from .. import interrupts
from .startup import importing

__all__ = ["app", "main"]


def _root() -> Any:
    with importing():
        from . import root

    return root


def main() -> None:
    """Entry point of the ``research-agent`` script.

    Ctrl-C or SIGTERM at any moment, start-up included, ends in one line and exit 130 or 143."""
    interrupts.install()
    try:
        _root().main()
    except KeyboardInterrupt:  # before the command line's own boundary was there to catch it
        sys.stderr.write(f"{interrupts.interrupt_word()}\n")
        sys.exit(interrupts.interrupt_exit_code())
    except SystemExit as exc:
        if exc.code == interrupts.INTERRUPTED and interrupts.terminated():
            sys.exit(interrupts.TERMINATED)  # every "exit 130 on Ctrl-C" of a command is 143 on SIGTERM
        raise


def __getattr__(name: str) -> Any:
    if name == "app":  # the Typer app, for tests and for embedding
        return _root().app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
