"""One run's journal, from its start to its end: the entry, the lock, the checkpoints.

:func:`journaled` is entered as soon as a run has its id: it takes the run's lock, writes its entry
(``running``), and on the way out writes how it ended: ``cancelled`` (Ctrl-C, SIGTERM, a front
end's cancel), ``failed`` (with the error), unless :meth:`RunJournal.done` said ``done`` first: the
pipeline says it in the very step that wrote the report, so a cancel that comes later leaves the
run ``done``. A process that dies writes nothing: its lock goes with it, and the entry reads as
``interrupted`` (:mod:`.entries`).

:class:`Journalling` is what a caller of ``research()`` says about the journal: its front end, the
run to resume (its id), and who hears the id once the run has one (a batch keeps it, to resume the
question's run rather than start it again).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from ..config import Settings
from ..errors import InputError, StorageError, error_message
from ..files.locks import exclusive_lock
from ..ids import format_utc, parse_zoned_time
from .checkpoints import Checkpoints
from .entries import RESUMABLE, JournalEntry, lock_path, read_entry, signed_entry, write_entry
from .settings_snapshot import snapshot
from .signing import user_key

__all__ = ["Journalling", "RunJournal", "Resumed", "journaled", "resumed_from", "new_seed", "NOT_SIGNED"]

NOT_SIGNED = (
    "run {run_id} cannot be resumed: its journal entry was not written by research-agent under your user (its "
    "signature does not check: it was copied, edited or planted, or written before 0.5.1); ask its question again"
)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Journalling:
    """What a caller says about a run's journal. ``front_end``: cli, batch, eval, web, mcp or
    library; ``resume``: the id of an interrupted, failed or cancelled run to continue;
    ``on_started``: hears the run's id when its entry is written."""

    front_end: str = "library"
    resume: str | None = None
    on_started: Callable[[str], None] | None = None


@dataclass(frozen=True)
class Resumed:
    """What a resumed run takes from its entry: its id, start time, lesson draw and resume count."""

    id: str
    started: datetime
    seed: int
    resumed: int


def resumed_from(meta_dir: Path, run_id: str, key: bytes) -> Resumed:
    """The run ``run_id`` to resume, from its entry; InputError when it has none, it is running or
    done (a run is resumed only once its process is gone and it wrote no report), or its entry is not
    signed with ``key``, the user's (:mod:`.signing`)."""
    entry = read_entry(meta_dir, run_id)
    if entry is None:
        raise InputError(f"run {run_id} has no journal entry in {meta_dir}: nothing to resume")
    if entry.status not in RESUMABLE:
        why = "it is still running" if entry.status == "running" else f"it is done (its report: {entry.report})"
        raise InputError(f"run {run_id} cannot be resumed: {why}")
    if not signed_entry(meta_dir, run_id, key):
        raise InputError(NOT_SIGNED.format(run_id=run_id))
    started = parse_zoned_time(entry.started)
    if started is None:
        raise InputError(f"run {run_id}: its journal entry has no readable start time")
    return Resumed(entry.id, started.astimezone(UTC), entry.seed, entry.resumed + 1)


class RunJournal:
    """The journal of the run in progress: its entry and its checkpoints."""

    def __init__(self, meta_dir: Path, entry: JournalEntry, key: bytes) -> None:
        self.meta_dir = Path(meta_dir)
        self.entry = entry
        self.key = key  # the user's: signs the entry and the checkpoints (:mod:`.signing`)
        self.checkpoints = Checkpoints(meta_dir, entry.id, key)

    @property
    def ended(self) -> bool:
        return self.entry.status != "running"

    def _write(self, entry: JournalEntry) -> None:
        self.entry = replace(entry, reused=self.checkpoints.reused)
        write_entry(self.meta_dir, self.entry, self.key)

    def done(self, report: Path) -> None:
        """The report is written: the run is done, whatever comes after (a journal that cannot be
        written now costs the run nothing: its report is there; said in the log)."""
        try:
            self._write(self.entry.ended("done", finished=_now(), report=str(report)))
        except StorageError as exc:
            log.warning("run %s is done but its journal entry could not say so: %s", self.entry.id, exc)

    def end(self, status: str, error: str = "") -> None:
        """How the run ended, unless the entry said so already (an error writing it never hides the
        run's own: the entry then reads interrupted once the lock is gone)."""
        if self.ended:
            return
        try:
            self._write(self.entry.ended(status, finished=_now(), error=error))
        except StorageError as exc:
            log.info("run %s ended %s but its journal entry could not say so: %s", self.entry.id, status, exc)


def _now() -> str:
    return format_utc(datetime.now(UTC))


def new_seed() -> int:
    return random.SystemRandom().randrange(2**63)


@contextmanager
def journaled(
    settings: Settings, run_id: str, question: str, started: datetime, *, front_end: str, seed: int, resumed: int = 0
) -> Iterator[RunJournal]:
    """The run's journal over the block (see the module's docstring)."""
    meta_dir = settings.meta_dir
    entry = JournalEntry(
        run_id, question, settings.mode.name, front_end, format_utc(started), settings=snapshot(settings), seed=seed,
        resumed=resumed,
    )  # fmt: skip
    with exclusive_lock(lock_path(meta_dir, run_id)):
        journal = RunJournal(meta_dir, entry, user_key(settings.state_dir))
        try:
            write_entry(meta_dir, entry, journal.key)
            yield journal
        except (asyncio.CancelledError, KeyboardInterrupt):
            journal.end("cancelled")
            raise
        except BaseException as exc:
            journal.end("failed", error_message(exc))
            raise
        finally:
            journal.end("failed", "the run ended without a report")
            # The entry says how the run ended before its lock file goes: a reader that opened the
            # file meanwhile finds the lock free, reads the entry again, and sees the end. A start
            # that could not be written (a full disk) leaves no lock file behind either.
            with contextlib.suppress(OSError):
                lock_path(meta_dir, run_id).unlink()
