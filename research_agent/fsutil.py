"""Atomic, crash-safe file writes.

Every file research-agent leaves in ``reports/`` is written here: to a temp file in
the same folder, flushed and fsynced, then renamed over the target, so a reader (or a
process killed half-way) only ever sees no file or a complete one.
"""

from __future__ import annotations

import errno
import logging
import os
import secrets
import time
from pathlib import Path

from .errors import DiskFull, StorageError

__all__ = ["atomic_write_text", "atomic_write_bytes", "ensure_writable_dir", "remove_stale_temps", "TEMP_SUFFIX"]

TEMP_SUFFIX = ".ra-tmp"

log = logging.getLogger(__name__)


def _temp_path(target: Path) -> Path:
    return target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}{TEMP_SUFFIX}")


def atomic_write_bytes(path: Path, data: bytes, *, mode: int = 0o644) -> Path:
    """Write ``data`` to ``path`` atomically; refuse to write through a symlink."""
    path = Path(path)
    if path.is_symlink():
        raise StorageError(f"refusing to write through symlink {path}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _storage_error(path, exc) from None
    tmp = _temp_path(path)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), mode)
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException as exc:  # Ctrl-C mid-write must not leave the temp file behind either
        try:
            tmp.unlink(missing_ok=True)
        except OSError as cleanup:
            log.debug("could not remove %s: %s", tmp, cleanup)
        if isinstance(exc, OSError):
            raise _storage_error(path, exc) from None
        raise
    _fsync_dir(path.parent)
    return path


def atomic_write_text(path: Path, text: str) -> Path:
    """Write ``text`` as UTF-8 to ``path`` atomically."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def ensure_writable_dir(folder: Path) -> Path:
    """Create ``folder`` if needed and prove a file can be created in it.

    Raises StorageError (DiskFull for ENOSPC) with the folder's name otherwise: a
    read-only mount, a path under a regular file, a folder without write permission.
    A run calls this before its first model call, so it never spends tokens on a
    report it could not save.
    """
    folder = Path(folder)
    probe = _temp_path(folder / ".write-probe")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        os.close(fd)
        probe.unlink()
    except OSError as exc:
        raise _storage_error(folder, exc) from None
    return folder


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return  # some file systems do not allow opening a directory; the rename stands
    try:
        os.fsync(fd)
    except OSError:
        pass  # fsync on a directory is advisory on several platforms
    finally:
        os.close(fd)


def _storage_error(path: Path, exc: OSError) -> StorageError:
    if exc.errno == errno.ENOSPC:
        return DiskFull(f"disk full while writing {path}")
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return StorageError(f"cannot write {path}: permission denied or read-only file system")
    return StorageError(f"cannot write {path}: {exc.strerror or exc}")


def remove_stale_temps(folder: Path, *, older_than: float = 60.0) -> int:
    """Delete temp files left by killed writers; return how many were removed.

    A temp file whose writer is still alive is left alone (its pid is in the name);
    otherwise it is removed once it is older than ``older_than`` seconds, or at once
    when its writer's pid no longer exists.
    """
    removed = 0
    try:
        entries = list(Path(folder).glob(f".*{TEMP_SUFFIX}"))
    except OSError:
        return 0
    now = time.time()
    for tmp in entries:
        try:
            pid = int(tmp.name.rsplit(".", 3)[-3])
        except (ValueError, IndexError):
            pid = -1
        if pid == os.getpid():
            continue
        try:
            age = now - tmp.lstat().st_mtime
            if not _pid_alive(pid) or age > older_than:
                tmp.unlink()
                removed += 1
        except OSError:
            continue  # another process cleaned it up first
    return removed


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
