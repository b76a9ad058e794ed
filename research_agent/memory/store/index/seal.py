"""Remembering that an index was checked, so that an unchanged one is not checked again.

Checking every row's MAC (:mod:`.sign`) costs about as much as the rest of a lesson
selection over thousands of critiques. So the user state folder, which a planted
``reports/`` cannot reach, keeps a *seal* per index: the file's signature (inode, size,
mtime, ctime, from ``lstat``) as it was when every file and use row it held had been
checked (or written) by this user's tool, with no write-ahead log pending. An index file
whose signature still matches has not been written since, by anyone: every write changes
its mtime and ctime, and nobody but the clock's owner can set a ctime back. Its rows are
then the checked ones and need no second check; any other index is checked row by row,
and sealed again once it has been.

A critique kept for ``memory list`` is checked whenever it is read, sealed or not.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from pathlib import Path

from ....errors import StorageError
from ....files.atomic import atomic_write_text
from ....files.state import secret_key, state_folder
from .rows import signature

__all__ = ["IndexTrust", "SEALS"]

SEALS = "index-seals"  # folder in the user state folder


class IndexTrust:
    """What lets an index on disk be used: the user's secret key (it signs every row), and
    the seals of the indexes it checked, both kept in ``state_dir``."""

    def __init__(self, state_dir: Path) -> None:
        self.state_dir = Path(state_dir)
        self._key: bytes | None = None

    @property
    def key(self) -> bytes:
        if self._key is None:
            self._key = secret_key(self.state_dir)
        return self._key

    def _seal_path(self, index_path: Path) -> Path:
        name = hashlib.sha256(str(Path(index_path).absolute()).encode("utf-8", "surrogatepass")).hexdigest()
        return state_folder(self.state_dir) / SEALS / name[:32]

    def holds(self, index_path: Path) -> bool:
        """Whether ``index_path`` is exactly as it was when sealed."""
        now = _fingerprint(index_path)
        if now is None:
            return False
        try:
            return self._sealed_as(self._seal_path(index_path)) == now
        except StorageError:  # the state folder cannot be used
            return False

    def seal(self, index_path: Path) -> None:
        """Seal ``index_path`` as it is now (every row in it was checked or written by this
        tool); nothing is sealed while a write-ahead log is pending."""
        now = _fingerprint(index_path)
        with contextlib.suppress(OSError, StorageError):  # a seal saves time; it is never needed
            path = self._seal_path(index_path)
            if now is None:
                path.unlink(missing_ok=True)
                return
            if self._sealed_as(path) == now:
                return  # unchanged: no write
            path.parent.mkdir(mode=0o700, exist_ok=True)
            atomic_write_text(path, now)

    @staticmethod
    def _sealed_as(path: Path) -> str | None:
        try:
            return path.read_text(encoding="ascii")
        except (OSError, UnicodeDecodeError):
            return None


def _fingerprint(index_path: Path) -> str | None:
    """The index file's signature, or None when it is not a regular file or a write-ahead
    log with content lies beside it (the file alone is not the index then)."""
    try:
        info = os.lstat(index_path)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    try:
        wal = os.lstat(f"{index_path}-wal")
    except FileNotFoundError:
        return signature(info)
    except OSError:
        return None
    return signature(info) if stat.S_ISREG(wal.st_mode) and wal.st_size == 0 else None
