"""A Fetcher with a DNS seam, and the pages and failures the fetch tests look at."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from research_agent.fetch import Fetcher, FetchFailure, Page

SITE = "site.test"


def resolver(mapping: dict[str, str]) -> Callable[[str], Any]:
    """A DNS seam: names in ``mapping`` resolve, every other name fails like NXDOMAIN."""

    async def resolve(host: str) -> list[str]:
        if host in mapping:
            return [mapping[host]]
        raise OSError(f"[Errno -2] Name or service not known: {host}")

    return resolve


def make_fetcher(**kw: Any) -> Fetcher:
    options: dict[str, Any] = {
        "allow_private": True,
        "resolver": resolver({SITE: "127.0.0.1", "other.test": "127.0.0.1"}),
        "total_timeout": 10.0,
        "connect_timeout": 5.0,
    }
    options.update(kw)
    return Fetcher(**options)


def failure(result: Page | FetchFailure) -> str:
    assert isinstance(result, FetchFailure), f"expected a failure, got a page: {result}"
    return result.reason


def sample_page(url: str = "https://www.example.com/a", text: str = "Some text.") -> Page:
    return Page(url, url, "Title", "2024-01-01", "Example", text, addresses=("93.184.216.34",))
