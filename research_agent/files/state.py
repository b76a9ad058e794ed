"""The user state folder: what the tool must trust, kept where a planted ``reports/`` cannot reach.

Anything under ``reports/`` may have come with someone else's repository, so what decides
trust lives outside it, in ``Settings.state_dir`` (``$RESEARCH_AGENT_STATE_DIR``, else
``$XDG_STATE_HOME/research-agent``): a secret key (:func:`secret_key`) that signs what the
tool derives from files it does not trust, such as the summary index's rows. The folder is
private to the user (0700) and the key file is 0600, created on first use and never
replaced once it exists. A folder that others may read or write (made by hand, or copied
with its mode) is still used, with one warning per process (:func:`warn_if_open`): the
key file in it is refused when others may read it.
"""

from __future__ import annotations

import logging
import os
import secrets
import stat
import threading
from pathlib import Path

from ..errors import StorageError
from .atomic import atomic_create_bytes

__all__ = ["state_folder", "secret_key", "warn_if_open", "KEY_FILE", "KEY_BYTES"]

KEY_FILE = "secret.key"
KEY_BYTES = 32
log = logging.getLogger(__name__)
_warned: set[str] = set()
_warned_lock = threading.Lock()


def warn_if_open(path: Path, what: str, mode: int, *, fix: str) -> bool:
    """Warn once per process (per path) when ``mode`` lets others (group or world) read or
    write ``path``, ``what`` naming it and ``fix`` saying what to run; whether it warned now."""
    if not mode & 0o077:
        return False
    with _warned_lock:
        if str(path) in _warned:
            return False
        _warned.add(str(path))
    verbs = [verb for verb, bits in (("read", 0o044), ("written", 0o022), ("entered", 0o011)) if mode & bits]
    said = " and ".join(filter(None, (", ".join(verbs[:-1]), verbs[-1])))
    log.warning("%s %s may be %s by others (mode %o); %s", what, path, said, stat.S_IMODE(mode), fix)
    return True


def state_folder(state_dir: Path) -> Path:
    """``state_dir``, created private to the user if missing; a path that is not a real
    folder owned by this user (a symlink, a file, someone else's folder) is refused."""
    folder = Path(state_dir)
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = os.lstat(folder)
    except OSError as exc:
        raise StorageError(f"cannot use the state folder {folder}: {exc.strerror or exc}") from None
    if not stat.S_ISDIR(info.st_mode):
        raise StorageError(f"the state folder {folder} is not a folder (a symlink or a file is refused)")
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        raise StorageError(f"the state folder {folder} belongs to another user")
    warn_if_open(folder, "the state folder", info.st_mode, fix=f"chmod 700 {folder}")
    return folder


def secret_key(state_dir: Path) -> bytes:
    """The user's secret key (:data:`KEY_BYTES` random bytes), made on first use."""
    path = state_folder(state_dir) / KEY_FILE
    key = _read_key(path)
    if key is not None:
        return key
    atomic_create_bytes(path, secrets.token_bytes(KEY_BYTES), mode=0o600)  # a racing run's key wins alike
    key = _read_key(path)
    if key is None:  # pragma: no cover - the file was just written
        raise StorageError(f"cannot read the key just written to {path}")
    return key


def _read_key(path: Path) -> bytes | None:
    """The key in ``path``; None when there is none yet. A key file that is not a regular
    file of the right size, or that others may read, is refused rather than trusted."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StorageError(f"cannot read the key file {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode) or info.st_size != KEY_BYTES:
        raise StorageError(f"the key file {path} is not a {KEY_BYTES}-byte regular file; remove it to make a new one")
    if info.st_mode & 0o077:
        raise StorageError(f"the key file {path} may be read by others (mode {stat.S_IMODE(info.st_mode):o}); chmod 600 it")
    with open(path, "rb") as handle:
        return handle.read()
