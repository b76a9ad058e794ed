"""The index of a folder of the user's own documents: SQLite FTS5, refreshed incrementally.

One :class:`CorpusIndex` per corpus folder. The index lives in the cache folder,
never inside the corpus, at ``cache_dir/corpus/<sha256(resolved root)[:16]>.sqlite``.
It is refreshed incrementally (a file is re-read only when its mtime or size changed,
or when it was read under older extraction rules), and files that cannot be indexed
are skipped and counted by reason, never fatal. Documents are split into passages
(:func:`research_agent.text.passages.split_passages`); :mod:`.corpus_query` ranks them.

Several processes may refresh one corpus at once: the database runs in WAL mode with
a busy timeout, and a refresh holds an exclusive ``flock`` on a lock file next to the
database, so the corpus is indexed once and a later refresher finds nothing to do.
A corrupt index file is rebuilt from scratch with a warning.

Skip reasons (keys of :attr:`IndexStats.skipped`): ``binary``, ``too_large``,
``bad_encoding`` (mostly undecodable text), ``empty`` (no text), ``unreadable``,
``changed_during_read``, ``symlink_outside`` (a link leading out of the corpus),
``symlink_duplicate`` (a link to a file inside the corpus, which is indexed under its
own name), ``pdf_unsupported`` (``pypdf`` is not installed: ``pip install
'cited-research-agent[pdf]'``), ``bad_pdf``, and for a file the extractor could not get
through: ``extract_crashed`` (its worker process died), ``extract_timeout`` (longer
than ``extract_timeout`` seconds; its worker is killed), ``extract_error``.

Changed files are extracted in worker processes, one per CPU (:mod:`research_agent.fetch.processes.pool`),
when at least two of them are HTML or PDF; otherwise (plain text is cheap, and a warm
refresh reads nothing) no process is started.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from ..errors import InputError, SearchError, StorageError
from ..fetch.extract import Unreadable, extract
from ..fetch.processes.pool import EXTRACT_TIMEOUT
from ..files.locks import exclusive_lock
from ..sources import Document, SearchHit
from .corpus_files import scan_corpus
from .corpus_query import RankedHit, fts_query, ranked_hits
from .corpus_refresh import IndexStats, Refresh, storage_error
from .corpus_rules import CorpusRules

__all__ = ["CorpusIndex", "IndexStats", "index_path_for", "SCHEMA_VERSION"]

log = logging.getLogger(__name__)

SCHEMA_VERSION = "1"
_BUSY_TIMEOUT_MS = 60_000
_MMAP_BYTES = 256 * 1024 * 1024  # at most this much of an index is mapped (the rest is read as usual)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    title TEXT NOT NULL DEFAULT '',
    skip_reason TEXT,
    text_sha TEXT
);
CREATE VIRTUAL TABLE IF NOT EXISTS passages USING fts5(
    body, file_id UNINDEXED, seq UNINDEXED, tokenize = 'porter unicode61 remove_diacritics 2'
);
"""


def index_path_for(root: Path, cache_dir: Path) -> Path:
    """Where the index of corpus ``root`` lives inside ``cache_dir``."""
    digest = hashlib.sha256(str(Path(root).resolve()).encode("utf-8")).hexdigest()[:16]
    return Path(cache_dir) / "corpus" / f"{digest}.sqlite"


def _is_disk_problem(exc: sqlite3.Error) -> bool:
    text = str(exc).lower()
    return any(s in text for s in ("disk is full", "disk i/o", "readonly", "read-only", "unable to open"))


