"""Search a folder of the user's own documents: a SQLite FTS5 index ranked by BM25.

One :class:`CorpusIndex` per corpus folder. The index lives in the cache folder,
never inside the corpus, at ``cache_dir/corpus/<sha256(resolved root)[:16]>.sqlite``.
It is refreshed incrementally (a file is re-read only when its mtime or size changed),
and files that cannot be indexed are skipped and counted by reason, never fatal.

Documents are split into passages (:func:`research_agent.passages.split_passages`);
passages are what FTS5 ranks, but search answers with one hit per file, carrying
that file's best passages within a token budget.

Several processes may refresh one corpus at once: the database runs in WAL mode with
a busy timeout, and a refresh holds an exclusive ``flock`` on a lock file next to the
database, so the corpus is indexed once and a later refresher finds nothing to do.
A corrupt index file is rebuilt from scratch with a warning.

Hidden files and folders (names starting with ".") are not indexed, and linked
folders are not followed.

Skip reasons (keys of :attr:`IndexStats.skipped`): ``binary``, ``too_large``,
``not_utf8``, ``bad_encoding`` (an HTML page's declared charset did not decode),
``empty`` (no text), ``unreadable``, ``changed_during_read``, ``symlink_outside``
(a link leading out of the corpus), ``symlink_duplicate`` (a link to a file inside
the corpus, which is indexed under its own name), ``pdf_unsupported`` (``pypdf`` is
not installed: ``pip install 'research-agent[pdf]'``), ``bad_pdf``.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import fcntl
import functools
import hashlib
import html as html_lib
import io
import logging
import os
import re
import sqlite3
import stat as stat_mod
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import DiskFull, InputError, SearchError, StorageError
from ..passages import estimate_tokens, split_passages
from ..passages import tokenize as tokenize_words
from ..sources import SearchHit

__all__ = [
    "CorpusIndex",
    "IndexStats",
    "LocalSearchProvider",
    "RankedHit",
    "Document",
    "read_document",
    "fts_query",
    "index_path_for",
    "TEXT_SUFFIXES",
    "HTML_SUFFIXES",
    "PDF_SUFFIXES",
    "INDEXABLE_SUFFIXES",
    "SCHEMA_VERSION",
    "TRAFILATURA_MAX_CHARS",
]

log = logging.getLogger(__name__)

TEXT_SUFFIXES = frozenset({".md", ".markdown", ".txt", ".rst"})
HTML_SUFFIXES = frozenset({".html", ".htm"})
PDF_SUFFIXES = frozenset({".pdf"})
INDEXABLE_SUFFIXES = TEXT_SUFFIXES | HTML_SUFFIXES | PDF_SUFFIXES
SCHEMA_VERSION = "1"

_SNIFF_BYTES = 8192
_SNIPPET_CHARS = 300
_SKIPPED_FILES_CAP = 200
_COMMIT_EVERY = 100
_BUSY_TIMEOUT_MS = 60_000
_MAX_QUERY_TERMS = 32
# Skips decided by a file's content: remembered (by mtime and size) so that an
# unchanged file is not read again. Other skips are re-checked on every refresh.
_STICKY_REASONS = frozenset({"binary", "not_utf8", "bad_encoding", "empty", "bad_pdf"})

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    title TEXT NOT NULL DEFAULT '',
    skip_reason TEXT
);
CREATE VIRTUAL TABLE IF NOT EXISTS passages USING fts5(
    body, file_id UNINDEXED, seq UNINDEXED, tokenize = 'porter unicode61 remove_diacritics 2'
);
"""


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


@dataclass(frozen=True)
class Document:
    """The text of one corpus file, ready to be split into passages."""

    title: str
    text: str


@dataclass(frozen=True)
class RankedHit:
    """A search hit with its BM25 score (higher is better) for merging across corpora."""

    score: float
    hit: SearchHit


@dataclass
class _Scan:
    """The corpus as found on disk: candidate files and skips decided without reading."""

    files: dict[str, tuple[Path, os.stat_result]] = field(default_factory=dict)
    skips: list[tuple[str, str]] = field(default_factory=list)  # (relative path, reason)


