"""What a fetch gives back: a page, or a failure whose reason is one of FAILURE_REASONS.

Failures are values, not exceptions: inside the fetch package a refusal is raised as
:class:`FetchRefused` and turned into a :class:`FetchFailure` at the Fetcher's edge.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import FetchRefused
from ..sources import Page, Source

__all__ = ["FAILURE_REASONS", "FetchFailure", "FetchStats", "SourceRead", "FetchRefused"]

FAILURE_REASONS = (
    "bad_url",  # not an absolute http(s) URL
    "dns_error",  # the host name did not resolve
    "private_address",  # resolves to loopback/private/link-local/... and allow_private is off
    "robots",  # robots.txt disallows the path for our user agent
    "timeout",  # connect timeout or the total deadline passed
    "network_error",  # connection refused/reset, TLS failure, protocol error
    "redirect_loop",  # a redirect came back to a URL already visited
    "too_many_redirects",  # more than max_redirects hops
    "bad_redirect",  # a redirect without a usable http(s) Location
    "bad_content_type",  # not HTML/XHTML/plain text (or PDF with pypdf)
    "binary_content",  # bytes that are not text, whatever the declared type
    "too_large",  # more than max_bytes of (decoded) body
    "bad_encoding",  # a Content-Encoding we cannot decode safely
    "decode_error",  # corrupt compressed stream, or text that is mostly undecodable
    "extract_error",  # the extractor failed on the document
    "empty",  # no text left after extraction
    # plus "http_<status>" for any non-2xx final answer, e.g. "http_404", "http_503"
)


@dataclass(frozen=True)
class FetchFailure:
    """Why a URL could not be read: ``reason`` is machine-ish (see FAILURE_REASONS)."""

    url: str
    reason: str
    detail: str = ""


@dataclass(frozen=True)
class FetchStats:
    """What a Fetcher did so far: pages fetched, served from cache, failed by reason."""

    fetched: int = 0
    cached: int = 0
    failed: Mapping[str, int] = field(default_factory=dict)
    injection_pages: int = 0

    @property
    def failed_total(self) -> int:
        return sum(self.failed.values())

    def as_dict(self) -> dict[str, Any]:
        """Plain types, for the run record."""
        return {
            "fetched": self.fetched,
            "cached": self.cached,
            "failed": dict(sorted(self.failed.items())),
            "failed_total": self.failed_total,
            "injection_pages": self.injection_pages,
        }


@dataclass(frozen=True)
class SourceRead:
    """What :meth:`Fetcher.read_source` produced for one hit.

    ``source`` is always usable; when the page could not be read, it is a
    snippet-only source (``source.snippet_only``) built from the search snippet and
    ``failure`` says why. ``page`` is the fetched page when there was one.
    """

    source: Source
    failure: FetchFailure | None = None
    page: Page | None = None

    @property
    def read(self) -> bool:
        return self.failure is None
