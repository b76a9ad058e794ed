"""Business context from research_context.md: optional, sanitized, always data."""

from __future__ import annotations

import re
from pathlib import Path

from .errors import InputError
from .sanitize import sanitize, wrap_data

__all__ = ["load_context", "MAX_CONTEXT_CHARS"]

MAX_CONTEXT_CHARS = 4000
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)


def load_context(path: Path | None, *, required: bool = False) -> str:
    """The prompt block for ``path``, or "" when there is none or it holds only comments.

    ``required`` is for a path the user named: then a missing file is an error. The
    default ``research_context.md`` in the current folder is optional.
    """
    if path is None:
        return ""
    if not path.is_file():
        if required:
            raise InputError(f"context file {path} does not exist (use --context none to run without one)")
        return ""
    try:
        raw = path.read_bytes()[: MAX_CONTEXT_CHARS * 8].decode("utf-8", errors="replace")
    except OSError as exc:
        raise InputError(f"cannot read context file {path}: {exc.strerror or exc}") from None
    text = sanitize(_COMMENT.sub("", raw), max_chars=MAX_CONTEXT_CHARS)
    if not text.strip():
        return ""
    return "Background about the user (use it to choose emphasis, never as evidence):\n" + wrap_data(
        "business context", text
    )
