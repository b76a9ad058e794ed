"""On-disk cache of fetched, extracted pages.

One JSON file per page, named by sha256 of the normalised URL and sharded into
256 folders. Files are written atomically (research_agent.files.atomic), so concurrent runs
sharing a cache only ever see whole entries; the last writer wins, which is harmless
since both wrote the same page. Entries older than the TTL are misses. A corrupt or
foreign file is a miss too, never an error.

Each entry keeps the addresses its page was fetched from (every redirect hop), so the
fetcher can refuse a cached page that its address guard would refuse today; an entry
without them (written before version 2) is a miss.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import StorageError
from ..files.atomic import atomic_write_text, remove_stale_temps
from ..sources import Page
from .urls import normalize_url

if TYPE_CHECKING:
    from ..config import Settings

__all__ = ["PageCache", "CACHE_VERSION"]

log = logging.getLogger(__name__)

# 2: entries carry the addresses the page came from; 3: text without permalink marks; 4: the title apart
# from the text, and no markdown heading marks or rules in it
CACHE_VERSION = 4
_MAX_ENTRY_BYTES = 64 * 1024 * 1024


def _addresses(value: Any) -> tuple[str, ...]:
    """The entry's addresses as IP strings; empty (a miss) unless every one is an IP address."""
    if not isinstance(value, list) or not value or len(value) > 64:
        return ()
    if not all(isinstance(a, str) for a in value):
        return ()
    try:
        return tuple(str(ipaddress.ip_address(a.split("%", 1)[0])) for a in value)
    except ValueError:
        return ()


class PageCache:
    """Extracted pages on disk, keyed by normalised URL, valid for ``ttl_seconds``.

    ``clock`` returns the current time in seconds (default ``time.time``); tests pass
    a fake one. A failed write is logged and skipped: the cache never fails a run.
    """

    def __init__(
        self, directory: Path | str, ttl_seconds: float, *, clock: Callable[[], float] = time.time
    ) -> None:
        self.dir = Path(directory)
        self.ttl = float(ttl_seconds)
        self._clock = clock
        self.write_errors = 0

    @classmethod
    def for_settings(cls, settings: Settings) -> PageCache:
        """The page cache under ``settings.cache_dir`` with ``settings.cache_ttl``."""
        return cls(Path(settings.cache_dir) / "pages", settings.cache_ttl)

    @staticmethod
    def key(url: str) -> str:
        return hashlib.sha256(normalize_url(url).encode("utf-8")).hexdigest()

    def path_for(self, url: str) -> Path:
        digest = self.key(url)
        return self.dir / digest[:2] / f"{digest}.json"

    def get(self, url: str) -> Page | None:
        """The cached page for ``url`` (``from_cache=True``), or None when absent or expired."""
        path = self.path_for(url)
        try:
            if path.is_symlink() or path.stat().st_size > _MAX_ENTRY_BYTES:
                return None
            entry = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            log.info("page cache: unreadable entry %s (%s)", path.name, exc)
            return None
        page = self._page(entry, url)
        if page is None:
            log.info("page cache: ignoring malformed entry %s", path.name)
        return page

    def _page(self, entry: Any, url: str) -> Page | None:
        if not isinstance(entry, dict) or entry.get("version") != CACHE_VERSION:
            return None
        stored = entry.get("stored_at")
        if not isinstance(stored, int | float) or self._clock() - stored > self.ttl:
            return None
        if entry.get("key") != normalize_url(url):
            return None  # a sha256 collision is not going to happen, but a hand-edited file might
        addresses = _addresses(entry.get("addresses"))
        if not addresses:
            return None
        try:
            return Page(
                url=str(entry["url"]),
                final_url=str(entry["final_url"]),
                title=str(entry["title"]),
                date=None if entry.get("date") is None else str(entry["date"]),
                site_name=str(entry["site_name"]),
                text=str(entry["text"]),
                from_cache=True,
                addresses=addresses,
            )
        except KeyError:
            return None

    def put(self, page: Page) -> bool:
        """Store ``page`` under its requested URL; False (and logged) when the write failed.

        A page that does not say which addresses it came from is not stored (it could
        never be served).
        """
        if not page.addresses:
            return False
        entry = {
            "version": CACHE_VERSION,
            "key": normalize_url(page.url),
            "stored_at": self._clock(),
            "url": page.url,
            "final_url": page.final_url,
            "title": page.title,
            "date": page.date,
            "site_name": page.site_name,
            "text": page.text,
            "addresses": list(page.addresses),
        }
        try:
            atomic_write_text(self.path_for(page.url), json.dumps(entry, ensure_ascii=False))
        except StorageError as exc:
            self.write_errors += 1
            log.warning("page cache: %s", exc)
            return False
        return True

    def _entries(self) -> list[Path]:
        if not self.dir.is_dir():
            return []
        return [p for p in self.dir.glob("??/*.json") if p.is_file() and not p.is_symlink()]

    def __len__(self) -> int:
        return len(self._entries())

    def clear(self) -> int:
        """Delete every entry (and stale temp files); return how many entries were removed."""
        return self._remove(self._entries())

    def prune_expired(self) -> int:
        """Delete entries older than the TTL (and unreadable ones); return how many were removed."""
        now = self._clock()
        old = []
        for path in self._entries():
            try:
                stored = json.loads(path.read_text(encoding="utf-8")).get("stored_at")
            except FileNotFoundError:
                continue  # removed by a concurrent clear
            except (OSError, ValueError, AttributeError):
                stored = None
            if not isinstance(stored, int | float) or now - stored > self.ttl:
                old.append(path)
        return self._remove(old)

    def _remove(self, paths: list[Path]) -> int:
        removed = 0
        for path in paths:
            try:
                path.unlink()
                removed += 1
            except FileNotFoundError:
                continue  # another process removed it first
            except OSError as exc:
                log.warning("page cache: cannot remove %s (%s)", path, exc)
        if self.dir.is_dir():
            for shard in self.dir.iterdir():
                if shard.is_dir() and not shard.is_symlink():
                    remove_stale_temps(shard)
        return removed