def index_path_for(root: Path, cache_dir: Path) -> Path:
    """Where the index of corpus ``root`` lives inside ``cache_dir``."""
    digest = hashlib.sha256(str(Path(root).resolve()).encode("utf-8")).hexdigest()[:16]
    return Path(cache_dir) / "corpus" / f"{digest}.sqlite"


# --------------------------------------------------------------------------- reading files


@functools.cache
def _pdf_module():  # pragma: no cover - depends on the optional extra
    try:
        import pypdf
    except ImportError:
        return None
    return pypdf


_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_:.\-]+)""", re.IGNORECASE)
_XML_ENCODING = re.compile(rb"""<\?xml[^>]+encoding\s*=\s*["']([A-Za-z0-9_.\-]+)""", re.IGNORECASE)


def _declared_charset(data: bytes) -> str | None:
    head = data[:4096]
    match = _CHARSET.search(head) or _XML_ENCODING.search(head)
    if not match:
        return None
    name = match.group(1).decode("ascii", "replace").lower()
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


def _decode(data: bytes, *, is_html: bool) -> str | None:
    """Decode as UTF-8 (with or without BOM), or as an HTML page's declared charset."""
    if data.startswith(codecs.BOM_UTF8):
        try:
            return data.decode("utf-8-sig")
        except UnicodeDecodeError:
            return None
    if is_html:
        charset = _declared_charset(data)
        if charset and charset not in ("utf-8", "ascii"):
            try:
                return data.decode(charset)
            except (UnicodeDecodeError, LookupError):
                return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


