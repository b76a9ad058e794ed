"""Reading files the tool did not write, without trusting where they lead.

A report named by a run record, ``research_context.md``, a rules file, a critique: any
of them may have been planted. :func:`read_text_capped` therefore

* refuses anything that is not a regular file (FIFOs, devices, folders);
* refuses a symlink, or, when following is allowed, a link whose target lies outside
  the folder the file belongs to (``inside``);
* checks the size cap before reading and never reads more than the cap.

:func:`check_folder_inside` does the same for a folder such as ``reports/meta``, which
must not lead out of ``reports``. Every refusal is an :class:`UnsafeFile` (an
InputError, exit 2) with a one-line reason.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from ..errors import UnsafeFile

__all__ = ["UnsafeFile", "read_text_capped", "check_folder_inside", "resolves_inside"]


def resolves_inside(path: Path, folder: Path) -> bool:
    """Whether ``path``, symlinks resolved, lies inside ``folder`` (resolved too)."""
    try:
        return Path(path).resolve().is_relative_to(Path(folder).resolve())
    except (OSError, RuntimeError):  # RuntimeError: a symlink loop on older Pythons
        return False


def _lstat(path: Path, follow_symlinks: bool) -> os.stat_result:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        raise UnsafeFile("file not found") from None
    except OSError as exc:
        raise UnsafeFile(f"cannot read ({exc.strerror or exc})") from None
    if stat.S_ISLNK(info.st_mode):
        if not follow_symlinks:
            raise UnsafeFile("symlink refused (it must be a regular file)")
        try:
            info = os.stat(path)
        except OSError as exc:
            raise UnsafeFile(f"broken symlink ({exc.strerror or exc})") from None
    if not stat.S_ISREG(info.st_mode):
        raise UnsafeFile("not a regular file")
    return info


def _read_at_most(path: Path, max_bytes: int, follow_symlinks: bool, truncate: bool) -> bytes:
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
    if not follow_symlinks:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafeFile("symlink refused (it must be a regular file)") from None
        raise UnsafeFile(f"cannot open ({exc.strerror or exc})") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped for something else since the lstat
            raise UnsafeFile("not a regular file")
        chunks: list[bytes] = []
        left = max_bytes + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as exc:
        raise UnsafeFile(f"cannot read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > max_bytes:
        if truncate:
            return data[:max_bytes]
        raise UnsafeFile(f"too large (more than {max_bytes} bytes)")
    return data


def read_text_capped(
    path: Path,
    *,
    max_bytes: int,
    inside: Path | None = None,
    follow_symlinks: bool = False,
    errors: str = "strict",
    truncate: bool = False,
) -> str:
    """The UTF-8 text of the regular file ``path`` (see the module docstring).

    ``inside``: the folder the file must lie in once symlinks are resolved. ``errors``
    is the decoding policy; with "strict", text that is not UTF-8 is refused.
    ``truncate``: a larger file gives its first ``max_bytes`` instead of an error.
    """
    path = Path(path)
    info = _lstat(path, follow_symlinks)
    # A regular file named directly in ``inside`` cannot lead elsewhere: skip resolving.
    direct = not follow_symlinks and inside is not None and path.parent == Path(inside)
    if inside is not None and not direct and not resolves_inside(path, inside):
        raise UnsafeFile(f"leads outside {inside}")
    if info.st_size > max_bytes and not truncate:
        raise UnsafeFile(f"too large ({info.st_size} bytes; limit {max_bytes})")
    data = _read_at_most(path, max_bytes, follow_symlinks, truncate)
    try:
        return data.decode("utf-8", errors=errors)
    except UnicodeDecodeError as exc:
        raise UnsafeFile(f"not UTF-8 text (byte {exc.start})") from None


def check_folder_inside(folder: Path, parent: Path) -> Path:
    """Refuse ``folder`` when it is a symlink (or below one) that leads out of ``parent``.

    A folder that does not exist yet is fine: it will be created as a real folder.
    Returns ``folder``.
    """
    folder = Path(folder)
    if not (folder.exists() or folder.is_symlink()):
        return folder
    if not resolves_inside(folder, parent):
        try:
            target = str(folder.resolve())
        except (OSError, RuntimeError):
            target = "an unresolvable place"
        raise UnsafeFile(f"{folder} leads outside {parent} (to {target}); refusing to use it")
    return folder
