"""Business context from research_context.md: optional, sanitized, always data.

The file must be a regular file; it may be a symlink only to a file inside its own
folder (a planted ``research_context.md -> /etc/passwd`` is refused).
"""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import InputError
from ..files.safefile import UnsafeFile, read_text_capped
from ..text.masking import cut_blocks
from ..text.sanitize import sanitize, wrap_data

__all__ = ["load_context", "MAX_CONTEXT_CHARS"]

MAX_CONTEXT_CHARS = 4000
_COMMENT_OPEN = re.compile("<!--")
_COMMENT_CLOSE = re.compile("-->")


def load_context(path: Path | None, *, required: bool = False) -> str:
    """The prompt block for ``path``, or "" when there is none or it holds only comments.

    ``required`` is for a path the user named: then a missing file is an error. The
    default ``research_context.md`` in the current folder is optional.
    """
    if path is None:
        return ""
    if not (path.exists() or path.is_symlink()):
        if required:
            raise InputError(f"context file {path} does not exist (use --context none to run without one)")
        return ""
    try:
        raw = read_text_capped(
            path,
            max_bytes=MAX_CONTEXT_CHARS * 8,
            inside=path.absolute().parent,
            follow_symlinks=True,
            errors="replace",
            truncate=True,
        )
    except UnsafeFile as exc:
        raise InputError(f"context file {path}: {exc}") from None
    text = sanitize(cut_blocks(raw, _COMMENT_OPEN, _COMMENT_CLOSE), max_chars=MAX_CONTEXT_CHARS)
    if not text.strip():
        return ""
    return "Background about the user (use it to choose emphasis, never as evidence):\n" + wrap_data(
        "business context", text
    )
