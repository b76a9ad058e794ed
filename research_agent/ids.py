"""Run ids (``<slug>_<UTC timestamp with microseconds>``, safe as file names anywhere), and the time and date forms the tool reads and writes."""

from __future__ import annotations

import re
import unicodedata
from datetime import UTC, date, datetime, timedelta
from typing import TypeGuard

__all__ = [
    "RUN_ID_PATTERN",
    "is_run_id",
    "make_run_id",
    "id_timestamp",
    "slugify",
    "parse_zoned_time",
    "format_utc",
    "iso_date",
]

_STAMP = "%Y%m%dT%H%M%S%fZ"
_STAMP_RE = re.compile(r"_(\d{8}T\d{12}Z)$")
RUN_ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}_[0-9]{8}T[0-9]{12}Z$")


def is_run_id(text: object) -> TypeGuard[str]:
    """True for a run id as :func:`make_run_id` makes them (safe as a file name anywhere)."""
    return isinstance(text, str) and RUN_ID_PATTERN.match(text) is not None


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


_ORDINAL = re.compile(r"^(\d{4})-?(\d{3})(?=[T ])")


def parse_zoned_time(text: object) -> datetime | None:
    """An ISO 8601 date and time *with a zone* (``Z``, ``+02:00``, ``+0200``...) as UTC; else None.

    Extended and basic forms, week dates (``2026-W47-7``) and ordinal dates
    (``2026-326``) are accepted, ``t``/``z`` in either case, fractions with ``.`` or ``,``.
    """
    if not isinstance(text, str) or len(text) > 40:
        return None
    value = text.strip().upper()
    ordinal = _ORDINAL.match(value)
    try:
        if ordinal:
            day = datetime(int(ordinal[1]), 1, 1) + timedelta(days=int(ordinal[2]) - 1)
            if day.year != int(ordinal[1]) or int(ordinal[2]) < 1:
                return None
            value = day.strftime("%Y-%m-%d") + value[ordinal.end() :]
        if not re.search(r"[T ]\d", value):
            return None  # a date alone has no time, so no zone either
        when = datetime.fromisoformat(value)
        if when.tzinfo is None or when.utcoffset() is None:
            return None
        return when.astimezone(UTC)
    except (ValueError, OverflowError):
        return None


def format_utc(when: datetime) -> str:
    """The form research-agent writes times in: ``2026-11-22T09:58:36.000000Z``."""
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


_DATE = re.compile(r"^\s*(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)")


def iso_date(text: str | None) -> str | None:
    """``YYYY-MM-DD`` from a date a page or search result gave (``2024-05-01T10:00Z``,
    ``2024/5/1``); None when there is none or it is no real date."""
    match = _DATE.match(text or "")
    if match is None:
        return None
    try:
        return date(*(int(g) for g in match.groups())).isoformat()
    except ValueError:
        return None
