"""Extraction in worker processes: as many as there are CPUs, in order, with bounded memory.

trafilatura is pure Python and holds the GIL, so threads cannot run two extractions
at once; processes can. :class:`ExtractionPool` runs one picklable function (the
extractor, or a corpus file reader that calls it) in worker processes, one job per
worker at a time, so it always knows which job each worker holds:

* **bad input is contained**: a job whose worker dies (a crash in a C extension, the
  OOM killer, ``os._exit``) gives :class:`Failed` with reason :data:`CRASHED`; a job that
  passes its time limit has its worker killed and gives :data:`TIMED_OUT`; an exception
  gives :data:`RAISED`. The worker is replaced and the other jobs go on.
* **bounded memory**: :meth:`~ExtractionPool.map` keeps a fixed number of jobs in flight
  and yields results in the order of its input; a worker hands freed heap back to the
  system after a job that grew it, and one still over ``max_worker_mb`` retires after
  its job and a fresh one takes its place.
* **start method**: ``forkserver`` where the platform has it (else ``spawn``), never
  ``fork``: forking a process that runs an event loop and threads is unsafe. The fork
  server preloads the extraction modules once, so a worker (a recycled one too) starts
  with a fork rather than a fresh interpreter. A worker holds only what extraction needs
  (no HTTP stack, terminal, command line or model client: each would cost every worker
  10-20 MB), which is why ``research_agent.fetch``, ``research_agent`` and ``research_agent.cli``
  import their parts lazily and :class:`~.overlap.OverlapExtraction` lives apart.
* **workers start lazily**, on the first job, and :func:`worth_a_pool` says when
  starting them pays: a single HTML page, or plain text only, is extracted in the
  caller's process.
* **prompt stop**: :meth:`~ExtractionPool.close` (also on Ctrl-C and on leaving the
  ``with`` block) cancels queued jobs and kills the workers. The fork server and the
  workers are born with SIGINT blocked, so a terminal's Ctrl-C (sent to the whole
  process group) reaches only the parent, which decides.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from typing import Any

from .worker_process import CRASHED, RAISED, TIMED_OUT, UNAVAILABLE, Failed
from .workers import WorkerSet

__all__ = [
    "ExtractionPool",
    "Failed",
    "CRASHED",
    "TIMED_OUT",
    "RAISED",
    "UNAVAILABLE",
    "cpu_budget",
    "worth_a_pool",
    "MIN_POOL_JOBS",
    "PRELOAD",
    "EXTRACT_TIMEOUT",
]

log = logging.getLogger(__name__)

# Starting the workers costs about 0.5-0.8 s the first time in a program (the fork
# server imports the extraction modules), about 25 ms after that; one HTML page costs
# 10-100 ms, a plain-text file about 0.5 ms.
MIN_POOL_JOBS = 2
PRELOAD = ("research_agent.fetch.extract", "lxml.html", "trafilatura", "htmldate")
EXTRACT_TIMEOUT = 60.0  # seconds one document may take in a worker before it fails
# Results wait in order behind a slow document; with 2 jobs a worker, the other workers
# sat idle behind each big page (about 6% of their time over the Python docs), with 16
# about 1.5%. The memory is a few documents' text each.
_WINDOW_PER_WORKER = 16
_DEFAULT_MAX_WORKER_MB = 200  # after a trim, a worker extracting the Python docs holds about 60 MB


def cpu_budget() -> int:
    """The CPUs this process may run on (its affinity mask, not the machine's count)."""
    if (count := getattr(os, "process_cpu_count", None)) is not None:  # Python 3.13+
        return max(1, count() or 1)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not on Linux
        return max(1, os.cpu_count() or 1)


def worth_a_pool(parsed: int) -> bool:
    """Whether work holding ``parsed`` documents that need a parser (HTML, PDF) is worth
    worker processes; plain text is cheap enough to read in the caller's process."""
    return parsed >= MIN_POOL_JOBS


def _context() -> multiprocessing.context.BaseContext:
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    ctx = multiprocessing.get_context(method)
    if method == "forkserver":
        # Once per program (the fork server is shared), and only the extraction modules: not
        # the main module, which under the command line would be the whole CLI. (A worker
        # still imports the main module itself, as multiprocessing does; the CLI's is light.)
        ctx.set_forkserver_preload(list(PRELOAD))
    return ctx


class ExtractionPool:
    """Worker processes running ``fn`` (module-level, picklable) on jobs.

    ``workers`` defaults to :func:`cpu_budget`; ``timeout`` is each job's limit in
    seconds, counted from when a ready worker takes it. Nothing starts until the first
    job. Thread-safe; use as a context manager or call :meth:`close`.
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        workers: int | None = None,
        timeout: float = EXTRACT_TIMEOUT,
        max_worker_mb: float = _DEFAULT_MAX_WORKER_MB,
    ) -> None:
        self.workers = workers or cpu_budget()
        self.timeout = timeout
        self._set = WorkerSet(
            _context(), fn, size=self.workers, timeout=timeout, max_worker_mb=max_worker_mb, preload=PRELOAD
        )
        self._thread: threading.Thread | None = None
        self._closed = False
        self._lock = threading.Lock()

    def __enter__(self) -> ExtractionPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close(cancel=exc[0] is not None)

    @property
    def ready(self) -> threading.Event:
        """Set once a worker can take a job (or once none ever will: the pool could not
        start one, or it is closed)."""
        return self._set.ready

    def start(self) -> None:
        """Start every worker now, in the background, rather than on the first jobs."""
        with self._lock:
            self._start_dispatcher()
        self._set.warm_up()

    def submit(self, *args: Any, **kwargs: Any) -> Future[Any]:
        """Queue one job; its Future gives ``fn``'s result or a :class:`Failed`."""
        with self._lock:
            self._start_dispatcher()
            return self._set.submit(args, kwargs)

    def _start_dispatcher(self) -> None:  # under self._lock
        if self._closed:
            raise RuntimeError("the extraction pool is closed")
        if self._thread is None:
            self._thread = threading.Thread(target=self._set.run, name="extraction-pool", daemon=True)
            self._thread.start()

    def map(self, jobs: Iterable[tuple[Any, ...]], *, window: int | None = None) -> Iterator[Any]:
        """``fn(*job)`` for every job, in order; at most ``window`` jobs in flight (their
        results waiting for an earlier, slower one included). A job the pool could not
        run (:data:`UNAVAILABLE`) runs here."""
        window = window or _WINDOW_PER_WORKER * self.workers
        pending: deque[tuple[tuple[Any, ...], Future[Any]]] = deque()
        source = iter(jobs)
        try:
            while True:
                while len(pending) < window and (job := next(source, None)) is not None:
                    pending.append((job, self.submit(*job)))
                if not pending:
                    return
                job, future = pending.popleft()
                result = future.result()
                if isinstance(result, Failed) and result.reason == UNAVAILABLE:
                    result = self._set.fn(*job)
                yield result
        finally:
            for _job, future in pending:
                future.cancel()

    def close(self, *, cancel: bool = True) -> None:
        """Stop the workers: queued jobs are cancelled (``cancel``) or finished first."""
        with self._lock:
            thread, self._thread = self._thread, None
            self._closed = True
        if thread is None:
            self._set.release()
            return
        self._set.stop(cancel=cancel)
        thread.join()
