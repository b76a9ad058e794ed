"""The summary index of the critique files: ``reports/meta/index.sqlite``.

Parsing thousands of YAML files takes seconds; selection, effects and ``memory list`` need
a few numbers from each, or the critique as loaded. The index keeps those (see
:mod:`.index_rows`) beside the files. It is a cache, never an authority: the YAML stays
the truth.

* :meth:`CritiqueIndex.refresh` lists the critique files, ``lstat``s each one and
  re-reads, with the real loader, every file whose signature (inode, size, mtime,
  ctime, mode) differs from its row; rows of files that are gone are deleted. A hand
  edit, a file swapped for a symlink or a pruned file is therefore picked up at once,
  and a file the loader refuses is stored as refused, with its reason.
* Every row carries a MAC keyed by the user's secret key (:mod:`.index_sign`). A file row
  whose MAC fails, or whose count of use rows does not match, is re-read from its file
  at the refresh; a use row or a kept critique is checked when a query reads it, and a
  failure sends its file to be re-read. So an edited row (``passed = 0``, a forged use)
  changes nothing anyone sees. Without the key, the index is built in memory only.
* Nothing from the index reaches a prompt by itself: selection re-reads the few
  critiques lessons are drawn from with the loader (see :mod:`..lessons`), and values
  read back are checked again (keys, finite numbers).
* Writes are SQLite transactions in WAL mode (atomic; readers never see half a
  refresh; concurrent runs queue for the write lock). Files are parsed before the lock
  is taken. No wait lasts past the caller's ``time_left`` (a run's remaining time): a
  lock held longer, or files that take longer to read, raise :class:`IndexBusy` (what
  was read so far is kept for the next time).
* The index file (and its ``-wal``/``-shm`` companions) must be regular files: a
  symlink, FIFO or other special file there is left alone and the index is built in
  memory instead, as it is when the folder cannot be written or the file is damaged
  beyond a rebuild. Without any critique file no index is created.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from .critique_types import Critique
from .files import LoadedCritique, future_problem
from .index_db import (
    FILE_COLUMNS,
    FILE_SIGNED,
    USE_COLUMNS,
    USE_READ,
    USE_SIGNED,
    IndexBusy,
    TimeLeft,
    bound,
    busy,
    connect_file,
    connect_memory,
)
from .index_files import Listing, list_files
from .index_parse import parse_files
from .index_rows import Parsed
from .index_sign import RowSigner
from .index_uses import ArmSum, arm_sums_of, newest_texts_of

__all__ = [
    "INDEX_NAME",
    "CritiqueIndex",
    "IndexBusy",
    "Listing",
    "Refresh",
    "Standing",
    "TimeLeft",
    "list_critiques",
    "list_files",
    "open_index",
]

INDEX_NAME = "index.sqlite"
MISNAMED = "file name is not critique-<run id>.yaml"

_STANDINGS = """
SELECT name,
    CASE
        WHEN stamp < :cutoff THEN :expired
        WHEN stamp > :future THEN 'dated in the future'
        WHEN ok = 0 THEN 'invalid: ' || reason
        WHEN reason != '' THEN reason
        WHEN created > :latest THEN 'dated in the future (' || strftime('%Y-%m-%dT%H:%M:%SZ', created, 'unixepoch') || ')'
        WHEN domain != :domain THEN 'other domain (' || domain || ')'
    END,
    run_id, model, adaptive, mean, passed, available
