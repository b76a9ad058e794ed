"""The ``--allow-dir`` check: a caller of a front end may name only folders its owner allowed.

The caller of the MCP server is a model, the caller of the web workbench a page in a
browser: neither may read outside the folders the front end was started with, through a
symlink or ``..``. Every path is compared with its symlinks resolved.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..errors import InputError

__all__ = ["resolve_allowed_dirs", "inside_any", "check_corpus_dirs"]


def resolve_allowed_dirs(folders: Sequence[Path]) -> tuple[Path, ...]:
    """The ``--allow-dir`` folders, symlinks resolved; InputError for one that is not a folder."""
    resolved = []
    for folder in folders:
        real = Path(folder).expanduser().resolve()
        if not real.is_dir():
            raise InputError(f"--allow-dir {folder}: not a folder")
        resolved.append(real)
    return tuple(dict.fromkeys(resolved))


def inside_any(path: Path, roots: Sequence[Path]) -> Path | None:
    """``path`` with its symlinks resolved when it is one of ``roots`` or lies below one; else None."""
    real = Path(path).expanduser().resolve()
    return real if any(real == root or real.is_relative_to(root) for root in roots) else None


def check_corpus_dirs(folders: Sequence[Path], allowed: Sequence[Path]) -> tuple[Path, ...]:
    """Each corpus folder with its symlinks resolved, when it is an allowed folder or lies below one.

    Raises InputError naming the first folder that is not, so a caller cannot reach
    outside the folders the server was started with, through a symlink or ``..``.
    """
    checked = []
    for folder in folders:
        real = inside_any(folder, allowed)
        if real is None:
            where = ", ".join(str(root) for root in allowed)
            reason = f"it is not below an allowed folder ({where})" if allowed else "this server reads no folders"
            raise InputError(
                f"corpus folder {str(folder)[:200]!r} refused: {reason}; "
                "start the server with --allow-dir to allow one"
            )
        checked.append(real)
    return tuple(checked)
