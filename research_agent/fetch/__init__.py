"""Reading sources: the address guard, the fetcher, the page cache, and extraction.

* :mod:`.guard`: which addresses may be fetched; resolving and pinning a URL to them.
* :mod:`.fetcher`: :class:`Fetcher`, bounded and guarded fetching (:mod:`.body` reads
  a body with a bound, :mod:`.robots` obeys robots.txt).
* :mod:`.extract` (with :mod:`.html_text`): bytes to title and text, one set of rules
  for web pages and corpus files.
* :mod:`.cache`: extracted pages on disk, served only behind the guard.
* :mod:`.gather`: search hits to the sources a run reads; :mod:`.reading` builds them.
* :mod:`.urls`: URL identity (normalised URLs, registrable domains).
* :mod:`.processes`: extraction in worker processes (the pool, its workers, and the fetcher's
  switch to them once pages overlap).
"""

from typing import TYPE_CHECKING

from ..lazy import lazy_names
from ..sources import Document, Page
from .extract import Unreadable, decode_body, extract, pdf_supported

if TYPE_CHECKING:  # what the type checker sees of the lazy names below
    from .cache import PageCache
    from .fetcher import DEFAULT_USER_AGENT, Fetcher
    from .guard import Resolver, is_public_address
    from .outcome import FAILURE_REASONS, FetchFailure, FetchStats, SourceRead

# The rest is imported on first use: an extraction worker process imports this package on
# its way to :mod:`.extract` and must not pay for the fetcher (httpx, asyncio) or the cache.
# (``extract`` cannot be lazy: importing the submodule :mod:`.extract` would set the
# package's ``extract`` attribute to the module, hiding the function.)
_LAZY = {
    "Fetcher": "fetcher",
    "DEFAULT_USER_AGENT": "fetcher",
    "FetchFailure": "outcome",
    "FetchStats": "outcome",
    "SourceRead": "outcome",
    "FAILURE_REASONS": "outcome",
    "PageCache": "cache",
    "Resolver": "guard",
    "is_public_address": "guard",
}

__all__ = [
    "Page", "Document", "extract", "Unreadable", "decode_body", "pdf_supported", "Fetcher", "DEFAULT_USER_AGENT",
    "FetchFailure", "FetchStats", "SourceRead", "FAILURE_REASONS", "PageCache", "Resolver", "is_public_address",
]  # fmt: skip


__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())
