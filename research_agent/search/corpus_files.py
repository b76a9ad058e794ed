"""A corpus folder on disk: which files are candidates, and reading one into a Document.

Hidden files and folders (names starting with ".") are not indexed, linked folders
are not followed, and a linked file is skipped (``symlink_outside`` when it leads out
of the corpus, ``symlink_duplicate`` when it leads to a file inside, which is indexed
under its own name). A file's bytes become text through
:func:`research_agent.fetch.extract.extract`, the same rules as web pages; many files
are read in worker processes (:func:`read_documents`), so that one file that crashes
or hangs the extractor costs that file (``extract_crashed``, ``extract_timeout``) and
nothing else.
"""

from __future__ import annotations

import functools
import logging
import os
import stat as stat_mod
from collections.abc import Callable, Generator, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..fetch.extract import (
    BAD_PDF,
    BINARY,
    HTML,
    PDF,
    PDF_UNSUPPORTED,
    SUFFIX_KINDS,
    TEXT,
    UNDECODABLE,
    Unreadable,
    extract,
    kind_for_suffix,
    pdf_supported,
)
from ..fetch.processes.pool import (
    CRASHED,
    EXTRACT_TIMEOUT,
    RAISED,
    TIMED_OUT,
    ExtractionPool,
    Failed,
    worth_a_pool,
)
from ..sources import Document
from .corpus_rules import CorpusRules, stem_copies

__all__ = [
    "Scan",
    "scan_corpus",
    "read_document",
    "read_documents",
    "indexable_kinds",
    "INDEXABLE_SUFFIXES",
]

log = logging.getLogger(__name__)

INDEXABLE_SUFFIXES = frozenset(SUFFIX_KINDS)
# How extraction's reasons read among the corpus's skip reasons.
_SKIP_REASONS = {
    BINARY: "binary",
    UNDECODABLE: "bad_encoding",
    BAD_PDF: "bad_pdf",
    PDF_UNSUPPORTED: "pdf_unsupported",
}
_FAILED_REASONS = {CRASHED: "extract_crashed", TIMED_OUT: "extract_timeout"}


@dataclass
class Scan:
    """The corpus as found on disk: candidate files and skips decided without reading."""

    files: dict[str, tuple[Path, os.stat_result]] = field(default_factory=dict)
    skips: list[tuple[str, str]] = field(default_factory=list)  # (relative path, reason)


def indexable_kinds() -> str:
    """The suffixes that can be indexed here, for messages (".pdf" only with pypdf)."""
    return " ".join(sorted(INDEXABLE_SUFFIXES - (set() if pdf_supported() else {".pdf"})))


def _inside(root: Path, link: Path) -> bool:
    try:
        return link.resolve().is_relative_to(root)
    except (OSError, RuntimeError):  # a loop of links
        return False


def _kept_dirs(
    root: Path, folder: Path, names: Iterable[str], exclude: frozenset[Path], scan: Scan
) -> list[str]:
    kept = []
    for name in names:
        if name.startswith("."):
            continue
        sub = folder / name
        if exclude and sub.resolve() in exclude:
            log.debug("not indexing %s: excluded (it holds research-agent's own reports)", sub)
            continue
        if sub.is_symlink():
            # Linked folders are not followed: outside ones are out of scope and
            # inside ones are indexed where they really are.
            if not _inside(root, sub):
                scan.skips.append((sub.relative_to(root).as_posix(), "symlink_outside"))
            continue
        kept.append(name)
    return sorted(kept)


def _add_file(root: Path, path: Path, scan: Scan) -> None:
    rel = path.relative_to(root).as_posix()
    try:
        info = path.lstat()
    except OSError as exc:
        log.debug("cannot stat %s: %s", path, exc)
        scan.skips.append((rel, "unreadable"))
        return
    if stat_mod.S_ISLNK(info.st_mode):
        scan.skips.append((rel, "symlink_duplicate" if _inside(root, path) else "symlink_outside"))
    elif stat_mod.S_ISREG(info.st_mode):
        scan.files[rel] = (path, info)


