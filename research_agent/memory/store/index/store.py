"""The summary index's rows, kept true to the critique files and checked (see :mod:`.summary`).

:class:`IndexStore` refreshes the rows from the files (re-reading what changed, in worker
processes when much did), writes them signed, checks them on the way back (a file row at
every refresh, use rows when read, with each file's count of them), rebuilds from its file
whatever fails a check, and seals the index once every row in it was checked
(:mod:`.seal`). Every statement waits for another process's lock at most the
caller's ``time_left()``.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

from .db import (
    FILE_COLUMNS,
    FILE_SIGNED,
    USE_COLUMNS,
    USE_READ,
    USE_SIGNED,
    IndexBusy,
    TimeLeft,
    bound,
    busy,
    connect_memory,
)
from .listing import Listing, list_files
from .parse import parse_files
from .rows import Rows
from .seal import IndexTrust
from .sign import RowSigner

__all__ = ["INDEX_NAME", "IndexStore", "Refresh"]

INDEX_NAME = "index.sqlite"
_SEALED_COLUMNS = "name, sig, domain, stamp, created, nuses, nmeasures"  # a sealed index's file rows, as read


@dataclass(frozen=True)
class Refresh:
    """What one refresh did: files listed, files (re-)read, rows removed, whether the index
    lives on disk (False: built in memory), ``critique-*`` files badly named, and rows
    whose MAC did not check and that were rebuilt from their files."""

    files: int
    read: int
    removed: int
    on_disk: bool
    misnamed: tuple[Path, ...] = ()
    forged: int = 0
    sealed: bool = False  # the index was as this user's tool last checked it: no row was checked again


class IndexStore:
    """One open summary index: its rows kept true to the files and checked (the queries are
    :class:`~.summary.CritiqueIndex`'s, which :func:`~.summary.open_index` opens)."""

    def __init__(
        self,
        meta_dir: Path,
        conn: sqlite3.Connection,
        on_disk: bool,
        *,
        trust: IndexTrust | None = None,
        sealed: bool = False,
        time_left: TimeLeft | None = None,
    ) -> None:
        self.meta_dir = Path(meta_dir)
        self._conn = conn
        self.on_disk = on_disk
        self._trust = trust if on_disk else None
        self.owner = trust  # the user's trust as given, whether or not the index lives on disk
        self.trial_ledger: Any = None  # the trial ledger, once :meth:`~.summary.CritiqueIndex.ledger` opened it
        self._signer = RowSigner(self._trust.key if self._trust is not None else None)
        self._sealed = sealed and self._trust is not None  # its rows were checked before: none is again
        self._time_left = time_left
        self.last = Refresh(0, 0, 0, on_disk)  # what the latest refresh did
        self._files: dict[str, tuple[str, str, float, int, int]] = {}  # checked files with use rows
        self._checked: set[str | None] = set()  # domains whose use rows were checked (None: all)
        self._measures_checked = False

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is None:
            self.close_and_seal()
        else:
            self.close()

    def close(self) -> None:
        self._conn.close()

    def close_and_seal(self) -> None:
        """Close, and seal the index file (:mod:`.seal`) when every row it holds was
        checked or written in this session (or it was sealed and only this session wrote)."""
        self.close()
        if self._trust is not None and self._sealed:
            self._trust.seal(self.meta_dir / INDEX_NAME)

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
        self.last = Refresh(
            len(listing.files), len(parsed), len(gone), self.on_disk, listing.misnamed, len(forged), self._sealed
        )
        if self._trust is not None and not self._sealed:
            self.check_uses(None)  # every use and measure row checked (or rebuilt):
            self.check_measures()  # the index can be sealed
            self._sealed = True
        return self.last

    def _busy(self, exc: sqlite3.Error) -> Exception:
        if busy(exc):
            return IndexBusy(f"the memory index in {self.meta_dir} stayed locked by another process")
        return exc

    def _fall_back(self) -> None:
        self._conn.close()
        self._conn, self.on_disk = connect_memory(), False
        self._signer, self._trust, self._sealed = RowSigner(None), None, False  # nothing on disk to seal

    def _checked_rows(self) -> tuple[dict[str, str], set[str]]:
        """``name -> signature`` of the file rows whose MAC checks, and the names of rows that
        do not. What the use checks need of the good ones is kept (:meth:`check_uses`)."""
        if self._sealed:  # checked before: only what the refresh and the use checks need
            rows = self._query(f"SELECT {_SEALED_COLUMNS} FROM files")
            self._files = {row[0]: row[2:] for row in rows if row[5]}
            return {row[0]: row[1] for row in rows}, set()
        rows = self._query(f"SELECT {FILE_COLUMNS}, mac FROM files")
        good, bad = self._signer.good("files", rows, FILE_SIGNED)
        self._files = {row[0]: _use_counts(row) for row in good if row[14]}
        return {row[0]: row[1] for row in good}, {row[0] for row in bad}

    def _know(self, parsed: list[Rows], gone: Iterable[str]) -> None:
        """Keep what :meth:`check_uses` checks against up to date with rows just written."""
        for name in gone:
            self._files.pop(name, None)
        for p in parsed:
            if p.file.nuses:
                self._files[p.file.name] = _use_counts(p.file.stored())
            else:
                self._files.pop(p.file.name, None)

    def _write(self, parsed: list[Rows], gone: Iterable[str]) -> None:
        conn, sign = self._conn, self._signer.sign
        bound(conn, self._time_left)
        conn.execute("BEGIN IMMEDIATE")
        try:
            names = [(p.file.name,) for p in parsed] + [(name,) for name in gone]
            for table in ("uses", "measures", "files", "bodies"):
                conn.executemany(f"DELETE FROM {table} WHERE name = ?", names)
            files = [(p.file.stored(), (p.file.name, p.file.sig, p.file.evidence)) for p in parsed]
            conn.executemany(
                f"INSERT INTO files ({FILE_COLUMNS}, mac, evidence, evidence_mac) "
                f"VALUES ({', '.join('?' * (FILE_SIGNED + 3))})",
                [(*row, sign("files", row), evidence[2], sign("evidence", evidence)) for row, evidence in files],
            )
            conn.executemany(
                f"INSERT INTO uses ({USE_COLUMNS}, mac) VALUES ({', '.join('?' * (len(USE_COLUMNS.split(', ')) + 1))})",
                [(*use.stored(), sign("uses", use.signed())) for p in parsed for use in p.uses],
            )
            conn.executemany(
                "INSERT INTO measures (name, target, value, mac) VALUES (?, ?, ?, ?)",
                [(*m.stored(), sign("measures", m.stored())) for p in parsed for m in p.measures],
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

    def check_uses(self, domain: str | None) -> None:
        """Check every use row of ``domain`` (None: of every domain) before a query reads them:
        its MAC, its domain and times against its signed file row's, and each file's count of
        rows against the count that row holds (a row deleted, added or moved behind the index's
        back). A file that fails is re-read from the YAML (then checked once more). Nothing to
        do in a sealed index, or for a domain already checked."""
        if self._sealed or None in self._checked or domain in self._checked:
            return
        where, params = ("", []) if domain is None else (" WHERE domain = ?", [domain])
        for attempt in range(2):
            good, bad = self._signer.good("uses", self._query(f"SELECT {USE_READ} FROM uses{where}", params), USE_SIGNED)
            files = self._files  # (domain, stamp, created, uses, measures) of each checked file with uses
            counts = Counter(row[0] for row in good)
            expected = {name: f[3] for name, f in files.items() if domain is None or f[0] == domain}
            forged = {row[0] for row in bad}
            forged.update(name for name in expected.keys() | counts.keys() if expected.get(name) != counts[name])
            forged.update(row[0] for row in good if tuple(row[USE_SIGNED + 1 :]) != files.get(row[0], ())[:3])
            if not forged or attempt:
                break
            self._rebuild(forged)
        self._checked.add(domain)

    def check_measures(self) -> None:
        """Check every measure row (the values of a person's lessons' targets) before a query
        reads them: its MAC, and each file holding them has one per target. A file that fails
        is re-read (then checked once more). Nothing to do in a sealed index."""
        if self._sealed or self._measures_checked:
            return
        for attempt in range(2):
            good, bad = self._signer.good("measures", self._query("SELECT name, target, value, mac FROM measures"), 3)
            counts = Counter(row[0] for row in good)
            expected = {name: f[4] for name, f in self._files.items() if f[4]}
            forged = {row[0] for row in bad}
            forged.update(name for name in expected.keys() | counts.keys() if expected.get(name) != counts[name])
            if not forged or attempt:
                break
            self._rebuild(forged)
        self._measures_checked = True

def _use_counts(row: tuple[object, ...]) -> tuple[str, str, float, int, int]:
    """(domain, run-time stamp, created, use rows, measure rows) of a file row as stored."""
    return (row[7], row[5], row[6], row[14], row[15])  # type: ignore[return-value]  # those columns' types
