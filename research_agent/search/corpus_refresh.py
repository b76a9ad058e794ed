"""One refresh of a corpus index: drop what is gone, read what changed, count the rest.

A file is read again when its mtime or size changed, or when the index holds text
read under older extraction rules (the ``extraction_rules`` entry of its ``meta``
table differs from :data:`EXTRACTION_RULES`). Skips decided by a file's content are
remembered (by mtime and size) so that an unchanged file is not read again; other
skips are re-checked on every refresh. Work is committed every 100 files, so an
interrupted refresh keeps what it did.

Each indexed file keeps a digest of its passages (``text_sha``); after reading, files whose
text another indexed file already holds are demoted to ``duplicate_copy`` (the HTML copy is
kept, :func:`~research_agent.search.corpus_rules.preferred_copy`), and a remembered duplicate
is read again once the copy it duplicated is gone.
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import DiskFull, StorageError
from ..fetch.extract import Unreadable, extract
from ..fetch.processes.pool import EXTRACT_TIMEOUT
from ..sources import Document
from ..text.passages import split_passages
from .corpus_files import Scan, read_documents
from .corpus_rules import preferred_copy

__all__ = ["IndexStats", "Refresh", "storage_error", "EXTRACTION_RULES", "passages_digest"]

# Bump when research_agent.fetch.extract gives different text for the same bytes.
# 2: web pages and corpus files share one set of rules.
EXTRACTION_RULES = "4"  # 3: permalink marks (Sphinx's "¶") dropped from HTML; 4: titles apart, no "#" or rules
# A file that crashed or hung the extractor would do it again: it waits for a change too.
_STICKY_REASONS = frozenset(
    {"binary", "bad_encoding", "empty", "bad_pdf", "extract_crashed", "extract_timeout", "extract_error",
     "duplicate_copy"}
)
_DUPLICATE = "duplicate_copy"
Known = dict[str, tuple[int, int, int, str | None, str | None]]  # path -> (id, mtime_ns, size, skip, text_sha)


def passages_digest(passages: list[str]) -> str:
    """What two files with the same text share: a digest of their passages."""
    return hashlib.sha256("\x1e".join(passages).encode("utf-8")).hexdigest()[:32]
_SKIPPED_FILES_CAP = 200
_COMMIT_EVERY = 100


@dataclass(frozen=True)
class IndexStats:
    """What one :meth:`CorpusIndex.refresh` did.

    ``indexed`` files were (re-)read into the index, ``unchanged`` indexed files were
    left alone, ``removed`` files were gone from the corpus and dropped from the index.
    ``skipped`` counts every file not in the index, by reason (including skips
    remembered from earlier refreshes); ``skipped_files`` names them, capped.
    ``documents`` and ``passages`` are the index's totals after the refresh.
    """

    root: Path
    indexed: int
    unchanged: int
    removed: int
    skipped: dict[str, int]
    skipped_files: tuple[tuple[str, str], ...]
    seconds: float
    documents: int = 0
    passages: int = 0
    rebuilt: bool = False

    @property
    def skipped_total(self) -> int:
        return sum(self.skipped.values())


def storage_error(path: Path, exc: sqlite3.Error) -> StorageError:
    """The StorageError (DiskFull when the disk is full) for a failed write of index ``path``."""
    text = str(exc).lower()
    if "disk is full" in text:
        return DiskFull(f"disk full while writing the corpus index {path}")
    return StorageError(f"cannot use the corpus index {path}: {exc}")


@dataclass
class Refresh:
    """One refresh pass of an open index over a scanned corpus; :meth:`run` does it."""

    conn: sqlite3.Connection
    scan: Scan
    max_file_bytes: int
    extractor: Callable[..., Document | Unreadable] = extract
    extract_timeout: float = EXTRACT_TIMEOUT
    indexed: int = 0
    unchanged: int = 0
    removed: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    skipped_files: list[tuple[str, str]] = field(default_factory=list)
    documents: int = 0
    passages: int = 0

    def run(self, progress: Callable[[int, int], None] | None = None) -> None:
        """Bring the index up to date; ``progress(done, total)`` while changed files are read."""
        self._backfill_digests()
        known: Known = {
            row[1]: (row[0], row[2], row[3], row[4], row[5])
            for row in self.conn.execute("SELECT id, path, mtime_ns, size, skip_reason, text_sha FROM files")
        }
        for rel, reason in self.scan.skips:
            self._skip(rel, reason)
        self._remove_gone(known)
        todo = self._plan(known)
        self._read_changed(known, todo, progress)
        self._demote_copies(set(todo))
        self.conn.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES ('extraction_rules', ?)", (EXTRACTION_RULES,)
        )
        self.documents = self.conn.execute("SELECT count(*) FROM files WHERE skip_reason IS NULL").fetchone()[
            0
        ]
        self.passages = self.conn.execute("SELECT count(*) FROM passages").fetchone()[0]

    def stats(self, root: Path, *, seconds: float, rebuilt: bool) -> IndexStats:
        """What this refresh did, as IndexStats."""
        return IndexStats(
            root=root,
            indexed=self.indexed,
            unchanged=self.unchanged,
            removed=self.removed,
            skipped=dict(sorted(self.skipped.items())),
            skipped_files=tuple(self.skipped_files[:_SKIPPED_FILES_CAP]),
            seconds=seconds,
            documents=self.documents,
            passages=self.passages,
            rebuilt=rebuilt,
        )

    def _skip(self, rel: str, reason: str) -> None:
        self.skipped[reason] += 1
        self.skipped_files.append((rel, reason))

    def _plan(self, known: Known) -> list[str]:
        """The files to read; counts the unchanged ones and the remembered skips. A remembered
        duplicate whose indexed twin is gone is read again."""
        rules = self.conn.execute("SELECT value FROM meta WHERE key = 'extraction_rules'").fetchone()
        current = rules is not None and rules[0] == EXTRACTION_RULES
        todo: list[str] = []
        for rel, (_path, info) in self.scan.files.items():
            old = known.get(rel)
            if current and old is not None and old[1] == info.st_mtime_ns and old[2] == info.st_size:
                if old[3] == _DUPLICATE and not self._twin_indexed(rel, old[4]):
                    todo.append(rel)
                elif old[3]:
                    self._skip(rel, old[3])
                else:
                    self.unchanged += 1
            else:
                todo.append(rel)
        return todo

    def _twin_indexed(self, rel: str, digest: str | None) -> bool:
        return digest is not None and self.conn.execute(
            "SELECT 1 FROM files WHERE text_sha = ? AND skip_reason IS NULL AND path != ? LIMIT 1", (digest, rel)
        ).fetchone() is not None

    def _backfill_digests(self) -> None:
        """Digests for files indexed before the index kept them (from their stored passages)."""
        missing = self.conn.execute("SELECT id FROM files WHERE skip_reason IS NULL AND text_sha IS NULL").fetchall()
        if not missing:
            return
        self.conn.execute("BEGIN IMMEDIATE")
        for (file_id,) in missing:
            bodies = [b for (b,) in self.conn.execute(
                "SELECT body FROM passages WHERE file_id = ? ORDER BY CAST(seq AS INTEGER)", (file_id,))]  # fmt: skip
            self.conn.execute("UPDATE files SET text_sha = ? WHERE id = ?", (passages_digest(bodies), file_id))
        self.conn.execute("COMMIT")

    def _demote_copies(self, read_now: set[str]) -> None:
        """Keep one indexed file per text: the others become ``duplicate_copy`` (their passages go)."""
        shared = self.conn.execute(
            "SELECT text_sha FROM files WHERE skip_reason IS NULL AND text_sha IS NOT NULL "
            "GROUP BY text_sha HAVING count(*) > 1"
        ).fetchall()
        if not shared:
            return
        self.conn.execute("BEGIN IMMEDIATE")
        for (digest,) in shared:
            rows = self.conn.execute(
                "SELECT id, path FROM files WHERE text_sha = ? AND skip_reason IS NULL", (digest,)
            ).fetchall()
            keep = preferred_copy([path for _, path in rows])
            for file_id, path in rows:
                if path == keep:
                    continue
                self.conn.execute("DELETE FROM passages WHERE file_id = ?", (file_id,))
                self.conn.execute("UPDATE files SET skip_reason = ? WHERE id = ?", (_DUPLICATE, file_id))
                if path in read_now:
                    self.indexed -= 1
                else:
                    self.unchanged -= 1
                self._skip(path, _DUPLICATE)
        self.conn.execute("COMMIT")

    def _remove_gone(self, known: Known) -> None:
        self.conn.execute("BEGIN IMMEDIATE")
        for rel, (file_id, *_rest) in known.items():
            if rel not in self.scan.files:
                _drop(self.conn, file_id)
                self.removed += 1
        self.conn.execute("COMMIT")

    def _read_changed(
        self,
        known: Known,
        todo: list[str],
        progress: Callable[[int, int], None] | None,
    ) -> None:
        conn = self.conn
        files = [self.scan.files[rel] for rel in todo]
        results = read_documents(
            files, max_bytes=self.max_file_bytes, extractor=self.extractor, timeout=self.extract_timeout
        )
        conn.execute("BEGIN IMMEDIATE")
        try:
            with contextlib.closing(results):  # stops the workers whatever happens here
                for done, (rel, (_path, info), result) in enumerate(zip(todo, files, results, strict=True), 1):
                    self._store_one(known, rel, info, result)
                    if done % _COMMIT_EVERY == 0:
                        conn.execute("COMMIT")
                        conn.execute("BEGIN IMMEDIATE")
                    if progress is not None:
                        progress(done, len(todo))
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    def _store_one(self, known: Known, rel: str, info: Any, result: Document | str) -> None:
        old = known.get(rel)
        if old is not None:
            _drop(self.conn, old[0])
        self._store(rel, info.st_mtime_ns, info.st_size, result)

    def _store(self, rel: str, mtime_ns: int, size: int, result: Document | str) -> None:
        """Index one file's passages, or remember why it was skipped (when that depends on its content)."""
        if isinstance(result, str):
            self._skip(rel, result)
            if result in _STICKY_REASONS:
                self.conn.execute(
                    "INSERT INTO files (path, mtime_ns, size, title, skip_reason) VALUES (?, ?, ?, '', ?)",
                    (rel, mtime_ns, size, result),
                )
            return
        passages = split_passages(result.text)
        cur = self.conn.execute(
            "INSERT INTO files (path, mtime_ns, size, title, text_sha) VALUES (?, ?, ?, ?, ?)",
            (rel, mtime_ns, size, result.title, passages_digest(passages)),
        )
        self.conn.executemany(
            "INSERT INTO passages (body, file_id, seq) VALUES (?, ?, ?)",
            ((body, cur.lastrowid, seq) for seq, body in enumerate(passages)),
        )
        self.indexed += 1


def _drop(conn: sqlite3.Connection, file_id: int) -> None:
    conn.execute("DELETE FROM passages WHERE file_id = ?", (file_id,))
    conn.execute("DELETE FROM files WHERE id = ?", (file_id,))
