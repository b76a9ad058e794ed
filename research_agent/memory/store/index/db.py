"""Opening the summary index's SQLite database safely (see :mod:`.summary`).

The file and its ``-wal``/``-shm``/``-journal`` companions must be regular files: a
symlink, FIFO or other special file is left alone and None is returned (the caller
builds the index in memory instead). A missing index is created under a temporary name
and linked into place, so a full disk or a crash never leaves half a database; a damaged
one is removed and created again; tables made for another layout are rebuilt.

Waiting: another process may hold the index's write lock for a moment (concurrent runs
queue for it), so every statement waits for a lock, but never longer than the caller's
``time_left()`` (a run's remaining time; :data:`MAX_WAIT` at most, and that when there is no
deadline). The wait is SQLite's busy timeout, set before each statement that may wait
(:func:`bound`); a lock still held when it runs out raises :class:`IndexBusy`.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import sqlite3
import stat
from collections.abc import Callable
from pathlib import Path

from ....errors import IndexBusy
from ....files.atomic import TEMP_SUFFIX
from ..targets import TARGET_MAP

__all__ = [
    "FILE_COLUMNS",
    "USE_COLUMNS",
    "USE_READ",
    "USE_SIGNED",
    "FILE_SIGNED",
    "MAX_WAIT",
    "IndexBusy",
    "TimeLeft",
    "bound",
    "busy",
    "connect_file",
    "connect_memory",
    "wait_seconds",
]

# 2: a suspect critique has no use rows; 3: suspect, availability and evidence per file, reason
# and question per use; 4: rows signed (a MAC each), each file's count of use and measure rows,
# the critique kept for memory list; 5: the mean score and trial probability per use, whole-run
# baselines per file (effects compare each lesson's own trial arms only); 6: a hash of each file's
# scores (a score edited by hand reaches the trial ledger even when the mean and the verdict stay)
INDEX_VERSION = 6
_COMPANIONS = ("-wal", "-shm", "-journal")
MAX_WAIT = 30.0  # seconds one statement waits for another process's write to finish, at most

TimeLeft = Callable[[], float]  # seconds the caller may still wait (a run's remaining time)


def wait_seconds(time_left: TimeLeft | None) -> float:
    """How long the next statement may wait for the lock: ``time_left()`` (at most
    :data:`MAX_WAIT`, never below 0), or :data:`MAX_WAIT` without a deadline."""
    if time_left is None:
        return MAX_WAIT
    return max(0.0, min(MAX_WAIT, time_left()))


def bound(conn: sqlite3.Connection, time_left: TimeLeft | None) -> None:
    """Set ``conn``'s busy timeout to :func:`wait_seconds` (in milliseconds, as SQLite takes it)."""
    conn.execute(f"PRAGMA busy_timeout = {round(wait_seconds(time_left) * 1000)}")


