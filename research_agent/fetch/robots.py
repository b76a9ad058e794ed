"""robots.txt: fetched once per origin per run (through the same guarded download) and obeyed."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit
from urllib.robotparser import RobotFileParser

import httpx

from .body import Body
from .extract import decode_body
from .outcome import FetchRefused

__all__ = ["RobotsRules", "ROBOTS_MAX_BYTES"]

log = logging.getLogger(__name__)

ROBOTS_MAX_BYTES = 512 * 1024
_ROBOTS_TIMEOUT = 10.0


class RobotsRules:
    """The robots.txt rules of every origin one Fetcher visits.

    ``download(url)`` fetches robots.txt (bounded, guarded, redirects followed); it
    raises FetchRefused, httpx errors or OSError when it cannot.
    """

    def __init__(
        self, download: Callable[[str], Awaitable[Body]], *, user_agent: str, timeout: float
    ) -> None:
        self._download = download
        self._user_agent = user_agent
        self._timeout = min(timeout, _ROBOTS_TIMEOUT)
        self._loads: dict[str, asyncio.Future[RobotFileParser | None]] = {}

    async def allows(self, url: str) -> bool:
        """Whether robots.txt lets our user agent fetch ``url`` (loaded once per origin)."""
        parts = urlsplit(url)
        origin = f"{parts.scheme.lower()}://{parts.netloc.lower()}"
        task = self._loads.get(origin)
        if task is None:
            task = asyncio.ensure_future(self._load(origin))
            self._loads[origin] = task
        parser = await asyncio.shield(task)
        return parser is None or parser.can_fetch(self._user_agent, url)

    def cancel(self) -> None:
        """Cancel the loads still pending."""
        for task in self._loads.values():
            if not task.done():
                task.cancel()

    async def _load(self, origin: str) -> RobotFileParser | None:
        """The parsed robots.txt of ``origin``; None means everything is allowed.

        Per RFC 9309: a 4xx (or no usable file) allows everything, a 5xx disallows
        everything. When robots.txt cannot be reached at all the page is tried, and
        its own fetch reports what is wrong.
        """
        try:
            async with asyncio.timeout(self._timeout):
                body = await self._download(f"{origin}/robots.txt")
        except FetchRefused as exc:
            if exc.reason.startswith("http_5"):
                parser = RobotFileParser()
                parser.disallow_all = True  # type: ignore[attr-defined]  # read() sets it; typeshed omits it
                return parser
            return None
        except (TimeoutError, httpx.HTTPError, OSError) as exc:
            log.info("robots.txt of %s unreachable (%s); fetching pages anyway", origin, type(exc).__name__)
            return None
        text = decode_body(body.data, body.charset, html=False)
        parser = RobotFileParser()
        parser.parse(text.splitlines())
        return parser
