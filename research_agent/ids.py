"""Run ids: ``<slug>_<UTC timestamp with microseconds>``, safe as file names anywhere."""

from __future__ import annotations

import re
import unicodedata
from datetime import UTC, datetime

__all__ = ["make_run_id", "id_timestamp", "slugify"]

_STAMP = "%Y%m%dT%H%M%S%fZ"
_STAMP_RE = re.compile(r"_(\d{8}T\d{12}Z)$")


def slugify(text: str, *, max_len: int = 48) -> str:
    """Lowercase ASCII words joined by hyphens; never empty, never starts with a dot."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    words = re.findall(r"[a-z0-9]+", ascii_text.lower())
    slug = ""
    for word in words:
        candidate = f"{slug}-{word}" if slug else word
        if len(candidate) > max_len:
            break
        slug = candidate
    return slug or (words[0][:max_len] if words else "query")


def make_run_id(query: str, now: datetime | None = None) -> str:
    """A new id for a run of ``query`` started at ``now`` (UTC)."""
    now = now or datetime.now(UTC)
    return f"{slugify(query)}_{now.astimezone(UTC).strftime(_STAMP)}"


def id_timestamp(run_id: str) -> datetime | None:
    """The UTC start time encoded in an id (or a file name holding one), or None."""
    stem = run_id.rsplit("/", 1)[-1]
    for suffix in (".yaml", ".yml", ".md"):
        stem = stem.removesuffix(suffix)
    match = _STAMP_RE.search(stem)
    if not match:
        return None
    try:
        return datetime.strptime(match.group(1), _STAMP).replace(tzinfo=UTC)
    except ValueError:
        return None