def busy(exc: BaseException) -> bool:
    """Whether ``exc`` is SQLite's "database is locked" (the lock was still held when the wait ran out)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is None:
        return isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)
    return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)

FILE_COLUMNS = (
    "name, sig, ok, reason, run_id, stamp, created, domain, model, mean, passed, adaptive, suspect, available, "
    "nuses, nmeasures, baseline, digest"
)  # what a file row's MAC covers; its evidence has a MAC of its own, checked when it is read
FILE_SIGNED = len(FILE_COLUMNS.split(", "))
USE_COLUMNS = "name, key, arm, stage, domain, stamp, created, value, reason, question, mean, p"
# signed values, MAC, the rest
USE_READ = "name, key, arm, stage, value, reason, question, mean, p, mac, domain, stamp, created"
USE_SIGNED = 9  # how many of USE_READ's columns a use row's MAC covers
_SCHEMA = """
CREATE TABLE layout (value TEXT NOT NULL);
CREATE TABLE files (
    name TEXT PRIMARY KEY, sig TEXT NOT NULL, ok INTEGER NOT NULL, reason TEXT NOT NULL,
    run_id TEXT NOT NULL, stamp TEXT NOT NULL, created REAL, domain TEXT NOT NULL, model TEXT NOT NULL,
    mean REAL, passed INTEGER NOT NULL, adaptive INTEGER NOT NULL, suspect TEXT NOT NULL,
    available INTEGER NOT NULL, nuses INTEGER NOT NULL, nmeasures INTEGER NOT NULL, baseline INTEGER NOT NULL,
    digest TEXT NOT NULL, mac BLOB NOT NULL,
    evidence TEXT NOT NULL, evidence_mac BLOB NOT NULL
);
CREATE TABLE uses (
    name TEXT NOT NULL, key TEXT NOT NULL, arm TEXT NOT NULL, stage TEXT NOT NULL,
    domain TEXT NOT NULL, stamp TEXT NOT NULL, created REAL NOT NULL, value REAL,
    reason TEXT NOT NULL, question TEXT NOT NULL, mean REAL, p REAL, mac BLOB NOT NULL,
    PRIMARY KEY (name, key)
);
CREATE TABLE measures (
    name TEXT NOT NULL, target TEXT NOT NULL, value REAL, mac BLOB NOT NULL, PRIMARY KEY (name, target)
);
CREATE TABLE bodies (name TEXT PRIMARY KEY, sig TEXT NOT NULL, body TEXT NOT NULL, mac BLOB NOT NULL);
CREATE INDEX uses_key ON uses (domain, key, stamp, created, arm, value, question, name);
CREATE INDEX uses_recent ON uses (domain, stamp, name);
CREATE INDEX files_sig ON files (name, sig);
CREATE INDEX files_standing ON files (stamp, name, ok, created, domain, reason, run_id, model, adaptive, mean, passed);
CREATE INDEX files_domain ON files (domain, stamp, ok, passed, suspect, created)
"""
# The index is rebuilt whenever its tables or the targets the keys read change.
_LAYOUT = f"{INDEX_VERSION}:" + hashlib.sha256((_SCHEMA + TARGET_MAP).encode()).hexdigest()[:16]


def _special(path: Path) -> bool:
    """Whether ``path`` exists as anything but a regular file (a symlink included)."""
    try:
        return not stat.S_ISREG(os.lstat(path).st_mode)
    except FileNotFoundError:
        return False
    except OSError:
        return True


def _prepare(conn: sqlite3.Connection, time_left: TimeLeft | None = None) -> None:
    """Create the tables, or drop and recreate them when they were made for another layout."""
    bound(conn, time_left)
    with contextlib.suppress(sqlite3.OperationalError):  # WAL needs shared memory; plain journals work too
        conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    if _layout(conn) == _LAYOUT:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        if _layout(conn) != _LAYOUT:  # another process may have just rebuilt it
            for table in ("layout", "files", "uses", "measures", "bodies"):
                conn.execute(f"DROP TABLE IF EXISTS {table}")
            for statement in _SCHEMA.split(";"):
                conn.execute(statement)
            conn.execute("INSERT INTO layout VALUES (?)", (_LAYOUT,))
        conn.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")
        raise


def _layout(conn: sqlite3.Connection) -> str | None:
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'layout'").fetchone():
        return None
    row = conn.execute("SELECT value FROM layout").fetchone()
    return row[0] if row else None


def _uri(path: Path, mode: str) -> str:
    """An SQLite URI that opens ``path`` without creating it (``mode``: ro or rw)."""
    return f"{Path(path).absolute().as_uri()}?mode={mode}"


def _create(path: Path) -> bool:
    """Create an empty index at ``path`` all at once (built under a temporary name, then
    linked into place), so a full disk or a crash never leaves half a database behind.
    False when it cannot be created; True also when another process created it first."""
    temp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}{TEMP_SUFFIX}")
    try:
        conn = sqlite3.connect(str(temp), isolation_level=None)
        try:
            _prepare(conn)
        finally:
            conn.close()
        os.link(temp, path)
    except FileExistsError:
        return True  # another run made it meanwhile: use theirs
    except (OSError, sqlite3.Error):
        return False
    finally:
        for suffix in ("", *_COMPANIONS):
            with contextlib.suppress(OSError):
                os.unlink(f"{temp}{suffix}")
    return True


def connect_file(path: Path, time_left: TimeLeft | None = None) -> sqlite3.Connection | None:
    """The on-disk index, ready; None when it must not or cannot be used. Waits for another
    process's lock at most :func:`wait_seconds` per statement; raises IndexBusy past that."""
    if any(_special(Path(f"{path}{suffix}")) for suffix in ("", *_COMPANIONS)):
        return None
    for attempt in range(2):
        if not os.path.lexists(path) and not _create(path):
            return None
        conn = None
        try:
            conn = sqlite3.connect(
                _uri(path, "rw"), uri=True, timeout=wait_seconds(time_left), isolation_level=None
            )
            _prepare(conn, time_left)
            return conn
        except sqlite3.DatabaseError as exc:
            if conn is not None:
                conn.close()
            if busy(exc):
                raise IndexBusy(f"the memory index {path} stayed locked by another process") from None
            if attempt == 0 and _is_damaged(path, time_left):
                _remove_index(path)
                continue
            return None
    return None


def _is_damaged(path: Path, time_left: TimeLeft | None) -> bool:
    """Whether ``path`` is not a usable SQLite database (as opposed to locked or read-only)."""
    try:
        conn = sqlite3.connect(_uri(path, "ro"), uri=True, timeout=wait_seconds(time_left))
        try:
            conn.execute("PRAGMA schema_version").fetchone()
            return False
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        return "not a database" in str(exc) or "malformed" in str(exc)


def _remove_index(path: Path) -> None:
    for suffix in ("", *_COMPANIONS):
        target = Path(f"{path}{suffix}")
        if not _special(target):
            with contextlib.suppress(FileNotFoundError):
                target.unlink()


def connect_memory() -> sqlite3.Connection:
    """An empty index in memory (for a folder whose index file cannot be used)."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    _prepare(conn)
    return conn
