"""Starting, continuing and looking at batches, as every front end that drives one does (the
``batch`` command, the MCP ``research_batch`` tool, the web workbench's batch pages).

* :func:`new_batch`      a new batch of checked questions, its folder made writable first
* :func:`resumed`        the questions and options to continue a stored batch with, its folders
                         honoured only under the user's signature (:mod:`.reach`)
* :func:`holding`        a session holds its batch's lock (``meta/batch-<id>.lock``): one process
                         runs a batch at a time, whichever front end started it
* :func:`listing_of`     a stored batch as a list shows it, and whether a process runs it now
                         (:func:`running_now`): a state that says ``running`` while no process
                         holds its lock was ``interrupted`` (its process died), told by the
                         lock, never by a clock
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import Settings
from ..errors import InputError, StorageError
from ..files.atomic import ensure_writable_dir
from ..files.locks import Locked, exclusive_lock
from .plan import Batch, plan_batch, rows_of
from .questions import BatchQuestion
from .reach import resumable_rows
from .state import BatchState

__all__ = ["new_batch", "resumed", "holding", "lock_path", "running_now", "BatchListing", "listing_of"]


def new_batch(
    questions: Sequence[BatchQuestion], base: Settings, *, file: str = "", overrides: Mapping[str, Any] | None = None
) -> Batch:
    """A new batch of ``questions`` run with ``base`` (``overrides``: the options it keeps for a resume)."""
    ensure_writable_dir(base.meta_dir)
    return plan_batch(questions, base, file=file, overrides=dict(overrides or {}), previous=None)


def resumed(
    previous: BatchState, base: Settings, given: Mapping[str, Any], settings_for: Callable[[dict[str, Any]], Settings]
) -> tuple[list[BatchQuestion], dict[str, Any], Settings]:
    """What continuing ``previous`` without its questions file runs: its questions (their folders
    only when signed, or when ``base`` names folders of its own), the options it was started with
    and then those ``given`` now, and the settings ``settings_for`` makes of them."""
    rows = resumable_rows(previous, rows_of(previous), bool(base.corpus_dirs), base.state_dir)
    used = {**previous.overrides, **given}
    return rows, used, settings_for(used)


def lock_path(meta_dir: Path, batch_id: str, kind: str = "batch") -> Path:
    """The lock a process running batch (or eval, ``kind``) ``batch_id`` holds."""
    return Path(meta_dir) / f"{kind}-{batch_id}.lock"


@contextmanager
def holding(state: BatchState) -> Iterator[None]:
    """Hold ``state`` 's lock for the block; InputError at once when another process (or another
    session of this one) holds it. A batch that never started (no state file) leaves no lock file."""
    lock = lock_path(state.meta_dir, state.id, state.KIND)
    stack = ExitStack()
    try:
        stack.enter_context(exclusive_lock(lock, wait=False))
    except Locked:
        raise InputError(f"{state.KIND} {state.id} is running in another process") from None
    try:
        with stack:
            yield
    finally:
        if not state.path.exists():
            lock.unlink(missing_ok=True)


def running_now(meta_dir: Path, batch_id: str) -> bool:
    """Whether a process holds the batch's lock now (its lock is tried for an instant)."""
    lock = lock_path(meta_dir, batch_id)
    if not lock.is_file():
        return False
    try:
        with exclusive_lock(lock, wait=False):
            return False
    except Locked:
        return True
    except StorageError:
        return False


@dataclass(frozen=True)
class BatchListing:
    """One stored batch as a list shows it; ``problem``: why its state could not be read."""

    id: str
    status: str = ""  # running (a process holds it), interrupted, stopped, finished
    file: str = ""
    created: str = ""
    updated: str = ""
    questions: int = 0
    done: int = 0
    failed: int = 0
    problem: str = ""

    @property
    def left(self) -> int:
        return self.questions - self.done - self.failed


def listing_of(state: BatchState, running: bool) -> BatchListing:
    """``state`` as a list shows it, ``running``: whether a process holds its lock now."""
    status = "running" if running else ("interrupted" if state.status == "running" else state.status)
    return BatchListing(state.id, status, state.file, state.created, state.updated, len(state.entries),
                        state.count("done"), state.count("failed"))  # fmt: skip
