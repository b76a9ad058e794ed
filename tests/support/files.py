"""Files a test lays down: text (UTF-8) or raw bytes at a path, its folders made."""

from __future__ import annotations

from pathlib import Path


def write_file(path: Path, content: str | bytes) -> Path:
    """Write ``content`` to ``path`` (``str`` as UTF-8, ``bytes`` as they are), making its folders; returns ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path