class CorpusIndex:
    """The FTS5 index of one corpus folder.

    Construction does no I/O. :meth:`refresh` brings the index up to date with the
    folder; :meth:`search` answers from the index as it is. Each call opens its own
    SQLite connection, so one instance may be used from several threads.
    """

    def __init__(
        self,
        root: Path,
        cache_dir: Path,
        *,
        max_file_bytes: int = 20_000_000,
        exclude: Sequence[Path] = (),
        extractor: Callable[..., Document | Unreadable] = extract,
        extract_timeout: float = EXTRACT_TIMEOUT,
    ) -> None:
        self.root = Path(root).expanduser().resolve()
        # Folders never indexed, e.g. the reports folder: a run must not cite its own earlier reports.
        self.exclude = frozenset(Path(p).expanduser().resolve() for p in exclude)
        self.cache_dir = Path(cache_dir).expanduser()
        self.max_file_bytes = max_file_bytes
        # A module-level function with extract()'s signature (it runs in worker processes).
        self.extractor = extractor
        self.extract_timeout = extract_timeout
        self.db_path = index_path_for(self.root, self.cache_dir)
        self.lock_path = self.db_path.with_suffix(".lock")

    def __repr__(self) -> str:
        return f"CorpusIndex({str(self.root)!r}, index={str(self.db_path)!r})"

    # ---------------------------------------------------------------- connections

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.db_path, timeout=_BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        conn.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
        return conn

    def _open_for_reading(self) -> sqlite3.Connection:
        """A connection for one query, which reads the index through a memory map: the sub-queries
        of a run query it at once, each on its own connection, and mapped pages are shared where
        each connection's page cache would read them again (a run's searches took 30% less)."""
        conn = self._connect()
        conn.execute(f"PRAGMA mmap_size = {_MMAP_BYTES}")
        return conn

    def _open_for_writing(self) -> sqlite3.Connection:
        """Open (creating if needed) and check the schema; raises sqlite3.DatabaseError if corrupt."""
        conn = self._connect()
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            check = conn.execute("PRAGMA quick_check").fetchone()
            if not check or check[0] != "ok":
                raise sqlite3.DatabaseError(f"quick_check: {check[0] if check else 'no answer'}")
            conn.executescript(_SCHEMA)
            version = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            if version is None:
                conn.execute(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?), ('root', ?)",
                    (SCHEMA_VERSION, str(self.root)),
                )
            elif version[0] != SCHEMA_VERSION:
                raise sqlite3.DatabaseError(f"index schema {version[0]}, expected {SCHEMA_VERSION}")
            if "text_sha" not in {row[1] for row in conn.execute("PRAGMA table_info(files)")}:
                conn.execute("ALTER TABLE files ADD COLUMN text_sha TEXT")  # an index built before copies were found
            conn.execute("CREATE INDEX IF NOT EXISTS files_text_sha ON files (text_sha)")
            # Touch the full-text index so a damaged FTS structure shows up here, not mid-refresh.
            conn.execute("SELECT count(*) FROM passages WHERE passages MATCH '\"x\"'").fetchone()
        except BaseException:
            conn.close()
            raise
        return conn

    def _delete_files(self) -> None:
        for suffix in ("", "-wal", "-shm", "-journal"):
            try:
                Path(f"{self.db_path}{suffix}").unlink(missing_ok=True)
            except OSError as exc:
                raise StorageError(f"cannot remove the damaged corpus index {self.db_path}: {exc}") from None

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        try:
            self.db_path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StorageError(
                f"cannot create the corpus index folder {self.db_path.parent}: {exc}"
            ) from None
        with exclusive_lock(self.lock_path):
            yield

    # ---------------------------------------------------------------- refresh

    def _check_root(self) -> None:
        if not self.root.exists():
            raise InputError(f"corpus folder {self.root} does not exist")
        if not self.root.is_dir():
            raise InputError(f"corpus folder {self.root} is not a folder")

    def refresh(
        self, *, progress: Callable[[int, int], None] | None = None, exclude: Sequence[str] | None = None
    ) -> IndexStats:
        """Bring the index up to date with the corpus folder and say what changed.

        Only files whose mtime or size changed are read. ``progress(done, total)`` is
        called while changed files are read. ``exclude``: gitignore patterns kept out of the
        index, remembered by it (None: those it was last given). Raises InputError when the
        folder is missing or not a folder, or an exclusion is not a valid pattern, StorageError
        when the index cannot be written.
        """
        self._check_root()
        started = time.perf_counter()
        with self._locked():
            rebuilt = False
            try:
                conn = self._open_for_writing()
            except sqlite3.DatabaseError as exc:
                log.warning("corpus index %s is damaged (%s); rebuilding it from scratch", self.db_path, exc)
                conn = self._rebuild()
                rebuilt = True
            except sqlite3.Error as exc:
                raise storage_error(self.db_path, exc) from None
            try:
                try:
                    refresh = self._refresh_with(conn, progress, exclude)
                except sqlite3.DatabaseError as exc:
                    if _is_disk_problem(exc):
                        raise
                    log.warning(
                        "corpus index %s failed during refresh (%s); rebuilding it", self.db_path, exc
                    )
                    conn.close()
                    conn = self._rebuild()
                    rebuilt = True
                    refresh = self._refresh_with(conn, progress, exclude)
            except sqlite3.Error as exc:
                raise storage_error(self.db_path, exc) from None
            finally:
                conn.close()
        return refresh.stats(self.root, seconds=time.perf_counter() - started, rebuilt=rebuilt)

    def _rebuild(self) -> sqlite3.Connection:
        self._delete_files()
        try:
            return self._open_for_writing()
        except sqlite3.Error as exc:
            raise storage_error(self.db_path, exc) from None

    def _refresh_with(
        self, conn: sqlite3.Connection, progress: Callable[[int, int], None] | None, exclude: Sequence[str] | None
    ) -> Refresh:
        stored = conn.execute("SELECT value FROM meta WHERE key = 'exclude'").fetchone()
        patterns = list(exclude) if exclude is not None else (json.loads(stored[0]) if stored else [])
        rules = CorpusRules.for_root(self.root, patterns)
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('exclude', ?)", (json.dumps(patterns),))
        refresh = Refresh(
            conn,
            scan_corpus(self.root, self.exclude, rules),
            max_file_bytes=self.max_file_bytes,
            extractor=self.extractor,
            extract_timeout=self.extract_timeout,
        )
        refresh.run(progress)
        if refresh.indexed or refresh.removed:
            log.debug("corpus %s: indexed %d, removed %d", self.root, refresh.indexed, refresh.removed)
        return refresh

    # ---------------------------------------------------------------- search

    def exists(self) -> bool:
        """Whether an index file has been built for this corpus."""
        return self.db_path.is_file()

    def ranked(
        self, query: str, *, limit_files: int = 10, token_budget: int = 450, skip: Callable[[str], bool] | None = None
    ) -> list[RankedHit]:
        """Like :meth:`search`, with each hit's BM25 score (higher is better); files whose
        corpus-relative path ``skip`` accepts are left out (``--exclude`` on a cached index)."""
        if not fts_query(query) or limit_files <= 0 or not self.exists():
            return []
        try:
            conn = self._open_for_reading()
            try:
                return ranked_hits(conn, self.root, query, limit_files=limit_files, token_budget=token_budget,
                                   skip=skip)  # fmt: skip
            finally:
                conn.close()
        except sqlite3.Error as exc:
            raise SearchError(
                f"the corpus index {self.db_path} cannot be read ({exc}); "
                f"refresh it with: research-agent corpus index {self.root}"
            ) from None

    def search(self, query: str, *, limit_files: int = 10, token_budget: int = 450) -> list[SearchHit]:
        """Files best matching ``query``: one hit per file, best first.

        ``text`` holds the file's best-matching passages, in document order, within
        ``token_budget`` (estimated tokens). Answers from the index as last refreshed;
        an empty or stop-word-only query gives [].
        """
        return [r.hit for r in self.ranked(query, limit_files=limit_files, token_budget=token_budget)]
