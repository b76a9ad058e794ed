"""The scholarly providers a run asks for, built from Settings; their checks; doctor's small query.

Each provider gets its own :class:`~.polite.Api`: the base URL from its setting (or
``RESEARCH_AGENT_<PROVIDER>_URL``), its pace (the API's published rate, quicker with a key), its
key and the contact address (``mailto``), and the run's reply limits (``fetch_timeout`` for each
request, ``search_reply_max_bytes`` for each reply).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Sequence
from typing import Any

import httpx

from ...config import Settings
from ...errors import ConfigError
from ...fetch.fetcher import DEFAULT_USER_AGENT
from ...fetch.urls import is_web_url
from ..base import ProviderError, SearchProvider
from ..reply import ReplyLimits
from . import arxiv, openalex, pubmed, semanticscholar, wikipedia
from .polite import Api, Pace, Sleep

__all__ = ["check_settings", "scholarly_provider", "probe", "PROBE_QUERY"]

PROBE_QUERY = "climate"  # doctor's one small query: a word every index has results for
_MAILTO = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def _base_url(settings: Settings, name: str) -> str:
    url = str(getattr(settings, f"{name}_url")).strip()
    return wikipedia.api_url(url, settings.wikipedia_language) if name == "wikipedia" else url


def check_settings(settings: Settings, names: Sequence[str]) -> None:
    """ConfigError for a base URL that is not an http(s) URL, a bad Wikipedia language, or a
    ``mailto`` that is no e-mail address, among the providers in ``names``."""
    for name in names:
        if name == "wikipedia" and not wikipedia.valid_language(settings.wikipedia_language):
            raise ConfigError(
                f"wikipedia_language {settings.wikipedia_language!r} is not a Wikipedia language code (en, de, zh-yue...)"
            )
        if not is_web_url(url := _base_url(settings, name)):
            env = f"RESEARCH_AGENT_{name.upper()}_URL"
            raise ConfigError(f"{name} needs an http(s) base URL ({name}_url or {env}), got {url!r}")
    if "pubmed" in names and not is_web_url(settings.pmc_url):
        raise ConfigError(f"pubmed needs an http(s) PubMed Central URL (pmc_url or RESEARCH_AGENT_PMC_URL), got {settings.pmc_url!r}")
    if names and settings.mailto and not _MAILTO.match(settings.mailto):
        raise ConfigError(f"mailto {settings.mailto!r} is not an e-mail address")


def _pace_and_keys(name: str, settings: Settings) -> tuple[float, dict[str, str], dict[str, str]]:
    """The interval between requests, the query parameters and the headers ``name`` sends."""
    if name == "openalex":
        return openalex.INTERVAL, {"mailto": settings.mailto, "api_key": settings.openalex_api_key.strip()}, {}
    if name == "arxiv":
        return arxiv.INTERVAL, {}, {}
    if name == "pubmed":
        key = settings.ncbi_api_key.strip()
        params = {"tool": "research-agent", "email": settings.mailto, "api_key": key}
        return (pubmed.KEYED_INTERVAL if key else pubmed.INTERVAL), params, {}
    if name == "semanticscholar":
        key = settings.semanticscholar_api_key.strip()
        return (semanticscholar.KEYED_INTERVAL if key else semanticscholar.INTERVAL), {}, {"x-api-key": key}
    return wikipedia.INTERVAL, {}, {}


_CLASSES: dict[str, Callable[[Api, Settings, str], SearchProvider]] = {
    "openalex": lambda api, _, url: openalex.OpenAlexProvider(api, url),
    "arxiv": lambda api, _, url: arxiv.ArxivProvider(api, url),
    "pubmed": lambda api, settings, url: pubmed.PubmedProvider(api, url, settings.pmc_url),
    "semanticscholar": lambda api, _, url: semanticscholar.SemanticScholarProvider(api, url),
    "wikipedia": lambda api, _, url: wikipedia.WikipediaProvider(api, url),
}


def scholarly_provider(
    name: str,
    settings: Settings,
    client: httpx.AsyncClient,
    *,
    clock: Callable[[], float] | None = None,
    sleep: Sleep | None = None,
) -> SearchProvider:
    """The provider ``name`` (one of :data:`~research_agent.search.scholarly.SCHOLARLY_PROVIDERS`).
    ``clock`` and ``sleep`` are the pace's and the reply limit's seams for tests."""
    interval, params, headers = _pace_and_keys(name, settings)
    agent = f"{DEFAULT_USER_AGENT} mailto:{settings.mailto}" if settings.mailto else DEFAULT_USER_AGENT
    limits = ReplyLimits(max(1.0, float(settings.fetch_timeout)), settings.search_reply_max_bytes, clock)
    api = Api(name, client, limits, Pace(interval, clock=clock, sleep=sleep), params=params,
              headers={**headers, "User-Agent": agent, "Accept": "application/json, application/atom+xml, text/xml"})  # fmt: skip
    return _CLASSES[name](api, settings, _base_url(settings, name))


async def probe(providers: Sequence[SearchProvider]) -> list[tuple[str, bool, str]]:
    """Doctor's check of each provider: one small query; ``(what, ok, detail)`` each."""

    async def one(provider: SearchProvider) -> tuple[str, bool, str]:
        what = f"search {provider.name}"
        try:
            hits = await provider.search(PROBE_QUERY, max_results=1)
        except ProviderError as exc:
            return (what, False, exc.reason)
        except Exception as exc:  # a provider bug is a failed check, not a doctor traceback
            return (what, False, f"{type(exc).__name__}: {exc}"[:200])
        return (what, True, f"answers ({len(hits)} result{'s' if len(hits) != 1 else ''} for {PROBE_QUERY!r})")

    results: list[Any] = await asyncio.gather(*(one(p) for p in providers))
    return list(results)
