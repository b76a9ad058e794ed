"""Reading sources: the address guard, the fetcher, the page cache, and extraction.

* :mod:`.guard`: which addresses may be fetched; resolving and pinning a URL to them.
* :mod:`.fetcher`: :class:`Fetcher`, bounded and guarded fetching (:mod:`.body` reads
  a body with a bound, :mod:`.robots` obeys robots.txt).
* :mod:`.extract` (with :mod:`.html_text`): bytes to title and text, one set of rules
  for web pages and corpus files.
* :mod:`.cache`: extracted pages on disk, served only behind the guard.
* :mod:`.gather`: search hits to the sources a run reads; :mod:`.reading` builds them.
* :mod:`.urls`: URL identity (normalised URLs, registrable domains).
"""

from ..sources import Document, Page
from .cache import PageCache
from .extract import Unreadable, decode_body, extract, pdf_supported
from .fetcher import DEFAULT_USER_AGENT, Fetcher
from .guard import Resolver, is_public_address
from .outcome import FAILURE_REASONS, FetchFailure, FetchStats, SourceRead

__all__ = [
    "Fetcher",
    "Page",
    "Document",
    "FetchFailure",
    "FetchStats",
    "SourceRead",
    "PageCache",
    "Resolver",
    "FAILURE_REASONS",
    "DEFAULT_USER_AGENT",
    "is_public_address",
    "extract",
    "Unreadable",
    "decode_body",
    "pdf_supported",
]
