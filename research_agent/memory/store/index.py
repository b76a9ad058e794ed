"""The summary index of the critique files: ``reports/meta/index.sqlite``.

Parsing thousands of YAML files takes seconds; selection and effects need a few numbers
from each. The index keeps those numbers (see :mod:`.index_rows`) beside the files, and
the YAML stays the truth:

* :meth:`CritiqueIndex.refresh` lists the critique files, ``lstat``s each one and
  re-reads, with the real loader, every file whose signature (inode, size, mtime,
  ctime, mode) differs from its row; rows of files that are gone are deleted. A hand
  edit, a file swapped for a symlink or a pruned file is therefore picked up at once,
  and a file the loader refuses is stored as refused, with its reason.
* The index holds no free text: a file's *evidence* is the critique without its query,
  weaknesses, suggestions, flags, sub-query wording or lesson texts (see :mod:`.index_rows`),
  and lessons are built from it. Site names in it reach a prompt only when they name a site of
  the run's own sources (:mod:`research_agent.memory.lessons.setting`); values read back
  are checked again (keys, finite numbers).
* Writes are SQLite transactions in WAL mode (atomic; readers never see half a
  refresh; concurrent runs queue for the write lock). Files are parsed before the lock
  is taken.
* The index file (and its ``-wal``/``-shm`` companions) must be regular files: a
  symlink, FIFO or other special file there is left alone and the index is built in
  memory instead, as it is when the folder cannot be written or the file is damaged
  beyond a rebuild. Without any critique file no index is created.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from ...errors import ResearchError, StorageError
from ...files.safefile import check_folder_inside
from .critique_types import Critique
from .files import entry_for_name, is_critique_name
from .index_db import FILE_COLUMNS, connect_file, connect_memory
from .index_rows import MAX_VALUE, FileRow, UseRow, critique_from_evidence, rows_for, signature

__all__ = ["INDEX_NAME", "CritiqueIndex", "Listing", "Refresh", "Standing", "list_files", "open_index"]

INDEX_NAME = "index.sqlite"

_WINDOW = "stamp >= :cutoff AND stamp <= :future AND created <= :latest"
_STANDINGS = """
SELECT name,
    CASE
        WHEN stamp < :cutoff THEN :expired
        WHEN stamp > :future THEN 'dated in the future'
        WHEN ok = 0 THEN 'invalid: ' || reason
        WHEN suspect != '' THEN suspect
        WHEN created > :latest THEN 'dated in the future (' || strftime('%Y-%m-%dT%H:%M:%SZ', created, 'unixepoch') || ')'
        WHEN domain != :domain THEN 'other domain (' || domain || ')'
    END,
    run_id, model, adaptive, mean, passed
FROM files ORDER BY stamp DESC, name DESC LIMIT :cap
"""
_PASSING = f"""
SELECT domain, COUNT(*) FROM files WHERE {_WINDOW} AND ok = 1 AND passed = 1 AND suspect = '' GROUP BY domain
"""
_POOL = f"""
SELECT name, run_id, evidence FROM files
WHERE domain = :domain AND ok = 1 AND passed = 1 AND suspect = '' AND {_WINDOW}
ORDER BY stamp DESC, name DESC LIMIT :limit
"""
_RUNS = f"""
SELECT run_id, model, adaptive, mean FROM files
WHERE domain = :domain AND ok = 1 AND suspect = '' AND available = 1 AND {_WINDOW}
"""
_LAST_KEYS = """
SELECT key FROM uses WHERE domain = :domain AND name = (
    SELECT name FROM uses WHERE domain = :domain AND stamp <= :future AND created <= :latest
    ORDER BY stamp DESC, name DESC LIMIT 1
)
"""
# A file as a run in some domain sees it: (name, why it cannot serve the run or None,
# run id, model, adaptive 0/1, mean, passed 0/1).
Standing = tuple[str, "str | None", str, str, int, "float | None", int]


class Listing(NamedTuple):
    """The critique files in a folder: each one's signature by name, and ``critique-*`` files badly named."""

    files: dict[str, str]
    misnamed: tuple[Path, ...]


