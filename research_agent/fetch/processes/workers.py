"""The worker processes behind :class:`~.pool.ExtractionPool`, driven by one dispatcher thread.

(What runs inside a worker is :mod:`.worker_process`.)

Each worker holds at most one job, so a worker that dies or overruns names its job.
Only the dispatcher thread (:meth:`WorkerSet.run`) touches the workers; other
threads queue jobs and ask it to stop through :meth:`WorkerSet.submit` and
:meth:`WorkerSet.stop`, which wake it through a pipe.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import CancelledError, Future
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from typing import Any

from .worker_process import CRASHED, RAISED, TIMED_OUT, UNAVAILABLE, Failed, worker_main

__all__ = ["WorkerSet"]

log = logging.getLogger(__name__)

_FAILED_STARTS = 3  # workers that die before they are ready, in a row, before giving up
_JOIN_SECONDS = 5.0


@dataclass
class _Job:
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    future: Future[Any]
    started: bool = False  # the future is marked running


@dataclass(eq=False)
class _Worker:
    process: Any  # a multiprocessing Process
    conn: Any  # our end of its pipe
    ready: bool = False
    job: _Job | None = None
    deadline: float = field(default=0.0)


def _block_sigint(ctx: Any) -> None:
    """Block SIGINT in this thread: processes started from it (the fork server, the
    workers) inherit the mask, so a terminal's Ctrl-C, sent to the whole process group,
    never interrupts them, not even while they start; the parent handles it and stops them."""
    if not hasattr(signal, "pthread_sigmask"):
        return
    if ctx.get_start_method() == "forkserver":
        # Starting the resource tracker unblocks SIGINT in the calling thread (CPython
        # 3.11-3.13), and the fork server starts it first: start it before blocking.
        from multiprocessing import resource_tracker

        resource_tracker.ensure_running()
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})


def _describe_exit(code: int | None) -> str:
    if code is not None and code < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-code).name}"
    return f"exit code {code}"


class WorkerSet:
    """Up to ``size`` worker processes (of multiprocessing context ``ctx``) running
    :func:`worker_main` on ``fn``; ``preload`` names modules a worker imports before it is ready."""

    def __init__(
        self,
        ctx: Any,
        fn: Callable[..., Any],
        *,
        size: int,
        timeout: float,
        max_worker_mb: float,
        preload: tuple[str, ...] = (),
    ) -> None:
        self.ctx, self.fn, self.preload = ctx, fn, preload
        self.size, self.timeout, self.max_worker_mb = size, timeout, max_worker_mb
        self._queue: deque[_Job] = deque()
        self._workers: list[_Worker] = []
        self._lock = threading.Lock()
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_w, False)
        self._pipe_open = True
        self._stopping = False
        self._cancel = False
        self._failed_starts = 0
        self._broken = ""
        self._warm = False  # start every worker now, before any job
        # Set once a worker can take a job, or once none ever will (broken, stopped).
        self.ready = threading.Event()

    # ------------------------------------------------------------ any thread

    def submit(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Future[Any]:
        """Queue a job for the dispatcher; raises RuntimeError once stopping."""
        future: Future[Any] = Future()
        with self._lock:
            if self._stopping:
                raise RuntimeError("the extraction pool is closed")
            self._queue.append(_Job(args, kwargs, future))
            self._wake()
        return future

    def warm_up(self) -> None:
        """Start every worker now rather than as jobs come."""
        with self._lock:
            self._warm = True
            self._wake()

    def stop(self, *, cancel: bool) -> None:
        """Ask the dispatcher to finish: at once (``cancel``) or once the queue is done."""
        with self._lock:
            self._stopping = True
            self._cancel = self._cancel or cancel
            self._wake()

    def release(self) -> None:
        """Free what the set holds once :meth:`run` has ended (or when it never ran)."""
        self.ready.set()
        with self._lock:
            self._stopping = True
            if self._pipe_open:
                self._pipe_open = False
                os.close(self._wake_r)
                os.close(self._wake_w)

    def _wake(self) -> None:  # under self._lock
        if self._pipe_open:
            with contextlib.suppress(BlockingIOError):  # a full pipe already wakes it
                os.write(self._wake_w, b"x")

    # ------------------------------------------------------------ the dispatcher thread

    def run(self) -> None:
        """The dispatcher: hand jobs to ready workers, collect answers, replace the dead."""
        try:
            while not self._finished():
                self._dispatch()
                self._wait_and_handle()
        finally:
            self._shutdown()

    def _finished(self) -> bool:
        with self._lock:
            if not self._stopping:
                return False
            return self._cancel or (not self._queue and not any(w.job for w in self._workers))

    def _next_job(self) -> _Job | None:
        with self._lock:
            while self._queue:
                job = self._queue.popleft()
                if job.started or job.future.set_running_or_notify_cancel():  # False: cancelled while queued
                    job.started = True
                    return job
        return None

    def _dispatch(self) -> None:
        for worker in [w for w in self._workers if w.ready and w.job is None]:
            job = self._next_job()
            if job is None:
                break
            try:
                worker.conn.send((job.args, job.kwargs))
            except (OSError, EOFError):  # it just died: the job waits for another worker
                with self._lock:
                    self._queue.appendleft(job)
                continue
            except Exception as exc:  # the job cannot be pickled
                job.future.set_result(Failed(RAISED, f"unsendable job: {type(exc).__name__}"))
                continue
            worker.job, worker.deadline = job, time.monotonic() + self.timeout
        self._start_workers()

    def _start_workers(self) -> None:
        with self._lock:
            waiting = self.size if self._warm else len(self._queue)
        spare = sum(1 for w in self._workers if w.job is None)
        while not self._broken and waiting > spare and len(self._workers) < self.size:
            self._spawn()
            spare += 1
        if self._broken:
            self.ready.set()
            self._fail_queued(Failed(UNAVAILABLE, self._broken))

    def _spawn(self) -> None:
        ours, theirs = self.ctx.Pipe(duplex=True)
        process = self.ctx.Process(
            target=worker_main,
            args=(theirs, self.fn, self.max_worker_mb, self.preload),
            name="research-agent-extract",
            daemon=True,
        )
        try:
            _block_sigint(self.ctx)
            process.start()
        except Exception as exc:  # no processes here (sandbox, limits): the caller extracts itself
            log.warning("cannot start an extraction worker (%s); extracting in this process", exc)
            self._broken = f"cannot start a worker process: {exc}"
            ours.close()
            return
        finally:
            theirs.close()
        self._workers.append(_Worker(process, ours))

    def _wait_and_handle(self) -> None:
        busy = [w.deadline for w in self._workers if w.job is not None]
        timeout = max(0.0, min(busy) - time.monotonic()) if busy else None
        handles = [
            self._wake_r,
            *(w.conn for w in self._workers),
            *(w.process.sentinel for w in self._workers),
        ]
        ready = set(wait(handles, timeout))
        if self._wake_r in ready:
            with contextlib.suppress(BlockingIOError):
                os.read(self._wake_r, 4096)
        for worker in list(self._workers):
            if worker.conn in ready:
                self._receive(worker)
        for worker in list(self._workers):
            if worker.process.sentinel in ready and worker in self._workers:
                self._died(worker)
        self._expire()

    def _receive(self, worker: _Worker) -> None:
        try:
            message = worker.conn.recv()
        except (EOFError, OSError):  # it died
            self._died(worker)
            return
        if message is None:
            worker.ready = True
            self.ready.set()
            self._failed_starts = 0
            return
        result, retire = message
        job, worker.job = worker.job, None
        if job is not None:
            job.future.set_result(result)
        if retire:  # it has grown too big and exits by itself; a fresh one replaces it
            log.debug(
                "extraction worker %s retires (peak RSS over %s MB)", worker.process.pid, self.max_worker_mb
            )
            self._remove(worker, kill=False)

    def _died(self, worker: _Worker) -> None:
        worker.process.join(_JOIN_SECONDS)
        job, code = worker.job, worker.process.exitcode
        self._remove(worker, kill=False)
        if job is not None:
            job.future.set_result(Failed(CRASHED, f"its worker process died ({_describe_exit(code)})"))
        elif not worker.ready:
            self._failed_starts += 1
            if self._failed_starts >= _FAILED_STARTS:
                self._broken = f"extraction workers exit as they start ({_describe_exit(code)})"
                log.warning("%s; extracting in this process", self._broken)

    def _expire(self) -> None:
        now = time.monotonic()
        for worker, job in [(w, w.job) for w in self._workers if w.job is not None and w.deadline <= now]:
            worker.job = None
            self._remove(worker, kill=True)
            job.future.set_result(Failed(TIMED_OUT, f"no result after {self.timeout:g} s"))

    def _remove(self, worker: _Worker, *, kill: bool) -> None:
        self._workers.remove(worker)
        if kill:
            with contextlib.suppress(OSError):
                worker.process.kill()
        worker.process.join(_JOIN_SECONDS)
        if worker.process.is_alive():
            worker.process.kill()
            worker.process.join(_JOIN_SECONDS)
        worker.conn.close()  # its sentinel closes with the Process object (at exit, multiprocessing joins it too)

    def _fail_queued(self, failed: Failed) -> None:
        while (job := self._next_job()) is not None:
            job.future.set_result(failed)

    def _shutdown(self) -> None:
        """Cancel what is queued; stop idle workers politely and busy ones at once."""
        with self._lock:
            self._stopping = True
            queued = list(self._queue)
            self._queue.clear()
        for job in queued:
            _abandon(job)
        for worker in self._workers:
            if worker.job is not None:
                _abandon(worker.job)
            else:
                with contextlib.suppress(OSError, ValueError):
                    worker.conn.send(None)
        for worker in list(self._workers):
            self._remove(worker, kill=worker.job is not None)
        self.release()


def _abandon(job: _Job) -> None:
    """Whoever waits for ``job`` learns the pool closed before it was done."""
    if not job.future.cancel():  # already running: cancel() cannot mark it
        job.future.set_exception(CancelledError("the extraction pool was closed"))