def scan_corpus(root: Path, exclude: frozenset[Path] = frozenset(), rules: CorpusRules | None = None) -> Scan:
    """Every indexable file under ``root`` (resolved), with its stat, and the skips found on the way.

    Folders in ``exclude`` (resolved paths) are not entered. Files the ``rules`` skip are
    counted as ``generated`` or ``excluded``, and a plain-text copy of an HTML page beside it
    as ``duplicate_copy`` (:mod:`.corpus_rules`).
    """
    scan = Scan()
    rules = rules or CorpusRules()

    def on_error(exc: OSError) -> None:
        where = Path(exc.filename) if exc.filename else root
        rel = where.relative_to(root).as_posix() if where.is_relative_to(root) else str(where)
        scan.skips.append((rel or ".", "unreadable"))

    for dirpath, dirnames, filenames in os.walk(root, onerror=on_error, followlinks=False):
        folder = Path(dirpath)
        dirnames[:] = _kept_dirs(root, folder, dirnames, exclude, scan)
        for name in sorted(filenames):
            if not name.startswith(".") and Path(name).suffix.lower() in INDEXABLE_SUFFIXES:
                rel = (folder / name).relative_to(root).as_posix()
                reason = rules.reason(rel)
                if reason is None:
                    _add_file(root, folder / name, scan)
                else:
                    scan.skips.append((rel, reason))
    for rel in sorted(stem_copies(scan.files)):
        del scan.files[rel]
        scan.skips.append((rel, "duplicate_copy"))
    return scan


def _read_stable(path: Path, before: os.stat_result, max_bytes: int) -> bytes | str:
    """The file's bytes, or a skip reason when it cannot be read or changed since ``before``."""
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
    return data


def read_document(
    path: Path,
    before: os.stat_result,
    *,
    max_bytes: int,
    extractor: Callable[..., Document | Unreadable] = extract,
) -> Document | str:
    """Read one corpus file into a :class:`Document`, or return the reason to skip it.

    ``before`` is the file's stat taken when the corpus was scanned: if the size or
    mtime differ from it, or change while reading, the file is being written and is
    skipped this time (``changed_during_read``). A document without a title of its
    own is named by its file name. ``extractor`` is :func:`~research_agent.fetch.extract.extract`
    or a stand-in with its signature.
    """
    kind = kind_for_suffix(path.suffix) or TEXT
    if before.st_size > max_bytes:
        return "too_large"
    if kind == PDF and not pdf_supported():
        return "pdf_unsupported"
    data = _read_stable(path, before, max_bytes)
    if isinstance(data, str):
        return data
    document = extractor(data, kind)
    if isinstance(document, Unreadable):
        return _SKIP_REASONS.get(document.reason, document.reason)
    if not document.text.strip():
        return "empty"
    if not document.title:
        document = replace(document, title=path.stem)
    return document


def _skip_reason(failed: Failed, path: Path) -> str:
    reason = _FAILED_REASONS.get(failed.reason, "extract_error")
    log.warning("skipping %s (%s): %s", path, reason, failed.detail)
    return reason


def read_documents(
    files: Sequence[tuple[Path, os.stat_result]],
    *,
    max_bytes: int,
    extractor: Callable[..., Document | Unreadable] = extract,
    timeout: float = EXTRACT_TIMEOUT,
) -> Generator[Document | str, None, None]:
    """:func:`read_document` of each ``(path, stat)``, in order.

    When at least two of them need a parser (HTML, PDF:
    :func:`~research_agent.fetch.processes.pool.worth_a_pool`), they are all read in worker
    processes, one per CPU: a file whose extraction crashes its worker is skipped as
    ``extract_crashed``, one that takes more than ``timeout`` seconds as
    ``extract_timeout`` (its worker is killed), one whose extractor raises as
    ``extract_error``. Closing the iterator early stops the workers.
    """
    reader = functools.partial(read_document, max_bytes=max_bytes, extractor=extractor)
    parsed_kinds = {HTML, PDF} if pdf_supported() else {HTML}  # without pypdf a PDF is skipped unread
    if not worth_a_pool(sum(1 for path, _ in files if kind_for_suffix(path.suffix) in parsed_kinds)):
        for path, before in files:
            try:
                yield reader(path, before)
            except Exception as exc:  # the same promise as the pool's: one file, not the index
                yield _skip_reason(Failed(RAISED, f"{type(exc).__name__}: {exc}"[:200]), path)
        return
    with ExtractionPool(reader, timeout=timeout) as pool:
        for (path, _before), result in zip(files, pool.map(files), strict=True):
            yield _skip_reason(result, path) if isinstance(result, Failed) else result