_TITLE_TAG = re.compile(r"<title[^>]*>(.*?)</title\s*>", re.IGNORECASE | re.DOTALL)
_DROP_BLOCKS = re.compile(r"<(script|style|noscript|template|svg)\b.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
_COMMENTS = re.compile(r"<!--.*?-->", re.DOTALL)
_BLOCK_TAGS = re.compile(
    r"</?(?:p|div|br|h[1-6]|li|ul|ol|tr|table|section|article|header|footer|pre|blockquote|dd|dt|dl)\b[^>]*>",
    re.IGNORECASE,
)
_ANY_TAG = re.compile(r"<[^>]+>")
_MD_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
_RST_UNDERLINE = re.compile(r"^([=\-~^#*+`'\".:_])\1{2,}\s*$")
_trafilatura_failed = False
# Pages above this many characters (tables of contents, generated indexes) cost
# trafilatura seconds and tens of MB each for little gain; they get the tag strip.
TRAFILATURA_MAX_CHARS = 1_000_000


def _clean_line(text: str) -> str:
    return " ".join(text.split())


def _strip_tags(markup: str) -> str:
    """A plain tag strip, for pages trafilatura cannot extract anything from."""
    body = _COMMENTS.sub(" ", markup)
    body = _DROP_BLOCKS.sub(" ", body)
    body = _TITLE_TAG.sub(" ", body)
    body = _BLOCK_TAGS.sub("\n\n", body)
    body = html_lib.unescape(_ANY_TAG.sub(" ", body))
    paras = (_clean_line(p) for p in re.split(r"\n\s*\n", body))
    return "\n\n".join(p for p in paras if p)


def _html_text(markup: str) -> str:
    """Main text of an HTML page via trafilatura, falling back to a tag strip.

    Very large pages (over ``TRAFILATURA_MAX_CHARS``) go straight to the tag strip.
    """
    global _trafilatura_failed
    text = ""
    if not _trafilatura_failed and len(markup) <= TRAFILATURA_MAX_CHARS:
        try:
            import trafilatura

            text = (
                trafilatura.extract(markup, include_comments=False, include_tables=True, favor_recall=True)
                or ""
            )
        except ImportError as exc:
            _trafilatura_failed = True
            log.warning("trafilatura cannot be imported (%s); HTML is indexed with a plain tag strip", exc)
        except Exception as exc:  # trafilatura/lxml raise many kinds on odd markup
            log.debug("trafilatura failed on a page (%s); using a tag strip", exc)
            text = ""
    if text.strip():
        # trafilatura separates blocks with single newlines; passages split on blank lines.
        return "\n\n".join(line for line in (_clean_line(x) for x in text.splitlines()) if line)
    return _strip_tags(markup)


def _text_title(text: str, suffix: str) -> str:
    if suffix in (".md", ".markdown"):
        match = _MD_HEADING.search(text[:20_000])
        if match:
            return _clean_line(match.group(1))
    if suffix == ".rst":
        lines = text[:20_000].splitlines()
        for i in range(len(lines) - 1):
            line = lines[i].strip()
            if line and not _RST_UNDERLINE.match(line) and _RST_UNDERLINE.match(lines[i + 1].strip()):
                return _clean_line(line)
    return ""


def _pdf_document(data: bytes) -> Document | str:  # pragma: no cover - needs the optional extra
    pypdf = _pdf_module()
    if pypdf is None:
        return "pdf_unsupported"
    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        pages = [page.extract_text() or "" for page in reader.pages]
        title = ""
        if reader.metadata is not None and reader.metadata.title:
            title = _clean_line(str(reader.metadata.title))
    except Exception as exc:  # pypdf raises a wide variety of errors on damaged files
        log.debug("pypdf could not read a file: %s", exc)
        return "bad_pdf"
    return Document(title=title, text="\n\n".join(pages))


def read_document(path: Path, before: os.stat_result, *, max_bytes: int) -> Document | str:
    """Read one corpus file into a :class:`Document`, or return the reason to skip it.

    ``before`` is the file's stat taken when the corpus was scanned: if the size or
    mtime differ from it, or change while reading, the file is being written and is
    skipped this time (``changed_during_read``).
    """
    suffix = path.suffix.lower()
    if before.st_size > max_bytes:
        return "too_large"
    if suffix in PDF_SUFFIXES and _pdf_module() is None:
        return "pdf_unsupported"
    try:
        with open(path, "rb") as handle:
            opened = os.fstat(handle.fileno())
            data = handle.read(max_bytes + 1)
            after = os.fstat(handle.fileno())
    except OSError as exc:
        log.debug("cannot read %s: %s", path, exc)
        return "unreadable"
    stamps = {(s.st_size, s.st_mtime_ns) for s in (before, opened, after)}
    if len(stamps) != 1 or len(data) != before.st_size:
        return "too_large" if len(data) > max_bytes else "changed_during_read"
    if suffix in PDF_SUFFIXES:
        doc_or_reason = _pdf_document(data)
        if isinstance(doc_or_reason, str):
            return doc_or_reason
        document = doc_or_reason
    else:
        if b"\x00" in data[:_SNIFF_BYTES]:
            return "binary"
        is_html = suffix in HTML_SUFFIXES
        text = _decode(data, is_html=is_html)
        if text is None:
            return "bad_encoding" if is_html and _declared_charset(data) else "not_utf8"
        if is_html:
            match = _TITLE_TAG.search(text[:50_000])
            title = _clean_line(html_lib.unescape(match.group(1))) if match else ""
            document = Document(title=title, text=_html_text(text))
        else:
            document = Document(title=_text_title(text, suffix), text=text)
    if not document.text.strip():
        return "empty"
    if not document.title:
        document = Document(title=path.stem, text=document.text)
    return document


# --------------------------------------------------------------------------- queries


def fts_query(query: str) -> str:
    """An FTS5 MATCH expression for free user text; "" when nothing is searchable.

    The text is tokenised here, each term double-quoted and the terms OR-ed, so no user
    text (``AND``, ``NEAR(``, ``*``, stray quotes...) can be read as FTS5 syntax.
    Stop words are dropped unless nothing else is left.
    """
    terms = tokenize_words(query) or re.findall(r"\w+", query.lower())
    unique = list(dict.fromkeys(terms))[:_MAX_QUERY_TERMS]
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in unique)


