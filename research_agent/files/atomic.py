"""Atomic, crash-safe file writes.

Every file research-agent leaves in ``reports/`` is written here: to a temp file in
the same folder, flushed and fsynced, then renamed over the target, so a reader (or a
process killed half-way) only ever sees no file or a complete one. A write never
goes through a symlink and never replaces a directory, FIFO, device or socket; an
existing file keeps its permission bits. :func:`atomic_write_all` writes a group of
files (a report and its run record) all or none.
"""

from __future__ import annotations

import errno
import logging
import os
import secrets
import stat
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from ..errors import DiskFull, StorageError

__all__ = [
    "atomic_write_text",
    "atomic_write_bytes",
    "atomic_create_bytes",
    "atomic_write_all",
    "existing_file_mode",
    "file_kind",
    "ensure_writable_dir",
    "remove_stale_temps",
    "TEMP_SUFFIX",
]

TEMP_SUFFIX = ".ra-tmp"

log = logging.getLogger(__name__)


def _temp_path(target: Path) -> Path:
    return target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}{TEMP_SUFFIX}")


_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def file_kind(mode: int) -> str:
    """What an ``st_mode`` is, for messages: "a directory", "a FIFO", "a character device"..."""
    if stat.S_ISLNK(mode):
        return "a symlink"
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def existing_file_mode(path: Path) -> int | None:
    """The permission bits of the regular file at ``path``, or None when nothing is there.

    Raises StorageError for a symlink or anything that is not a regular file (a
    directory, FIFO, device or socket): those are never replaced by a write.
    """
    path = Path(path)
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _storage_error(path, exc) from None
    if stat.S_ISLNK(info.st_mode):
        raise StorageError(f"refusing to write through symlink {path}")
    if not stat.S_ISREG(info.st_mode):
        raise StorageError(f"refusing to replace {path}: it is {file_kind(info.st_mode)}, not a regular file")
    return stat.S_IMODE(info.st_mode)


def _write_temp(path: Path, data: bytes, mode: int) -> Path:
    """Write ``data`` to a fsynced temp file beside ``path``; the temp is removed on any failure.

    The temp gets the mode of the file it will replace (when there is one), so a 0600
    file stays 0600; a new file gets ``mode`` less the umask.
    """
    keep = existing_file_mode(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _storage_error(path, exc) from None
    tmp = _temp_path(path)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), mode)
        try:
            if keep is not None:
                os.fchmod(fd, keep)
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException as exc:  # Ctrl-C mid-write must not leave the temp file behind either
        _remove_quietly(tmp)
        if isinstance(exc, OSError):
            raise _storage_error(path, exc) from None
        raise
    return tmp


def _commit(tmp: Path, path: Path, rename: Callable[[Path, Path], None] = os.replace) -> None:
    """Rename the finished temp over ``path`` (never over a special file that appeared meanwhile)."""
    try:
        existing_file_mode(path)
        rename(tmp, path)
    except BaseException as exc:
        _remove_quietly(tmp)
        if isinstance(exc, OSError):
            raise _storage_error(path, exc) from None
        raise


def _remove_quietly(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError as cleanup:
        log.debug("could not remove %s: %s", path, cleanup)


def atomic_write_bytes(path: Path, data: bytes, *, mode: int = 0o644) -> Path:
    """Write ``data`` to ``path`` atomically; refuse symlinks and special files; keep an existing mode."""
    path = Path(path)
    tmp = _write_temp(path, data, mode)
    _commit(tmp, path)
    _fsync_dir(path.parent)
    return path


def atomic_create_bytes(path: Path, data: bytes, *, mode: int = 0o644) -> bool:
    """Write ``data`` to ``path`` whole, unless ``path`` exists: the first of several racing
    writers wins and the others leave it as it is. True when this call made the file.

    The complete temp file is hard-linked into place, which fails when the name exists,
    so nobody ever reads a half-written file or one a later writer swapped in.
    """
    path = Path(path)
    tmp = _write_temp(path, data, mode)
    try:
        os.link(tmp, path, follow_symlinks=False)
    except FileExistsError:
        return False
    except OSError as exc:
        raise _storage_error(path, exc) from None
    finally:
        _remove_quietly(tmp)
    _fsync_dir(path.parent)
    return True


def atomic_write_text(path: Path, text: str) -> Path:
    """Write ``text`` as UTF-8 to ``path`` atomically."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_all(
    files: Sequence[tuple[Path, bytes]],
    *,
    mode: int = 0o644,
    rename: Callable[[Path, Path], None] = os.replace,
) -> list[Path]:
    """Write every file or none (a report and its run record).

    Every temp file is written and fsynced first, so a full disk fails before any
    target changes; then they are renamed in order. If a rename fails, the files
    renamed so far that did not exist before are removed again. (A file that replaced
    an older one cannot be put back: list such files last.) ``rename`` is a seam for
    tests.
    """
    targets = [Path(path) for path, _ in files]
    temps: list[Path] = []
    try:
        for path, (_, data) in zip(targets, files, strict=True):
            temps.append(_write_temp(path, data, mode))
    except BaseException:
        for tmp in temps:
            _remove_quietly(tmp)
        raise
    created = [not os.path.lexists(path) for path in targets]
    done: list[Path] = []
    try:
        for tmp, path in zip(temps, targets, strict=True):
            _commit(tmp, path, rename)
            done.append(path)
    except BaseException:
        for tmp in temps[len(done) + 1 :]:
            _remove_quietly(tmp)
        for path, new in zip(done, created, strict=False):
            if new:
                _remove_quietly(path)
        raise
    for folder in dict.fromkeys(path.parent for path in targets):
        _fsync_dir(folder)
    return targets


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
