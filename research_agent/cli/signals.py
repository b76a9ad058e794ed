"""SIGTERM takes the Ctrl-C path: the same cleanup, one line, exit 143 instead of 130.

``timeout``, ``docker stop``, systemd and CI cancellation stop a program with SIGTERM, whose
default kills the process where it stands: no partial file is cleaned up, no finished work
(the pairs of ``memory ab``) is saved. :func:`install` makes SIGTERM do exactly what Ctrl-C
does at that moment, whatever handles Ctrl-C then: asyncio's runner (which cancels the main
task, so every ``finally`` and ``except asyncio.CancelledError`` runs), or Python's default
(``KeyboardInterrupt``, which every ``except KeyboardInterrupt`` of the CLI catches). The
command line then exits 143 (128 + SIGTERM) where Ctrl-C exits 130.

Imports nothing heavy: :func:`research_agent.cli.main` installs it first thing, so a SIGTERM
during start-up is one line too. :func:`sigterm_as_ctrl_c` does the same for one block, for a
command run in-process (tests, embedding).
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

__all__ = ["install", "sigterm_as_ctrl_c", "terminated", "interrupt_exit_code", "interrupt_word"]

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