def _snippet(passage: str, terms: Sequence[str]) -> str:
    """About 300 characters of ``passage``, around the first query term it contains."""
    if len(passage) <= _SNIPPET_CHARS:
        return passage
    start = 0
    lowered = passage.lower()
    positions = [p for p in (lowered.find(t) for t in terms if t) if p >= 0]
    if positions:
        first = min(positions)
        if first > _SNIPPET_CHARS // 3:
            start = passage.rfind(" ", 0, first - _SNIPPET_CHARS // 4) + 1
    end = start + _SNIPPET_CHARS
    if end < len(passage):
        cut = passage.rfind(" ", start, end)
        end = cut if cut > start else end
    text = passage[start:end].strip()
    return ("…" if start > 0 else "") + text + ("…" if end < len(passage) else "")


def _fit_budget(passages: list[tuple[float, int, str]], token_budget: int) -> str:
    """Best-scoring passages (score, seq, body) within the budget, in document order."""
    chosen: list[tuple[int, str]] = []
    used = 0
    for _score, seq, body in sorted(passages, key=lambda p: (-p[0], p[1])):
        cost = estimate_tokens(body)
        if not chosen and cost > token_budget:
            words = body.split()
            return " ".join(words[: max(1, token_budget * 3 // 4)])
        if used + cost > token_budget:
            continue
        chosen.append((seq, body))
        used += cost
    return "\n\n".join(body for _seq, body in sorted(chosen))


# --------------------------------------------------------------------------- the index


class CorpusIndex:
    """The FTS5 index of one corpus folder.

    Construction does no I/O. :meth:`refresh` brings the index up to date with the
    folder; :meth:`search` answers from the index as it is. Each call opens its own
    SQLite connection, so one instance may be used from several threads.
    """

    def __init__(
        self, root: Path, cache_dir: Path, *, max_file_bytes: int = 20_000_000, exclude: Sequence[Path] = ()
    ) -> None:
        self.root = Path(root).expanduser().resolve()
        # Folders never indexed, e.g. the reports folder: a run must not cite its own earlier reports.
        self.exclude = frozenset(Path(p).expanduser().resolve() for p in exclude)
        self.cache_dir = Path(cache_dir).expanduser()
        self.max_file_bytes = max_file_bytes
        self.db_path = index_path_for(self.root, self.cache_dir)
        self.lock_path = self.db_path.with_suffix(".lock")

    def __repr__(self) -> str:
        return f"CorpusIndex({str(self.root)!r}, index={str(self.db_path)!r})"

    # ---------------------------------------------------------------- connections

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.db_path, timeout=_BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        conn.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
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
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise StorageError(
                f"cannot create the corpus index folder {self.db_path.parent}: {exc}"
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            with contextlib.suppress(OSError):  # closing the descriptor releases the lock anyway
                fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    # ---------------------------------------------------------------- scanning

    def _check_root(self) -> None:
        if not self.root.exists():
            raise InputError(f"corpus folder {self.root} does not exist")
        if not self.root.is_dir():
            raise InputError(f"corpus folder {self.root} is not a folder")

    def _scan(self) -> _Scan:
        scan = _Scan()
        root = self.root

        def on_error(exc: OSError) -> None:
            where = Path(exc.filename) if exc.filename else root
            rel = where.relative_to(root).as_posix() if where.is_relative_to(root) else str(where)
            scan.skips.append((rel or ".", "unreadable"))

        for dirpath, dirnames, filenames in os.walk(root, onerror=on_error, followlinks=False):
            folder = Path(dirpath)
            kept_dirs = []
            for name in dirnames:
                if name.startswith("."):
                    continue
                sub = folder / name
                if self.exclude and sub.resolve() in self.exclude:
                    log.debug("not indexing %s: excluded (it holds research-agent's own reports)", sub)
                    continue
                if sub.is_symlink():
                    # Linked folders are not followed: outside ones are out of scope and
                    # inside ones are indexed where they really are.
                    if not self._inside(sub):
                        scan.skips.append((sub.relative_to(root).as_posix(), "symlink_outside"))
                    continue
                kept_dirs.append(name)
            dirnames[:] = sorted(kept_dirs)
            for name in sorted(filenames):
                if name.startswith(".") or Path(name).suffix.lower() not in INDEXABLE_SUFFIXES:
                    continue
                path = folder / name
                rel = path.relative_to(root).as_posix()
                try:
                    info = path.lstat()
                    if stat_mod.S_ISLNK(info.st_mode):
                        if not self._inside(path):
                            scan.skips.append((rel, "symlink_outside"))
                            continue
                        scan.skips.append((rel, "symlink_duplicate"))
                        continue
                except OSError as exc:
                    log.debug("cannot stat %s: %s", path, exc)
                    scan.skips.append((rel, "unreadable"))
                    continue
                if not stat_mod.S_ISREG(info.st_mode):
                    continue
                scan.files[rel] = (path, info)
        return scan

    def _inside(self, link: Path) -> bool:
        try:
            return link.resolve().is_relative_to(self.root)
        except (OSError, RuntimeError):  # a loop of links
            return False

    # ---------------------------------------------------------------- refresh

    def refresh(self, *, progress: Callable[[int, int], None] | None = None) -> IndexStats:
        """Bring the index up to date with the corpus folder and say what changed.

        Only files whose mtime or size changed are read. ``progress(done, total)`` is
        called while changed files are read. Raises InputError when the folder is
        missing or not a folder, StorageError when the index cannot be written.
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
                raise _storage_error(self.db_path, exc) from None
            try:
                try:
                    stats = self._refresh_with(conn, progress)
                except sqlite3.DatabaseError as exc:
                    if _is_disk_problem(exc):
                        raise
                    log.warning(
                        "corpus index %s failed during refresh (%s); rebuilding it", self.db_path, exc
                    )
                    conn.close()
                    conn = self._rebuild()
                    rebuilt = True
                    stats = self._refresh_with(conn, progress)
            except sqlite3.Error as exc:
                raise _storage_error(self.db_path, exc) from None
            finally:
                conn.close()
        return IndexStats(
            root=self.root,
            indexed=stats["indexed"],
            unchanged=stats["unchanged"],
            removed=stats["removed"],
            skipped=dict(sorted(stats["skipped"].items())),
            skipped_files=tuple(stats["skipped_files"][:_SKIPPED_FILES_CAP]),
            seconds=time.perf_counter() - started,
            documents=stats["documents"],
            passages=stats["passages"],
            rebuilt=rebuilt,
        )

    def _rebuild(self) -> sqlite3.Connection:
        self._delete_files()
        try:
            return self._open_for_writing()
        except sqlite3.Error as exc:
            raise _storage_error(self.db_path, exc) from None

    def _refresh_with(self, conn: sqlite3.Connection, progress: Callable[[int, int], None] | None) -> dict:
        scan = self._scan()
        known = {
            path: (file_id, mtime_ns, size, reason)
            for file_id, path, mtime_ns, size, reason in conn.execute(
                "SELECT id, path, mtime_ns, size, skip_reason FROM files"
            )
        }
        skipped: Counter[str] = Counter()
        skipped_files: list[tuple[str, str]] = []

        def skip(rel: str, reason: str) -> None:
            skipped[reason] += 1
            skipped_files.append((rel, reason))

        for rel, reason in scan.skips:
            skip(rel, reason)

        removed = 0
        unchanged = 0
        todo: list[str] = []
        for rel, (_path, info) in scan.files.items():
            old = known.get(rel)
            if old is not None and old[1] == info.st_mtime_ns and old[2] == info.st_size:
                if old[3]:
                    skip(rel, old[3])
                else:
                    unchanged += 1
            else:
                todo.append(rel)

        conn.execute("BEGIN IMMEDIATE")
        for rel, (file_id, *_rest) in known.items():
            if rel not in scan.files:
                _drop(conn, file_id)
                removed += 1
        conn.execute("COMMIT")

        indexed = 0
        pending = 0
        conn.execute("BEGIN IMMEDIATE")
        try:
            for done, rel in enumerate(todo, 1):
                path, info = scan.files[rel]
                result = read_document(path, info, max_bytes=self.max_file_bytes)
                old = known.get(rel)
                if old is not None:
                    _drop(conn, old[0])
                if isinstance(result, str):
                    skip(rel, result)
                    if result in _STICKY_REASONS:
                        conn.execute(
                            "INSERT INTO files (path, mtime_ns, size, title, skip_reason) VALUES (?, ?, ?, '', ?)",
                            (rel, info.st_mtime_ns, info.st_size, result),
                        )
                else:
                    cur = conn.execute(
                        "INSERT INTO files (path, mtime_ns, size, title) VALUES (?, ?, ?, ?)",
                        (rel, info.st_mtime_ns, info.st_size, result.title),
                    )
                    conn.executemany(
                        "INSERT INTO passages (body, file_id, seq) VALUES (?, ?, ?)",
                        ((body, cur.lastrowid, seq) for seq, body in enumerate(split_passages(result.text))),
                    )
                    indexed += 1
                pending += 1
                if pending >= _COMMIT_EVERY:
                    conn.execute("COMMIT")
                    conn.execute("BEGIN IMMEDIATE")
                    pending = 0
                if progress is not None:
                    progress(done, len(todo))
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        documents = conn.execute("SELECT count(*) FROM files WHERE skip_reason IS NULL").fetchone()[0]
        passages = conn.execute("SELECT count(*) FROM passages").fetchone()[0]
        if indexed or removed:
            log.debug("corpus %s: indexed %d, removed %d", self.root, indexed, removed)
        return {
            "indexed": indexed,
            "unchanged": unchanged,
            "removed": removed,
            "skipped": skipped,
            "skipped_files": skipped_files,
            "documents": documents,
            "passages": passages,
        }

    # ---------------------------------------------------------------- search

    def exists(self) -> bool:
        """Whether an index file has been built for this corpus."""
        return self.db_path.is_file()

    def ranked(self, query: str, *, limit_files: int = 10, token_budget: int = 450) -> list[RankedHit]:
        """Like :meth:`search`, with each hit's BM25 score (higher is better)."""
        match = fts_query(query)
        if not match or limit_files <= 0 or not self.exists():
            return []
        terms = list(dict.fromkeys(tokenize_words(query) or re.findall(r"\w+", query.lower())))
        try:
            return self._ranked(match, terms, limit_files, token_budget)
        except sqlite3.Error as exc:
            raise SearchError(
                f"the corpus index {self.db_path} cannot be read ({exc}); "
                f"refresh it with: research-agent corpus index {self.root}"
            ) from None

    def _ranked(self, match: str, terms: list[str], limit_files: int, token_budget: int) -> list[RankedHit]:
        conn = self._connect()
        try:
            rows = conn.execute(
                "SELECT file_id, bm25(passages) AS rank FROM passages WHERE passages MATCH ? "
                "ORDER BY rank LIMIT ?",
                (match, max(200, limit_files * 50)),
            ).fetchall()
            best: dict[int, float] = {}
            for file_id, rank in rows:
                if file_id not in best:
                    best[file_id] = rank
            chosen = list(best)[:limit_files]
            if not chosen:
                return []
            marks = ",".join("?" * len(chosen))
            files = {
                file_id: (path, title)
                for file_id, path, title in conn.execute(
                    f"SELECT id, path, title FROM files WHERE id IN ({marks})", chosen
                )
            }
            per_file: dict[int, list[tuple[float, int, str]]] = {file_id: [] for file_id in chosen}
            for file_id, seq, body, rank in conn.execute(
                f"SELECT file_id, seq, body, bm25(passages) FROM passages "
                f"WHERE passages MATCH ? AND file_id IN ({marks})",
                (match, *chosen),
            ):
                per_file[file_id].append((-rank, seq, body))
        finally:
            conn.close()
        hits = []
        for file_id in chosen:
            if file_id not in files or not per_file[file_id]:
                continue
            path, title = files[file_id]
            passages = per_file[file_id]
            top = max(passages, key=lambda p: (p[0], -p[1]))
            hit = SearchHit(
                title=title or Path(path).stem,
                location=str(self.root / path),
                snippet=_snippet(top[2], terms),
                provider="local",
                text=_fit_budget(passages, token_budget),
            )
            hits.append(RankedHit(score=-best[file_id], hit=hit))
        return hits

    def search(self, query: str, *, limit_files: int = 10, token_budget: int = 450) -> list[SearchHit]:
        """Files best matching ``query``: one hit per file, best first.

        ``text`` holds the file's best-matching passages, in document order, within
        ``token_budget`` (estimated tokens). Answers from the index as last refreshed;
        an empty or stop-word-only query gives [].
        """
        return [r.hit for r in self.ranked(query, limit_files=limit_files, token_budget=token_budget)]


def _drop(conn: sqlite3.Connection, file_id: int) -> None:
    conn.execute("DELETE FROM passages WHERE file_id = ?", (file_id,))
    conn.execute("DELETE FROM files WHERE id = ?", (file_id,))


def _is_disk_problem(exc: sqlite3.Error) -> bool:
    text = str(exc).lower()
    return any(s in text for s in ("disk is full", "disk i/o", "readonly", "read-only", "unable to open"))


def _storage_error(path: Path, exc: sqlite3.Error) -> StorageError:
    text = str(exc).lower()
    if "disk is full" in text:
        return DiskFull(f"disk full while writing the corpus index {path}")
    return StorageError(f"cannot use the corpus index {path}: {exc}")


# --------------------------------------------------------------------------- the provider


class LocalSearchProvider:
    """The ``local`` search provider: one or more corpus folders searched together.

    Call :meth:`prepare` once before a run to validate the folders and refresh their
    indexes; :meth:`search` then answers from the indexes without touching the files,
    so a folder that vanishes mid-run still answers (or answers [] with a warning).
    """

    name = "local"

    def __init__(
        self,
        corpus_dirs: Sequence[Path],
        cache_dir: Path,
        *,
        token_budget: int,
        max_file_bytes: int = 20_000_000,
        exclude: Sequence[Path] = (),
    ) -> None:
        if not corpus_dirs:
            raise InputError("the local search provider needs at least one corpus folder")
        self.token_budget = token_budget
        self.indexes: list[CorpusIndex] = []
        self._given: list[Path] = []
        for folder in corpus_dirs:
            index = CorpusIndex(Path(folder), cache_dir, max_file_bytes=max_file_bytes, exclude=exclude)
            if all(index.root != known.root for known in self.indexes):  # one folder named twice
                self.indexes.append(index)
                self._given.append(Path(folder))
        self._prepared = False

    def prepare(self, *, progress: Callable[[Path, int, int], None] | None = None) -> list[IndexStats]:
        """Validate every corpus folder, then refresh each index; return their stats.

        Raises InputError for a folder that does not exist, is not a folder, or holds
        nothing indexable. ``progress(root, done, total)`` reports files being read.
        """
        for given, index in zip(self._given, self.indexes, strict=True):
            if not index.root.exists():
                raise InputError(f"corpus folder {given} does not exist")
            if not index.root.is_dir():
                raise InputError(f"corpus folder {given} is not a folder")
        all_stats = []
        for given, index in zip(self._given, self.indexes, strict=True):
            report = None if progress is None else (lambda d, t, _r=index.root: progress(_r, d, t))
            stats = index.refresh(progress=report)
            if stats.documents == 0:
                kinds = " ".join(sorted(INDEXABLE_SUFFIXES - ({".pdf"} if _pdf_module() is None else set())))
                detail = ""
                if stats.skipped:
                    detail = "; skipped: " + ", ".join(f"{n} {reason}" for reason, n in stats.skipped.items())
                raise InputError(f"corpus folder {given} holds no indexable files ({kinds}){detail}")
            all_stats.append(stats)
        self._prepared = True
        return all_stats

    def _ranked_one(self, index: CorpusIndex, query: str, max_results: int) -> list[RankedHit]:
        try:
            if not self._prepared and not index.exists() and index.root.is_dir():
                index.refresh()
            if not index.root.is_dir():
                log.warning("corpus folder %s is gone; answering from its index as last built", index.root)
            return index.ranked(query, limit_files=max_results, token_budget=self.token_budget)
        except (sqlite3.Error, OSError, InputError, SearchError, StorageError) as exc:
            log.warning("local search in %s failed: %s", index.root, exc)
            return []

    async def search(self, query: str, *, max_results: int) -> list[SearchHit]:
        """The ``max_results`` best files across all corpora for ``query``."""
        if max_results <= 0:
            return []
        results = await asyncio.gather(
            *(asyncio.to_thread(self._ranked_one, index, query, max_results) for index in self.indexes)
        )
        merged = sorted((r for ranked in results for r in ranked), key=lambda r: -r.score)
        seen: set[str] = set()
        hits = []
        for ranked in merged:
            if ranked.hit.location in seen:
                continue
            seen.add(ranked.hit.location)
            hits.append(ranked.hit)
            if len(hits) >= max_results:
                break
        return hits
