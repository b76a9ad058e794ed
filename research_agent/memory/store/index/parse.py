"""Reading the critique files the summary index does not know yet (see :mod:`.summary`).

Each file is read with the real loader (:func:`~.rows.rows_for`). Reading a YAML file
costs about a millisecond of pure Python, so when many files appear at once (a pulled
repository, a restored backup: :data:`POOL_FROM` or more) they are shared among worker
processes, one per CPU: ``python -m research_agent.memory.store.index.parse META_DIR``, which
reads ``[name, signature]`` lines on stdin and answers one JSON line per file on stdout.
Plain child processes, not ``multiprocessing``: a library user's script without a
``__main__`` guard would be run again in every worker. Workers ignore Ctrl-C (the caller
decides) and are killed as soon as the caller's time is up; a worker that dies leaves its
files to be read here.

Reading stops once the caller's time is up (``time_left() <= 0``): what was read is
returned, the caller keeps it, and the next refresh reads the rest.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from ..files import entry_for_name
from .db import TimeLeft
from .rows import FileRow, MeasureRow, Rows, UseRow, rows_for

__all__ = ["parse_files", "POOL_FROM", "main"]

POOL_FROM = 400  # files; fewer are read here (starting a worker costs about 0.2 s of CPU)
NO_DEADLINE = 3600.0  # seconds one wait for a worker's answer may last without a deadline
Stale = Sequence[tuple[str, str]]


def parse_files(
    meta_dir: Path,
    stale: Stale,
    *,
    time_left: TimeLeft | None = None,
    workers: int | None = None,
    pool_from: int = POOL_FROM,
) -> list[Rows]:
    """The rows of each ``(name, signature)`` in ``stale`` until ``time_left()`` runs out:
    here, or in ``workers`` processes (default: one per CPU) from ``pool_from`` files on."""
    workers = _cpus() if workers is None else workers
    if workers < 2 or len(stale) < max(pool_from, 2) or not sys.executable:
        return _parse(Path(meta_dir), stale, time_left)
    return _Workers(Path(meta_dir), stale, min(workers, len(stale))).read(time_left)


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - platforms without affinity
        return os.cpu_count() or 1


def _parse(meta_dir: Path, stale: Stale, time_left: TimeLeft | None = None) -> list[Rows]:
    parsed: list[Rows] = []
    for name, sig in stale:
        if time_left is not None and time_left() <= 0:
            break
        entry = entry_for_name(meta_dir, name)
        if entry is not None:
            parsed.append(rows_for(entry, sig, meta_dir))
    return parsed


def _encode(rows: Rows) -> str:
    return json.dumps([list(rows.file), [list(u) for u in rows.uses], [list(m) for m in rows.measures], rows.body]) + "\n"


def _decode(line: bytes) -> Rows:
    file, uses, measures, body = json.loads(line)
    return Rows(FileRow(*file), [UseRow(*u) for u in uses], [MeasureRow(*m) for m in measures], body)


class _Workers:
    """``stale`` shared among ``count`` worker processes, their answers read as they come."""

    def __init__(self, meta_dir: Path, stale: Stale, count: int) -> None:
        self.meta_dir, self.stale = meta_dir, list(stale)
        self.shares = [self.stale[i::count] for i in range(count)]
        self.parsed: dict[str, Rows] = {}

    def read(self, time_left: TimeLeft | None) -> list[Rows]:
        procs: list[subprocess.Popen[bytes]] = []
        try:
            for share in self.shares:
                procs.append(self._start(share))
            self._collect(procs, time_left)
        except OSError:
            pass  # no process to be had, or a pipe broke: what is missing is read here
        finally:
            for proc in procs:
                with contextlib.suppress(OSError):
                    proc.kill()
                proc.wait()
                for pipe in (proc.stdin, proc.stdout):
                    if pipe is not None:
                        pipe.close()
        missing = [item for item in self.stale if item[0] not in self.parsed]
        if missing and not (time_left is not None and time_left() <= 0):
            self.parsed.update((p.file.name, p) for p in _parse(self.meta_dir, missing, time_left))
        return [self.parsed[name] for name, _ in self.stale if name in self.parsed]

    def _start(self, share: Stale) -> subprocess.Popen[bytes]:
        """A worker for ``share``. ``-P``: the current folder (perhaps ``reports/``, which may
        hold planted files) is never put on the worker's import path."""
        proc = subprocess.Popen(
            [sys.executable, "-P", "-m", __name__, str(self.meta_dir)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        if proc.stdin is not None:
            proc.stdin.write("".join(json.dumps(list(item)) + "\n" for item in share).encode())
            proc.stdin.close()
        return proc

    def _collect(self, procs: list[subprocess.Popen[bytes]], time_left: TimeLeft | None) -> None:
        """Read every worker's lines until all have finished or the time is up."""
        buffers: dict[int, bytes] = {}
        with selectors.DefaultSelector() as selector:
            for proc in procs:
                if proc.stdout is not None:
                    os.set_blocking(proc.stdout.fileno(), False)
                    selector.register(proc.stdout, selectors.EVENT_READ)
                    buffers[proc.stdout.fileno()] = b""
            while selector.get_map():
                left = NO_DEADLINE if time_left is None else time_left()
                if left <= 0:
                    return
                for key, _ in selector.select(timeout=left):
                    fd = key.fd
                    chunk = os.read(fd, 1 << 16)
                    if not chunk:
                        selector.unregister(key.fileobj)
                        continue
                    *lines, buffers[fd] = (buffers[fd] + chunk).split(b"\n")
                    for line in lines:
                        with contextlib.suppress(ValueError, TypeError):  # not ours: read here instead
                            parsed = _decode(line)
                            self.parsed[parsed.file.name] = parsed


def main(argv: Sequence[str] | None = None) -> int:
    """A worker: read ``[name, signature]`` lines on stdin, answer one JSON line per file."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    args = list(sys.argv[1:] if argv is None else argv)
    meta_dir = Path(args[0])
    stale = [tuple(json.loads(line)) for line in sys.stdin.buffer if line.strip()]
    out = sys.stdout
    for name, sig in stale:
        for parsed in _parse(meta_dir, [(name, sig)]):
            out.write(_encode(parsed))
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
