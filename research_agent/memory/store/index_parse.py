"""Reading the critique files the summary index does not know yet (see :mod:`.index`).

Each file is read with the real loader (:func:`~.index_rows.rows_for`). Reading a YAML file
costs about a millisecond of pure Python, so when many files appear at once (a pulled
repository, a restored backup: :data:`POOL_FROM` or more) they are read in worker processes,
one per CPU, in chunks. The workers are started with ``spawn`` (a run may have threads and
an event loop: never ``fork``; and the extraction pool's fork server keeps its own preload),
ignore Ctrl-C (the caller decides), and are let go as soon as the work is done or the time is up.

Reading stops once the caller's time is up (``time_left() <= 0``): what was read is
returned, the caller keeps it, and the next refresh reads the rest.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from .files import entry_for_name
from .index_db import TimeLeft
from .index_rows import Parsed, rows_for

__all__ = ["parse_files", "POOL_FROM", "CHUNK"]

POOL_FROM = 400  # files; fewer are read here (starting the workers costs a few hundred ms)
CHUNK = 100  # files per job: small enough that a stop at the deadline is prompt
NO_WAIT_CAP = 3600.0  # seconds to wait for a job when the caller has no deadline


def parse_files(
    meta_dir: Path,
    stale: Sequence[tuple[str, str]],
    *,
    time_left: TimeLeft | None = None,
    workers: int | None = None,
    pool_from: int = POOL_FROM,
) -> list[Parsed]:
    """The rows of each ``(name, signature)`` in ``stale`` until ``time_left()`` runs out:
    here, or in ``workers`` processes (default: one per CPU) from ``pool_from`` files on."""
    workers = _cpus() if workers is None else workers
    if workers < 2 or len(stale) < max(pool_from, 2):
        return _parse(str(meta_dir), stale, time_left)
    return _parse_pooled(meta_dir, stale, time_left, min(workers, -(-len(stale) // CHUNK)))


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - platforms without affinity
        return os.cpu_count() or 1


def _parse(meta_dir: str, stale: Sequence[tuple[str, str]], time_left: TimeLeft | None = None) -> list[Parsed]:
    parsed: list[Parsed] = []
    folder = Path(meta_dir)
    for name, sig in stale:
        if time_left is not None and time_left() <= 0:
            break
        entry = entry_for_name(folder, name)
        if entry is not None:
            parsed.append(rows_for(entry, sig, folder))
    return parsed


def _quiet() -> None:
    """A worker leaves Ctrl-C (sent to the whole process group) to its parent."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _parse_pooled(
    meta_dir: Path, stale: Sequence[tuple[str, str]], time_left: TimeLeft | None, workers: int
) -> list[Parsed]:
    """Chunks of ``stale`` read in ``workers`` processes, in order; a pool that cannot start
    or breaks (a worker killed) leaves its chunks to be read here."""
    chunks = [list(stale[i : i + CHUNK]) for i in range(0, len(stale), CHUNK)]
    results: dict[int, list[Parsed]] = {}
    try:
        pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"), initializer=_quiet)
    except OSError:  # pragma: no cover - no processes to be had
        return _parse(str(meta_dir), stale, time_left)
    try:
        jobs: dict[Future[list[Parsed]], int] = {
            pool.submit(_parse, str(meta_dir), chunk): n for n, chunk in enumerate(chunks)
        }
        pending = set(jobs)
        while pending:
            left = NO_WAIT_CAP if time_left is None else time_left()
            if left <= 0:
                break
            done, pending = wait(pending, timeout=left, return_when=FIRST_COMPLETED)
            for future in done:
                results[jobs[future]] = future.result()
    except (BrokenProcessPool, OSError):
        for n, chunk in enumerate(chunks):
            if n not in results and not (time_left is not None and time_left() <= 0):
                results[n] = _parse(str(meta_dir), chunk, time_left)
    finally:
        pool.shutdown(wait=False, cancel_futures=True)  # a job still running ends on its own
    return [row for n in sorted(results) for row in results[n]]
