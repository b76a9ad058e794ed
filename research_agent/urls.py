"""URL normalisation and registrable domains (placeholder until the web work lands)."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

__all__ = ["normalize_url", "registrable_domain"]


def normalize_url(url: str) -> str:
    parts = urlsplit(url.strip())
    path = parts.path.rstrip("/") or "/"
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, parts.query, ""))


def registrable_domain(url_or_host: str) -> str:
    host = urlsplit(url_or_host).hostname if "//" in url_or_host else url_or_host
    host = (host or "").lower().strip(".")
    labels = host.split(".")
    return ".".join(labels[-2:]) if len(labels) >= 2 else host
