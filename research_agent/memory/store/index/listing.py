"""Listing the critique files the summary index summarises (see :mod:`.summary`)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

from ....errors import StorageError
from ....files.safefile import check_folder_inside
from ..files import is_critique_name
from .rows import signature

__all__ = ["Listing", "list_files"]


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
