"""An exclusive lock held on a lock file for the length of a ``with`` block.

Several processes (runs, critique workers, commands a person runs) change the same files;
where a change spans a read and a write, they take turns through ``flock`` on a small lock
file beside what they change. Closing the descriptor releases the lock even if the process
dies, so a crash never leaves a folder locked; and so :func:`held` tells a live process's
lock from one whose process died (the run journal's ``interrupted``), with no timer.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from ..errors import Locked, StorageError

__all__ = ["exclusive_lock", "held", "Locked"]


@contextlib.contextmanager
def exclusive_lock(path: Path, *, mode: int = 0o644, wait: bool = True) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path`` (created with ``mode`` when missing; never
    through a symlink); StorageError when it cannot be opened. ``wait=False``: :class:`Locked`
    at once when another process holds it."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), mode)
    except OSError as exc:
        raise StorageError(f"cannot lock {path}: {exc.strerror or exc}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            raise Locked(f"{path} is locked by another process") from None
        yield
    finally:
        with contextlib.suppress(OSError):  # closing the descriptor releases the lock anyway
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def held(path: Path) -> bool:
    """Whether some process (this one too, through another descriptor) holds the lock on ``path``.
    A lock file that is gone is held by nobody; one that cannot be opened counts as held (never
    call a live holder dead). Looking takes a shared lock for an instant, and creates nothing."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return False
    except OSError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing releases a lock taken here
    return False
