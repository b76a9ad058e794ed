"""Build the run's search providers from settings, and search with all of them.

``build_providers`` checks every name and its configuration before anything is
built, so a typo or a missing key is a one-line :class:`ConfigError` before any work
starts. ``search_all`` asks every provider every sub-query concurrently, keeps going
when some fail, makes one work of the scholarly hits that share an identifier
(:func:`.scholarly.identity.unify_works`), and merges the hits per sub-query by page identity.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import Settings
from ..errors import ConfigError, SearchError
from ..fetch.urls import is_web_url, normalize_url
from ..sources import SearchHit
from ..text.controls import one_line
from .base import ProviderError, ProviderFailure, SearchProvider, SearchResults
from .scholarly import ACADEMIC, ACADEMIC_PROVIDERS, SCHOLARLY_PROVIDERS
from .scholarly.identity import unify_works

if TYPE_CHECKING:  # the web providers (and httpx) are imported only by a run that searches the web
    import httpx

    from .web import DdgsBackend

__all__ = [
    "KNOWN_PROVIDERS",
    "provider_names",
    "check_providers",
    "build_providers",
    "search_all",
    "merge_hits",
    "hit_key",
    "ProviderError",
]

log = logging.getLogger(__name__)

KNOWN_PROVIDERS = ("ddgs", "searxng", "tavily", "local", *SCHOLARLY_PROVIDERS)
WEB_PROVIDERS = frozenset({"ddgs", "searxng", "tavily", *SCHOLARLY_PROVIDERS})


def provider_names(settings: Settings) -> tuple[str, ...]:
    """The provider names a run uses, in order, without duplicates.

    ``settings.providers`` applies the defaults (``local`` for a corpus-only run, else
    ``ddgs``). When a corpus is given together with explicit web providers
    (``--search ddgs,searxng --corpus ~/notes``) the corpus is searched too. ``academic``
    stands for openalex, arxiv, pubmed and semanticscholar.
    """
    given = (n.strip().lower() for n in settings.providers if n.strip())
    names = list(dict.fromkeys(m for n in given for m in (ACADEMIC_PROVIDERS if n == ACADEMIC else (n,))))
    if settings.corpus_dirs and "local" not in names:
        names.append("local")
    return tuple(names)


def check_providers(settings: Settings, names: Sequence[str]) -> None:
    """ConfigError (one line) when a run of ``settings`` could not use the providers ``names``."""
    unknown = [n for n in names if n not in KNOWN_PROVIDERS]
    if unknown:
        known = ", ".join((*KNOWN_PROVIDERS, ACADEMIC))
        raise ConfigError(f"unknown search provider '{unknown[0]}': choose from {known}")
    if "searxng" in names and not is_web_url(settings.searxng_url):
        shown = settings.searxng_url or "(not set)"
        raise ConfigError(
            f"searxng needs an http(s) URL (--searxng-url or RESEARCH_AGENT_SEARXNG_URL), got {shown!r}"
        )
    if "tavily" in names and not settings.tavily_api_key.strip():
        raise ConfigError("tavily needs TAVILY_API_KEY")
    if "local" in names and not settings.corpus_dirs:
        raise ConfigError("the local provider needs a corpus: pass --corpus DIR")
    scholarly = [n for n in names if n in SCHOLARLY_PROVIDERS]
    if scholarly:
        from .scholarly.build import check_settings

        check_settings(settings, scholarly)


def build_providers(
    settings: Settings,
    *,
    http_client: httpx.AsyncClient | None,
    local_provider: SearchProvider | None = None,
    ddgs_backend: DdgsBackend | None = None,
    tavily_base_url: str | None = None,
) -> list[SearchProvider]:
    """The providers for this run, in the order named, validated before any is built.

    Raises ConfigError for an unknown name, a SearXNG (or scholarly API) URL that is not
    an http(s) URL, tavily without a key, or ``local`` without corpus folders.
    ``http_client`` is used by every web provider but ddgs (it may be None for a run without them). The local
    corpus provider is built by the caller and passed as ``local_provider``; it is
    required whenever ``local`` is among the names (a ValueError otherwise: that is a
    programming error, not a user's). ``ddgs_backend`` and ``tavily_base_url`` are
    seams for tests and for Tavily-compatible gateways (default :data:`~.web.TAVILY_BASE_URL`).
    """
    names = provider_names(settings)
    check_providers(settings, names)
    if http_client is None and WEB_PROVIDERS.intersection(names) - {"ddgs"}:
        raise ValueError("build_providers: the web search APIs need an http_client")
    if "local" in names and local_provider is None:
        raise ValueError("build_providers: 'local' is requested but no local_provider was passed")
    timeout = max(1.0, float(settings.fetch_timeout))
    providers: list[SearchProvider] = []
    for name in names:
        if name == "local":
            assert local_provider is not None
            providers.append(local_provider)
        else:
            providers.append(_web_provider(name, settings, http_client, ddgs_backend, tavily_base_url, timeout))
    return providers


def _web_provider(
    name: str,
    settings: Settings,
    http_client: httpx.AsyncClient | None,
    ddgs_backend: DdgsBackend | None,
    tavily_base_url: str | None,
    timeout: float,
) -> SearchProvider:
    # Imported here: a corpus-only run never loads the web providers (nor httpx).
    from .web import TAVILY_BASE_URL, DdgsProvider, SearxngProvider, TavilyProvider

    if name == "ddgs":
        return DdgsProvider(ddgs_backend, timeout=timeout)
    assert http_client is not None
    if name in SCHOLARLY_PROVIDERS:
        from .scholarly.build import scholarly_provider

        return scholarly_provider(name, settings, http_client)
    cap = settings.search_reply_max_bytes
    if name == "searxng":
        return SearxngProvider(settings.searxng_url, http_client, timeout=timeout, max_bytes=cap)
    key = settings.tavily_api_key.strip()
    return TavilyProvider(key, http_client, tavily_base_url or TAVILY_BASE_URL, timeout=timeout, max_bytes=cap)


def hit_key(hit: SearchHit) -> str | None:
    """The identity of a hit: normalised URL, or resolved path for a local file.

    Hits from the ``local`` provider (or ``file://`` locations) are files; every other
    hit must carry an absolute http(s) URL. None when the location is unusable.
    """
    location = (hit.location or "").strip()
    if not location:
        return None
    if hit.provider == "local" or location.startswith("file://"):
        path = location[len("file://") :] if location.startswith("file://") else location
        try:
            return str(Path(path).expanduser().resolve())
        except (OSError, RuntimeError, ValueError):
            return None
    if not is_web_url(location):
        return None
    return normalize_url(location)


def merge_hits(lists: Sequence[Sequence[SearchHit]]) -> tuple[SearchHit, ...]:
    """Merge ranked hit lists from several providers into one, best rank first.

    Hits are interleaved by their rank within their own list (ties go to the earlier
    list); a page found twice is kept once, at its best rank, and keeps the other
    copy's snippet or date when its own is missing. Hits without a usable location
    are dropped.
    """
    order: list[tuple[int, int, SearchHit]] = []
    for li, hits in enumerate(lists):
        for rank, hit in enumerate(hits):
            order.append((rank, li, hit))
    order.sort(key=lambda t: (t[0], t[1]))
    merged: dict[str, SearchHit] = {}
    dropped = 0
    for _, _, hit in order:
        key = hit_key(hit)
        if key is None:
            dropped += 1
            continue
        kept = merged.get(key)
        if kept is None:
            merged[key] = hit
            continue
        changes: dict[str, Any] = {}
        if not kept.snippet and hit.snippet:
            changes["snippet"] = hit.snippet
        if not kept.published and hit.published:
            changes["published"] = hit.published
        if changes:
            merged[key] = SearchHit(**{**kept.__dict__, **changes})
    if dropped:
        log.info("dropped %d search hit(s) without a usable location", dropped)
    return tuple(merged.values())


FailureCallback = Callable[[ProviderFailure], Any]


def _short(reason: str, limit: int = 160) -> str:
    reason = one_line(reason)
    return reason if len(reason) <= limit else reason[: limit - 1] + "…"


async def _one(provider: SearchProvider, query: str, max_results: int) -> list[SearchHit] | ProviderFailure:
    name = getattr(provider, "name", type(provider).__name__)
    try:
        hits = await provider.search(query, max_results=max_results)
    except ProviderError as exc:
        return ProviderFailure(provider=name, query=query, reason=exc.reason)
    except SearchError as exc:
        return ProviderFailure(provider=name, query=query, reason=str(exc) or type(exc).__name__)
    except Exception as exc:  # a provider bug must not sink the run; it is recorded and logged
        log.warning("search provider %s crashed on %r", name, query, exc_info=True)
        return ProviderFailure(provider=name, query=query, reason=f"{type(exc).__name__}: {exc}"[:200])
    return list(hits or [])


async def search_all(
    providers: Sequence[SearchProvider],
    queries: Sequence[str],
    *,
    max_results: int,
    on_failure: FailureCallback | None = None,
) -> SearchResults:
    """Ask every provider every query concurrently and merge the hits per query.

    A provider failing on a query becomes a ProviderFailure in the result (and is
    passed to ``on_failure``, sync or async, as it happens); the others' hits are used.
    When every (provider, query) pair failed, raises SearchError naming the reasons.
    """
    queries = list(dict.fromkeys(q for q in queries if q and q.strip()))
    if not providers or not queries:
        return SearchResults(hits={q: () for q in queries})

    async def run(provider: SearchProvider, query: str) -> list[SearchHit] | ProviderFailure:
        outcome = await _one(provider, query, max_results)
        if isinstance(outcome, ProviderFailure) and on_failure is not None:
            try:
                reported = on_failure(outcome)
                if inspect.isawaitable(reported):
                    await reported
            except Exception:  # a progress display must never stop the search
                log.warning("on_failure callback raised", exc_info=True)
        return outcome

    pairs = [(p, q) for q in queries for p in providers]
    outcomes = await asyncio.gather(*(run(p, q) for p, q in pairs))
    failures = tuple(o for o in outcomes if isinstance(o, ProviderFailure))
    if len(failures) == len(outcomes):
        first: dict[str, ProviderFailure] = {}
        for failure in failures:
            first.setdefault(failure.provider, failure)
        reasons = [
            f"{name} ({sum(1 for f in failures if f.provider == name)} of {len(queries)} queries): "
            + _short(failure.reason)
            for name, failure in first.items()
        ]
        raise SearchError("every search provider failed: " + "; ".join(reasons))
    answered = [(query, o) for (_, query), o in zip(pairs, outcomes, strict=True) if not isinstance(o, ProviderFailure)]
    per_query: dict[str, list[list[SearchHit]]] = {q: [] for q in queries}
    for (query, _), hits in zip(answered, unify_works([hits for _, hits in answered]), strict=True):
        per_query[query].append(hits)
    merged = {q: merge_hits(lists) for q, lists in per_query.items()}
    return SearchResults(hits=merged, failures=failures)
