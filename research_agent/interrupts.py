"""Ctrl-C and SIGTERM: one way out, the same cleanup, one line, exit 130 or 143.

``timeout``, ``docker stop``, systemd and CI cancellation stop a program with SIGTERM, whose
default kills the process where it stands: no partial file is cleaned up, no finished work
(the pairs of ``memory ab``) is saved. :func:`install` makes SIGTERM do exactly what Ctrl-C
does at that moment, whatever handles Ctrl-C then: the event loop of
:func:`run_interruptibly` (which cancels the main task, so every ``finally`` and ``except
asyncio.CancelledError`` runs), or Python's default (``KeyboardInterrupt``, which every
``except KeyboardInterrupt`` of the CLI catches). The command line then exits 143 (128 +
SIGTERM) where Ctrl-C exits 130.

:func:`run_interruptibly` is ``asyncio.run`` with one difference: Ctrl-C and SIGTERM reach
the main task through the event loop (``loop.add_signal_handler``), not from inside a Python
signal handler. ``asyncio.run`` cancels the main task in its handler, that is between any two
bytecodes of whatever was running; when that was a library completing the very future the
cancel reaches (anyio's ``data_received`` sets an event whose waiter it has just seen
pending), the library fails with ``InvalidStateError`` and asyncio prints a traceback under
the one line. Through the loop the cancel lands between callbacks, where nothing is half
done. The contract stays ``asyncio.run``'s: the main task is cancelled, its cleanup runs,
then ``KeyboardInterrupt`` is raised; a second Ctrl-C during the cleanup raises it at once.

Imports nothing heavy: :func:`research_agent.cli.main` installs it first thing, so a SIGTERM
during start-up is one line too. :func:`sigterm_as_ctrl_c` does the same for one block, for a
command run in-process (tests, embedding).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import asyncio

__all__ = [
    "install",
    "sigterm_as_ctrl_c",
    "run_interruptibly",
    "terminated",
    "interrupt_exit_code",
    "interrupt_word",
]

T = TypeVar("T")

INTERRUPTED, TERMINATED = 130, 143


class _State:
    terminated = False


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    _State.terminated = True
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler):  # asyncio's runner, or Python's default_int_handler
        handler(signal.SIGINT, frame)
        return
    raise KeyboardInterrupt  # SIGINT ignored (a background job): still the same way out


def install() -> None:
    """From now on, SIGTERM in this process is handled as Ctrl-C (main thread only)."""
    signal.signal(signal.SIGTERM, _on_sigterm)


@contextmanager
def sigterm_as_ctrl_c() -> Iterator[None]:
    """SIGTERM handled as Ctrl-C inside the block (main thread only); afterwards the handler
    that was there before, and no SIGTERM remembered."""
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
        _State.terminated = False


def terminated() -> bool:
    """Whether a SIGTERM arrived."""
    return _State.terminated


def interrupt_exit_code() -> int:
    """The exit code of a command stopped by Ctrl-C (130) or SIGTERM (143)."""
    return TERMINATED if _State.terminated else INTERRUPTED


def interrupt_word() -> str:
    """"terminated" after a SIGTERM, else "interrupted": the first word of the one line."""
    return "terminated" if _State.terminated else "interrupted"


class _Stopped(Exception):
    """The main task ended cancelled by Ctrl-C or SIGTERM: raised out of the loop, then turned
    into ``KeyboardInterrupt`` (which a task must not raise itself)."""


def run_interruptibly(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to the end in a new event loop, as ``asyncio.run`` does; Ctrl-C (unless
    ignored) and SIGTERM (when :func:`install` made it Ctrl-C) cancel it from inside the loop,
    and ``KeyboardInterrupt`` is raised once it has ended (see the module docstring). Off the
    main thread, where no signal arrives, it is ``asyncio.run``."""
    import asyncio

    if threading.current_thread() is not threading.main_thread():
        return asyncio.run(coro)
    taken = []  # looked at before asyncio.run puts its own Ctrl-C handler in
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        taken.append(signal.SIGINT)
    if signal.getsignal(signal.SIGTERM) is _on_sigterm:
        taken.append(signal.SIGTERM)
    try:
        return asyncio.run(_interruptible(coro, tuple(taken)))
    except _Stopped:
        raise KeyboardInterrupt from None


async def _interruptible(coro: Coroutine[Any, Any, T], taken: tuple[signal.Signals, ...]) -> T:
    import asyncio

    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None  # run by asyncio.run, so inside its main task
    stopped: list[int] = []

    def stop(signum: int) -> None:
        if signum == signal.SIGTERM:
            _State.terminated = True
        stopped.append(signum)
        _give_back(loop, taken)  # a second signal takes Python's way: KeyboardInterrupt at once
        task.cancel()

    try:
        for signum in taken:
            loop.add_signal_handler(signum, stop, signum)
    except (NotImplementedError, RuntimeError, ValueError):  # a loop without signal support (Windows)
        _give_back(loop, taken)
        taken = ()  # asyncio.run's own Ctrl-C handler stays in place
    try:
        return await coro
    except asyncio.CancelledError:
        if stopped and task.uncancel() == 0:
            raise _Stopped from None
        raise
    finally:
        if not stopped:
            _give_back(loop, taken)


def _give_back(loop: asyncio.AbstractEventLoop, taken: tuple[signal.Signals, ...]) -> None:
    """Hand the ``taken`` signals back: Ctrl-C to Python's ``KeyboardInterrupt``, SIGTERM to :func:`install`'s handler."""
    for signum in taken:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.remove_signal_handler(signum)  # SIGINT: asyncio puts default_int_handler back
    if signal.SIGTERM in taken:
        signal.signal(signal.SIGTERM, _on_sigterm)
