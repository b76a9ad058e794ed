"""Which lesson files a person has trusted: their sha256, kept in the user state folder.

A ``reports/meta/lessons.yaml`` may have come with someone else's repository, so its text
reaches a prompt only while the file is exactly what a person trusted. The hash of that
content is recorded here, outside ``reports/``, by the commands a person runs (``memory
add-lesson``, ``memory approve``, ``memory trust-lessons``); any other change to the file
makes its hash differ, and the file is ignored until it is trusted again. Files are known
by their resolved absolute path, so each reports folder has its own.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

from .state_records import read_record, update_record

__all__ = ["TRUST_RECORD", "content_digest", "trusted_digest", "trust_content"]

TRUST_RECORD = "trusted-lessons.json"
_DIGEST = re.compile(r"^[0-9a-f]{64}$")


def content_digest(text: str) -> str:
    """The sha256 (hex) of a file's text as read (UTF-8)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _name(path: Path) -> str:
    return str(Path(path).absolute().resolve())


def trusted_digest(state_dir: Path, path: Path) -> str | None:
    """The digest a person trusted for the file at ``path``; None when none was recorded."""
    files = read_record(state_dir, TRUST_RECORD).get("files")
    digest = files.get(_name(path)) if isinstance(files, dict) else None
    return digest if isinstance(digest, str) and _DIGEST.match(digest) else None


def trust_content(state_dir: Path, path: Path, digest: str) -> None:
    """Record ``digest`` as the trusted content of the file at ``path``."""
    if not _DIGEST.match(digest):
        raise ValueError(f"not a sha256 digest: {digest[:80]!r}")

    def change(data: dict[str, Any]) -> None:
        files = data.get("files")
        data["files"] = {**(files if isinstance(files, dict) else {}), _name(path): digest}

    update_record(state_dir, TRUST_RECORD, change)
