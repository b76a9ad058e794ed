"""The CLI's one error boundary: every command runs inside :func:`guarded`.

A :class:`~research_agent.errors.ResearchError` becomes ``error: <message>`` on one line
of stderr and the error's exit code. Any other exception becomes ``error: unexpected
<Type>: <message> (run with -v for details)`` and exit 1, or its traceback with ``-v``.
Ctrl-C while a coroutine runs (:func:`run_async`) becomes one line and exit 130 (SIGTERM:
the same path, exit 143). A reader that closed the pipe early (``memory show latest | head``)
ends the command quietly (:func:`pipe_closed`): nothing more is written and the exit status is
141, as for a Unix tool stopped by SIGPIPE. Typer's own exits (``typer.Exit``, usage errors) pass
through untouched.
"""

from __future__ import annotations

import errno
import functools
import os
import sys
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import typer
from rich.console import Console

from ..errors import ResearchError, error_message
from ..interrupts import interrupt_exit_code, interrupt_word, run_interruptibly
from .terminal import dumps_json, markup, visible_line

__all__ = ["guarded", "exit_for", "print_error", "run_async", "set_verbose", "json_error", "json_failures",
           "pipe_closed", "PIPE_CLOSED", "console"]  # fmt: skip

Command = TypeVar("Command", bound=Callable[..., Any])

# typer's own ways out of a command (usage errors are raised before a command runs)
_PASS_THROUGH = (typer.Exit, typer.Abort, typer.BadParameter)
PIPE_CLOSED = 128 + 13  # the status of a process that SIGPIPE stopped (`yes | head`)


class _State:
    verbose = False  # set by the root command's -v: tracebacks instead of one line


def set_verbose(verbose: bool) -> None:
    """Whether an unexpected exception prints its traceback (``-v``) or one line."""
    _State.verbose = verbose


class _Console(Console):
    """A rich console whose closed pipe reaches the boundary (:func:`pipe_closed`): rich's own
    answer is a bare exit 1."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError(errno.EPIPE, "the reader closed the pipe")


def console(**options: Any) -> Console:
    """A rich console for a command's output (``Console``'s options), quiet on a closed pipe."""
    return _Console(**options)


def stderr_console() -> Console:
    """A console on the current stderr (made when needed, so a test's captured stderr is used)."""
    return console(stderr=True, highlight=False, emoji=False)


def print_error(message: object) -> None:
    """``error: <message>`` on one line of stderr, the message shown literally."""
    stderr_console().print(f"[red]error:[/red] {markup(visible_line(message))}", markup=True, soft_wrap=True)


def json_error(message: str, exit_code: int) -> None:
    """The one JSON object a ``--json`` command prints on stdout when it fails."""
    typer.echo(dumps_json({"error": visible_line(message), "exit_code": exit_code}))


@contextmanager
def json_failures(enabled: bool) -> Iterator[None]:
    """With ``--json``, a failure inside the block also prints :func:`json_error` on stdout (stderr
    keeps its one line), so that stdout always holds exactly one JSON object."""
    if not enabled:
        yield
        return
    try:
        yield
    except typer.Exit as exc:
        if exc.exit_code:
            json_error("interrupted" if exc.exit_code == 130 else "failed (see stderr)", exc.exit_code)
        raise
    except Exception as exc:
        json_error(error_message(exc), exc.exit_code if isinstance(exc, ResearchError) else 1)
        raise


def _output_gone() -> bool:
    """Whether stdout or stderr is a pipe whose reader has gone (``poll`` says so); True where that
    cannot be asked (no file behind the stream, no ``poll``)."""
    try:
        import select

        poller = select.poll()
        for stream in (sys.stdout, sys.stderr):
            poller.register(stream.fileno(), select.POLLOUT)
        return any(event & (select.POLLERR | select.POLLHUP) for _, event in poller.poll(0))
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both
        return True


def pipe_closed() -> typer.Exit:
    """The quiet end of a command whose reader closed stdout (``| head``): what is still buffered,
    and anything written from now on, goes nowhere (the interpreter's last flush would fail
    again); return the Exit to raise, :data:`PIPE_CLOSED`."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # the closed pipe itself, or a stream already closed
            try:
                sink = os.open(os.devnull, os.O_WRONLY)
                os.dup2(sink, stream.fileno())
                os.close(sink)
            except (OSError, ValueError, AttributeError):  # no file behind it (a test's capture)
                pass
    return typer.Exit(PIPE_CLOSED)


def exit_for(exc: BaseException) -> typer.Exit:
    """Tell the user about ``exc`` and return the Exit to raise: the error's code, or 1."""
    if isinstance(exc, ResearchError):
        print_error(error_message(exc))
        return typer.Exit(exc.exit_code)
    if _State.verbose:
        traceback.print_exception(exc)
    else:
        print_error(error_message(exc))
    return typer.Exit(1)


def guarded(command: Command) -> Command:
    """Run ``command`` inside the boundary. Every CLI command is decorated with it."""

    @functools.wraps(command)
    def boundary(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except _PASS_THROUGH:
            raise
        except BrokenPipeError as exc:  # the reader of our output left, or some other pipe broke
            raise (pipe_closed() if _output_gone() else exit_for(exc)) from None
        except Exception as exc:
            raise exit_for(exc) from None

    return boundary  # type: ignore[return-value]  # wraps() keeps the signature


def run_async(coro: Any, *, interrupted: Callable[[], str] | None = None) -> Any:
    """Run a coroutine; Ctrl-C becomes a one-line message (``interrupted()``) and exit code 130,
    SIGTERM the same line beginning "terminated" and exit code 143 (see :mod:`research_agent.interrupts`)."""
    try:
        return run_interruptibly(coro)
    except KeyboardInterrupt:
        message = interrupted() if interrupted else "interrupted: stopped before writing anything"
        if message.startswith("interrupted"):
            message = interrupt_word() + message.removeprefix("interrupted")
        stderr_console().print(markup(message), soft_wrap=True)
        raise typer.Exit(interrupt_exit_code()) from None
