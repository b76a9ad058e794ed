"""Stand-ins for the extractor and helpers for the extraction pool's tests.

The functions are module-level because they run in worker processes. A function
meant to crash or hang does so only inside a worker: called in the test process by
mistake, it raises instead, so a broken test can never kill or block pytest.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from research_agent.sources import Document

HANG_GUARD = 60.0  # seconds; only ever reached when the behaviour under test is broken
CRASH, HANG, RAISE = b"CRASH-ME", b"HANG-ME", b"RAISE-ME"


def in_worker() -> bool:
    """Whether this is a worker process (it has a multiprocessing parent)."""
    return multiprocessing.parent_process() is not None


def misbehaving(data: bytes, kind: str, **_options: object) -> Document:
    """extract()'s signature: dies on CRASH, blocks forever on HANG, raises on RAISE;
    any other document is its bytes as text (instantly, so no time limit is ever close)."""
    if CRASH in data:
        if not in_worker():
            raise RuntimeError("would crash, but this is not a worker process")
        os._exit(3)
    if HANG in data:
        if not in_worker():
            raise RuntimeError("would hang, but this is not a worker process")
        threading.Event().wait()  # forever: only the time limit ends this
    if RAISE in data:
        raise ValueError("the extractor choked on this document")
    text = data.decode("utf-8", "replace")
    return Document(title=text.splitlines()[0] if text else "", text=text)


WAIT = b"WAIT-FOR:"


def waiting(data: bytes, kind: str, **_options: object) -> Document:
    """extract()'s signature: a document ``WAIT-FOR:<path>`` is extracted once ``path`` exists."""
    if data.startswith(WAIT) and not wait_until(Path(data[len(WAIT) :].decode().strip()).exists):
        raise TimeoutError("nobody made the file")
    return Document(title="held", text=data.decode("utf-8", "replace"))


def call(fn: Callable[[object], object], arg: object) -> object:
    return fn(arg)


def wait_until(condition: Callable[[], bool]) -> bool:
    """Whether ``condition`` came true within the hang guard (checked every 10 ms)."""
    deadline = time.monotonic() + HANG_GUARD
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


_KEPT: list[bytes] = []


def rss_mb(_value: object = None) -> float:
    """This worker's resident set now, in MB."""
    with open("/proc/self/statm", "rb") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / (1024 * 1024)


def fragment_heap(megabytes: int) -> float:
    """Fill ``megabytes`` of C heap with 1 KB blocks, keep one in a thousand and free the
    rest: holes below kept blocks, which the C library does not hand back by itself (as
    a big page leaves them). Returns the resident set while the blocks were held."""
    blocks = [bytes(1000) for _ in range(megabytes * 1000)]
    _KEPT.extend(blocks[::1000])
    held = rss_mb()
    del blocks
    return held


def identity(value: object) -> object:
    return value


def pid_of_worker(_value: object) -> int:
    return os.getpid()


def wait_for_file(path: Path) -> str:
    """Return once ``path`` exists (made by another job): a job that finishes late."""
    if not wait_until(path.exists):
        raise TimeoutError(f"{path} never appeared")
    return "waited"


def make_file(path: Path) -> str:
    path.write_text("done", encoding="utf-8")
    return "made"


def staged(step: str, arg: object) -> object:
    """One function for :class:`OverlapExtraction` tests: ``step`` says what to do."""
    if step == "hold":  # in the test process: say it started, then wait for a file
        started, path = arg  # type: ignore[misc]
        started.set()
        wait_for_file(path)
        return os.getpid()
    if step == "make":
        make_file(arg)  # type: ignore[arg-type]
        return os.getpid()
    if step == "wait":  # wherever it runs: until the file exists
        wait_for_file(arg)  # type: ignore[arg-type]
        return os.getpid()
    if step == "crash" and in_worker():
        os._exit(5)
    return os.getpid()


def _stat_fields(pid: str) -> tuple[int, str] | None:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as handle:
            after_name = handle.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(after_name[1]), after_name[0]  # parent pid, state


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


def descendants() -> dict[int, tuple[int, str]]:
    """Every living process below this one (from /proc): its parent pid and command line."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (fields := _stat_fields(entry)) is not None:
            parents[int(entry)] = fields[0]
    found: dict[int, tuple[int, str]] = {}
    frontier = [os.getpid()]
    while frontier:
        parent = frontier.pop()
        for pid, ppid in parents.items():
            if ppid == parent and pid not in found:
                found[pid] = (ppid, _cmdline(pid))
                frontier.append(pid)
    return found


def worker_processes() -> set[int]:
    """Living processes below this one, except multiprocessing's long-lived helpers:
    the fork server and the resource tracker (this process's children) live as long
    as the program. Workers forked by the fork server show its command line too, but
    are its children."""
    helpers = ("multiprocessing.forkserver", "multiprocessing.resource_tracker")
    me = os.getpid()
    return {
        pid
        for pid, (ppid, cmd) in descendants().items()
        if not (ppid == me and any(helper in cmd for helper in helpers))
    }


def loaded_modules(*_ignored: object) -> list[str]:
    """The names of the modules this process has imported (what a worker carries)."""
    import sys

    return sorted(sys.modules)