FROM files ORDER BY stamp DESC, name DESC
"""
_PASSING = """
SELECT domain, COUNT(*) FROM files
WHERE stamp >= :cutoff AND stamp <= :future AND ok = 1 AND reason = '' AND created <= :latest AND passed = 1
GROUP BY domain
"""
_LISTING = """
SELECT f.name, f.ok, f.reason, f.sig, b.sig, b.body, b.mac FROM files f LEFT JOIN bodies b ON b.name = f.name
ORDER BY f.stamp DESC, f.name DESC
"""
# A file as a run in some domain sees it: (name, why it cannot serve the run or None,
# run id, model, adaptive 0/1, mean, passed 0/1, lessons available 0/1).
Standing = tuple[str, "str | None", str, str, int, "float | None", int, int]


@dataclass(frozen=True)
class Refresh:
    """What one refresh did: files listed, files (re-)read, rows removed, whether the index
    lives on disk (False: built in memory), ``critique-*`` files badly named, and rows
    whose MAC (or count of use rows) did not check and that were rebuilt from their files."""

    files: int
    read: int
    removed: int
    on_disk: bool
    misnamed: tuple[Path, ...] = ()
    forged: int = 0


class CritiqueIndex:
    """One open summary index; use :func:`open_index` and close it (or use ``with``)."""

    def __init__(
        self,
        meta_dir: Path,
        conn: sqlite3.Connection,
        on_disk: bool,
        *,
        key: bytes | None = None,
        time_left: TimeLeft | None = None,
    ) -> None:
        self.meta_dir = Path(meta_dir)
        self._conn = conn
        self.on_disk = on_disk
        self._signer = RowSigner(key if on_disk else None)
        self._time_left = time_left
        self.last = Refresh(0, 0, 0, on_disk)  # what the latest refresh did
        self._files: dict[str, tuple[str, str, float, int]] = {}  # checked files with use rows
        self._use_rows: dict[tuple[str | None, str, float], list[tuple[object, ...]]] = {}  # checked

    def __enter__(self) -> CritiqueIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._conn.close()

    @property
    def busy_timeout(self) -> float:
        """Seconds the next statement would wait for another process's lock: SQLite's busy
        timeout, set from the caller's ``time_left()``."""
        bound(self._conn, self._time_left)
        (milliseconds,) = self._conn.execute("PRAGMA busy_timeout").fetchone()
        return milliseconds / 1000

    def _query(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[Any]:
        """Rows of ``sql``; a lock held past the time the caller may wait raises IndexBusy."""
        try:
            bound(self._conn, self._time_left)
            return self._conn.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise self._busy(exc) from None

    # --- keeping the rows true to the files ---------------------------------------------

    def refresh(self, listing: Listing | None = None) -> Refresh:
        """Bring the rows up to date with the critique files, rebuilding any row whose MAC
        fails (see the module docstring). ``listing``: what :func:`list_files` just returned."""
        listing = listing if listing is not None else list_files(self.meta_dir)
        known, forged = self._checked_rows()
        stale = [(name, sig) for name, sig in listing.files.items() if known.get(name) != sig]
        gone = [name for name in (*known, *forged) if name not in listing.files]
        parsed = parse_files(self.meta_dir, stale, time_left=self._time_left)
        if parsed or gone:
            try:
                self._write(parsed, gone)
            except sqlite3.Error as exc:
                if not self.on_disk or busy(exc):
                    raise self._busy(exc) from None
                self._fall_back()  # cannot write here (read-only): build in memory
                return self.refresh(listing)
            self._know(parsed, gone)
        if len(parsed) < len(stale):
            raise IndexBusy(
                f"ran out of time reading {len(stale):,} changed critique files in {self.meta_dir} "
                f"({len(parsed):,} read; the next run goes on from there)"
            )
        self.last = Refresh(len(listing.files), len(parsed), len(gone), self.on_disk, listing.misnamed, len(forged))
        return self.last

    def _busy(self, exc: sqlite3.Error) -> Exception:
        if busy(exc):
            return IndexBusy(f"the memory index in {self.meta_dir} stayed locked by another process")
        return exc

    def _fall_back(self) -> None:
        self._conn.close()
        self._conn, self.on_disk = connect_memory(), False
        self._signer = RowSigner(None)

    def _checked_rows(self) -> tuple[dict[str, str], set[str]]:
        """``name -> signature`` of the file rows whose MAC checks, and the names of rows that
        do not. What effects need of the good ones is kept (:meth:`_uses` checks against it)."""
        good, bad = self._signer.good("files", self._query(f"SELECT {FILE_COLUMNS}, mac FROM files"), FILE_SIGNED)
        self._use_rows.clear()
        # (domain, stamp, created, nuses) of each good file with use rows
        self._files = {row[0]: (row[7], row[5], row[6], row[13]) for row in good if row[13]}
        return {row[0]: row[1] for row in good}, {row[0] for row in bad}

    def _know(self, parsed: list[Parsed], gone: Iterable[str]) -> None:
        """Keep what :meth:`_uses` checks against up to date with rows just written."""
        self._use_rows.clear()
        for name in gone:
            self._files.pop(name, None)
        for p in parsed:
            row = p.file.stored()
            if p.file.nuses:
                self._files[p.file.name] = (row[7], row[5], row[6], row[13])  # type: ignore[assignment]
            else:
                self._files.pop(p.file.name, None)

    def _write(self, parsed: list[Parsed], gone: Iterable[str]) -> None:
        conn, sign = self._conn, self._signer.sign
        bound(conn, self._time_left)
        conn.execute("BEGIN IMMEDIATE")
        try:
            names = [(p.file.name,) for p in parsed] + [(name,) for name in gone]
            for table in ("uses", "files", "bodies"):
                conn.executemany(f"DELETE FROM {table} WHERE name = ?", names)
            files = [p.file.stored() for p in parsed]
            conn.executemany(
                f"INSERT INTO files ({FILE_COLUMNS}, mac) VALUES ({', '.join('?' * 15)})",
                [(*row, sign("files", row)) for row in files],
            )
            conn.executemany(
                f"INSERT INTO uses ({USE_COLUMNS}, mac) VALUES ({', '.join('?' * 10)})",
                [(*use.stored(), sign("uses", use.signed())) for p in parsed for use in p.uses],
            )
            bodies = [(p.file.name, p.file.sig, p.body) for p in parsed if p.body is not None]
            conn.executemany(
                "INSERT INTO bodies (name, sig, body, mac) VALUES (?, ?, ?, ?)",
                [(*row, sign("bodies", row)) for row in bodies],
            )
            conn.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            raise

    def _rebuild(self, names: Iterable[str]) -> None:
        """Drop the rows of ``names`` (they failed a check when read) and refresh: their files are re-read."""
        try:
            self._write([], names)
        except sqlite3.Error as exc:
            raise self._busy(exc) from None
        self.refresh()

    def clear(self) -> None:
        """Drop every row, so that the next refresh reads every file again."""
        try:
            self._write([], [name for (name,) in self._query("SELECT name FROM files UNION SELECT name FROM uses")])
        except sqlite3.Error as exc:
            raise self._busy(exc) from None

    # --- what selection, effects and ``memory list`` ask ------------------------------------

    def standings(
        self, domain: str, *, cutoff: str, future: str, latest: float, expired: str
    ) -> list[Standing]:
        """Every file newest first, with why it cannot serve a run in ``domain``, checked in
        this order: run time (from its name) before ``cutoff`` (``expired`` is the reason),
        run time after ``future``, refused by the loader, suspect, own timestamp after
        ``latest`` (seconds), another domain. The reason is None for a valid file of ``domain``."""
        values = {"cutoff": cutoff, "future": future, "latest": latest, "expired": expired, "domain": domain}
        return list(self._query(_STANDINGS, values))

    def passing_by_domain(self, *, cutoff: str, future: str, latest: float) -> dict[str, int]:
        """How many valid, passing critiques each domain has from ``cutoff`` to ``future``
        (run times) and not timed after ``latest``: what :meth:`standings` would leave eligible."""
        values = {"cutoff": cutoff, "future": future, "latest": latest}
        return dict(self._query(_PASSING, values))

    def keys(self) -> list[str]:
        """Every lesson key some critique applied or withheld."""
        return [key for (key,) in self._query("SELECT DISTINCT key FROM uses")]

    def _uses(self, domain: str | None, future: str, latest: float) -> list[tuple[object, ...]]:
        """Every use row of the critiques of ``domain`` (or of every domain) whose run is not
        after ``future`` and that are not timed after ``latest``, each checked: its MAC, and
        the count of each file's rows against the count its signed file row holds (a row
        deleted or added behind the index's back). A file that fails is re-read from the
        YAML and the rows are read again (once). Rows as :data:`USE_READ` has them."""
        window = (domain, future, latest)
        if window in self._use_rows:
            return self._use_rows[window]
        where = "stamp <= ? AND created <= ?" + ("" if domain is None else " AND domain = ?")
        params = [future, latest] + ([] if domain is None else [domain])
        for attempt in range(2):
            read = self._query(f"SELECT {USE_READ} FROM uses WHERE {where}", params)
            good, bad = self._signer.good("uses", read, USE_SIGNED)
            counts = Counter(row[0] for row in good)
            expected = {
                name: nuses for name, (where_, stamp, created, nuses) in self._files.items()
                if (domain is None or where_ == domain) and stamp <= future and created <= latest
            }  # fmt: skip
            forged = {row[0] for row in bad}
            forged.update(name for name in expected.keys() | counts.keys() if expected.get(name) != counts[name])
            if not forged or attempt:
                break
            self._rebuild(forged)  # clears the rows kept so far
        self._use_rows[window] = good
        return good

    def arm_sums(self, keys: list[str], *, domain: str | None, future: str, latest: float) -> list[ArmSum]:
        """``(domain, key, arm, count, sum, sum of squares)`` of each key's target over the
        critiques that applied (or withheld) it, leaving out those where it does not apply."""
        wanted = set(keys)
        return arm_sums_of(row for row in self._uses(domain, future, latest) if row[1] in wanted)

    def newest_texts(
        self, keys: list[str], *, domain: str | None, future: str, latest: float
    ) -> dict[tuple[str, str], str]:
        """``(domain, key) -> text`` of the newest critique that applied each key (same filter)."""
        wanted = set(keys)
        return newest_texts_of(row for row in self._uses(domain, future, latest) if row[1] in wanted)

    def critiques(self, now: datetime | None = None) -> list[LoadedCritique]:
        """Every critique file newest first, loaded or with the reason it was refused, as
        :func:`~research_agent.memory.store.files.load_all` gives them, from the index: a
        kept critique whose MAC fails sends its file to be re-read."""
        for attempt in range(2):
            loaded, forged = self._loaded(now)
            if not forged or attempt:
                break
            self._rebuild(forged)
        return loaded + [LoadedCritique(path, None, MISNAMED) for path in self.last.misnamed]

    def _loaded(self, now: datetime | None) -> tuple[list[LoadedCritique], set[str]]:
        loaded: list[LoadedCritique] = []
        forged: set[str] = set()
        for name, ok, reason, sig, body_sig, body, mac in self._query(_LISTING):
            path = self.meta_dir / name
            if not ok:
                loaded.append(LoadedCritique(path, None, reason))
            elif body_sig != sig or not self._signer.check("bodies", (name, body_sig, body, mac), 3):
                forged.add(name)
            else:
                critique = Critique._from_valid(json.loads(body))
                problem = future_problem(critique, now) if now is not None else None
                loaded.append(LoadedCritique(path, None, problem) if problem else LoadedCritique(path, critique))
        return loaded, forged


def open_index(
    meta_dir: Path,
    *,
    key: bytes | None = None,
    on_disk: bool = True,
    time_left: TimeLeft | None = None,
    rebuild: bool = False,
) -> CritiqueIndex:
    """The index of ``meta_dir``, refreshed. On disk when there are critique files, the
    file can be used and the user's secret ``key`` is given; otherwise in memory (see the
    module docstring). ``time_left``: seconds the caller may still wait (IndexBusy past
    them). ``rebuild``: drop every row first, so that every file is read again."""
    meta_dir = Path(meta_dir)
    listing = list_files(meta_dir)
    use_disk = on_disk and key is not None and bool(listing.files)
    conn = connect_file(meta_dir / INDEX_NAME, time_left) if use_disk else None
    index = CritiqueIndex(meta_dir, conn or connect_memory(), conn is not None, key=key, time_left=time_left)
    try:
        if rebuild:
            index.clear()
        index.refresh(listing)
    except BaseException:
        index.close()
        raise
    return index


def list_critiques(meta_dir: Path, *, key: bytes | None, now: datetime | None = None) -> list[LoadedCritique]:
    """What :func:`~research_agent.memory.store.files.load_all` gives, answered from the index."""
    with open_index(meta_dir, key=key) as index:
        return index.critiques(now)
