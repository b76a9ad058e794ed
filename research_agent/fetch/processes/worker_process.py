"""What runs inside one extraction worker process (:mod:`.workers` drives them).

A worker says it is ready, then runs one job at a time until it is told to stop. After
each job it hands freed heap back to the system: lxml and trafilatura leave tens of MB
of freed but held heap after a big page (about 110 MB of RSS against 60 MB after
glibc's ``malloc_trim``, over the Python docs), and several workers held all of it. A
worker still bigger than its limit after that retires, and a fresh one replaces it.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import resource
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["Failed", "worker_main", "CRASHED", "TIMED_OUT", "RAISED", "UNAVAILABLE"]

CRASHED, TIMED_OUT, RAISED, UNAVAILABLE = "crashed", "timed_out", "raised", "unavailable"
_TRIM_ABOVE_MB = 8  # growth since the worker was ready that is worth a trim (about 1 ms)


@dataclass(frozen=True)
class Failed:
    """Why a job gave no result: ``reason`` is CRASHED, TIMED_OUT, RAISED or UNAVAILABLE
    (no worker process could be started: the caller may run the job itself)."""

    reason: str
    detail: str = ""


def _rss_mb() -> float:
    """This process's resident set now (Linux), else its peak."""
    try:
        with open("/proc/self/statm", "rb") as handle:
            return int(handle.read().split()[1]) * resource.getpagesize() / (1024 * 1024)
    except (OSError, ValueError, IndexError):
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak / (1024 * 1024 if sys.platform == "darwin" else 1024)


def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or None where the C library has none (musl, macOS)."""
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


class _Memory:
    """A worker's memory between jobs: trimmed when it grew, and whether it is too big."""

    def __init__(self, limit_mb: float) -> None:
        self.limit_mb = limit_mb
        self._trim = _malloc_trim()
        self._settled = _rss_mb()

    def too_big_after_job(self) -> bool:
        rss = _rss_mb()
        if self._trim is not None and rss > self._settled + _TRIM_ABOVE_MB:
            self._trim(0)
            rss = _rss_mb()
        return rss > self.limit_mb


def _send(conn: Any, message: Any) -> bool:
    """Send ``message`` to the parent; False when it has gone (Ctrl-C or SIGTERM while the pool
    starts closes its end): the worker then ends quietly, never with a BrokenPipeError traceback."""
    try:
        conn.send(message)
    except (BrokenPipeError, ConnectionResetError, EOFError):
        return False
    return True


def worker_main(conn: Any, fn: Callable[..., Any], max_worker_mb: float, preload: tuple[str, ...]) -> None:
    """A worker's life: say it is ready, then run jobs until told to stop or too big."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    for name in preload:  # already there when the fork server preloaded them
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    memory = _Memory(max_worker_mb)
    if not _send(conn, None):
        return
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        if job is None:
            return
        args, kwargs = job
        try:
            result = fn(*args, **kwargs)
        except Exception as exc:  # one bad document costs one job
            result = Failed(RAISED, f"{type(exc).__name__}: {exc}"[:200])
        retire = memory.too_big_after_job()
        try:
            sent = _send(conn, (result, retire))
        except Exception as exc:  # an answer that cannot be pickled
            sent = _send(conn, (Failed(RAISED, f"unsendable result: {type(exc).__name__}"), retire))
        if retire or not sent:
            return