def _lstat(name: str, folder: int, meta_dir: Path) -> os.stat_result:
    """``lstat`` of ``name`` in the open ``folder`` (by path where the platform cannot)."""
    if os.stat in os.supports_dir_fd:
        return os.stat(name, dir_fd=folder, follow_symlinks=False)
    return os.lstat(meta_dir / name)


def list_files(meta_dir: Path) -> Listing:
    """Every critique file's signature, from one directory listing and one ``lstat`` each
    (relative to the open folder, so the folder cannot be swapped half-way).

    A meta folder that is a symlink leading out of its parent folder raises (an InputError).
    """
    meta_dir = Path(meta_dir)
    check_folder_inside(meta_dir, meta_dir.parent)
    try:
        folder = os.open(meta_dir, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except FileNotFoundError:
        return Listing({}, ())
    except OSError as exc:
        raise StorageError(f"cannot list {meta_dir}: {exc.strerror or exc}") from None
    files: dict[str, str] = {}
    misnamed: list[Path] = []
    try:
        for name in os.listdir(folder):
            if not name.startswith("critique-"):
                continue
            if not is_critique_name(name):
                misnamed.append(meta_dir / name)
                continue
            try:
                files[name] = signature(_lstat(name, folder, meta_dir))
            except OSError:
                continue  # gone since the listing
    except OSError as exc:
        raise StorageError(f"cannot list {meta_dir}: {exc.strerror or exc}") from None
    finally:
        os.close(folder)
    return Listing(files, tuple(sorted(misnamed)))


@dataclass(frozen=True)
class Refresh:
    """What one refresh did: files listed, files (re-)read, rows removed, whether the index
    lives on disk (False: built in memory), and ``critique-*`` files badly named."""

    files: int
    read: int
    removed: int
    on_disk: bool
    misnamed: tuple[Path, ...] = ()


class CritiqueIndex:
    """One open summary index; use :func:`open_index` and close it (or use ``with``)."""

    def __init__(self, meta_dir: Path, conn: sqlite3.Connection, on_disk: bool) -> None:
        self.meta_dir = Path(meta_dir)
        self._conn = conn
        self.on_disk = on_disk
        self.last = Refresh(0, 0, 0, on_disk)  # what the latest refresh did

    def __enter__(self) -> CritiqueIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._conn.close()

    def refresh(self, listing: Listing | None = None) -> Refresh:
        """Bring the rows up to date with the critique files (see the module docstring).

        ``listing``: what :func:`list_files` just returned, if known.
        """
        listing = listing if listing is not None else list_files(self.meta_dir)
        known = dict(self._conn.execute("SELECT name, sig FROM files"))
        stale = [(name, sig) for name, sig in listing.files.items() if known.get(name) != sig]
        gone = [name for name in known if name not in listing.files]
        parsed = []
        for name, sig in stale:
            entry = entry_for_name(self.meta_dir, name)
            if entry is not None:
                parsed.append(rows_for(entry, sig, self.meta_dir))
        if parsed or gone:
            try:
                self._write(parsed, gone)
            except sqlite3.Error:
                if not self.on_disk:
                    raise
                self._conn.close()  # cannot write here (read-only, locked too long): build in memory
                self._conn, self.on_disk = connect_memory(), False
                return self.refresh(listing)
        self.last = Refresh(len(listing.files), len(parsed), len(gone), self.on_disk, listing.misnamed)
        return self.last

    def _write(self, parsed: list[tuple[FileRow, list[UseRow]]], gone: list[str]) -> None:
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            names = [(row.name,) for row, _ in parsed] + [(name,) for name in gone]
            conn.executemany("DELETE FROM uses WHERE name = ?", names)
            conn.executemany("DELETE FROM files WHERE name = ?", names)
            conn.executemany(
                f"INSERT INTO files ({FILE_COLUMNS}) VALUES ({', '.join('?' * len(FileRow._fields))})",
                [row for row, _ in parsed],
            )
            conn.executemany(
                f"INSERT INTO uses VALUES ({', '.join('?' * len(UseRow._fields))})",
                [use for _, uses in parsed for use in uses],
            )
            conn.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            raise

    def standings(
        self, domain: str, *, cutoff: str, future: str, latest: float, expired: str, cap: int = -1
    ) -> list[Standing]:
        """The newest ``cap`` files (every file for -1), newest first, each with why it cannot
        serve a run in ``domain``, checked in this order: run time (from its name) before
        ``cutoff`` (``expired`` is the reason), run time after ``future``, refused by the
        loader, suspect, own timestamp after ``latest`` (seconds), another domain. The reason
        is None for a valid file of ``domain``."""
        values = {"cutoff": cutoff, "future": future, "latest": latest, "expired": expired, "domain": domain}
        return self._conn.execute(_STANDINGS, {**values, "cap": cap}).fetchall()

    def passing_by_domain(self, *, cutoff: str, future: str, latest: float) -> dict[str, int]:
        """How many valid, passing, not suspect critiques each domain has from ``cutoff`` to
        ``future`` (run times) and not timed after ``latest``: what could serve a run."""
        values = {"cutoff": cutoff, "future": future, "latest": latest}
        return dict(self._conn.execute(_PASSING, values).fetchall())

    def pool(
        self, domain: str, *, cutoff: str, future: str, latest: float, limit: int
    ) -> list[tuple[str, Critique]]:
        """The newest ``limit`` critiques of ``domain`` that may feed lessons (valid, passing, not
        suspect, in the window), newest first, as ``(file name, critique without free text)``."""
        values = {"domain": domain, "cutoff": cutoff, "future": future, "latest": latest, "limit": limit}
        out = []
        for name, run_id, text in self._conn.execute(_POOL, values):
            critique = _evidence(text)
            if critique is not None and critique.id == run_id and critique.query_domain == domain:
                out.append((name, critique))
        return out

    def runs(self, domain: str, *, cutoff: str, future: str, latest: float) -> list[tuple[str, str, int, float]]:
        """``(run id, model, adaptive 0/1, mean)`` of every valid run of ``domain`` in the window that
        counts in suspension and collapse (not suspect, its memory was readable)."""
        values = {"domain": domain, "cutoff": cutoff, "future": future, "latest": latest}
        return self._conn.execute(_RUNS, values).fetchall()

    def last_keys(self, domain: str, *, future: str, latest: float) -> set[str]:
        """The keys the newest run of ``domain`` with any lesson recorded was eligible for
        (given or withheld): the lessons that were on before this run."""
        values = {"domain": domain, "future": future, "latest": latest}
        return {key for (key,) in self._conn.execute(_LAST_KEYS, values)}

    def keys(self) -> list[str]:
        """Every lesson key some critique applied or withheld."""
        return [key for (key,) in self._conn.execute("SELECT DISTINCT key FROM uses")]

    def uses(
        self, keys: list[str] | None, *, domain: str | None, future: str, latest: float
    ) -> list[tuple[str, str, str, str, str, float | None]]:
        """``(domain, key, file name, arm, question, value)`` of every use of ``keys`` (every key
        for None) by a run not after ``future`` whose critique is not timed after ``latest``, in
        ``domain`` when given; a value beyond any measurement reads as None."""
        if keys is not None and not keys:
            return []
        clause, params = "stamp <= ? AND created <= ?", [future, latest]
        if keys is not None:
            clause += f" AND key IN ({', '.join('?' * len(keys))})"
            params += keys
        if domain is not None:
            clause += " AND domain = ?"
            params.append(domain)
        query = (
            f"SELECT domain, key, name, arm, question, CASE WHEN abs(value) <= {MAX_VALUE} THEN value END "
            f"FROM uses WHERE {clause}"
        )
        return self._conn.execute(query, params).fetchall()


def _evidence(text: str) -> Critique | None:
    """The critique a row's evidence holds; None for a row that does not hold what the loader made
    (rows are only ever written by the loader: one that does not parse was not)."""
    try:
        return critique_from_evidence(text)
    except (ValueError, TypeError, KeyError, AttributeError, ResearchError):
        return None


def open_index(meta_dir: Path, *, on_disk: bool = True) -> CritiqueIndex:
    """The index of ``meta_dir``, refreshed. On disk when there are critique files and
    the file can be used; otherwise in memory (see the module docstring)."""
    meta_dir = Path(meta_dir)
    listing = list_files(meta_dir)
    conn = connect_file(meta_dir / INDEX_NAME) if on_disk and listing.files else None
    index = CritiqueIndex(meta_dir, conn or connect_memory(), conn is not None)
    try:
        index.refresh(listing)
    except BaseException:
        index.close()
        raise
    return index
