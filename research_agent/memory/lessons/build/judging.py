"""Judging lessons for relevance, built from the facts of eligible critiques.

* Site track records (``site:kept:<site>``, ``site:dropped:<site>``): a site's kept, dropped
  and cited pages summed over *every* critique in the lesson's window that saw the site
  (none is skipped for being mixed). A site seen in at least 2 reports with at least 3 pages
  whose kept share is at least 0.7 gets a ``site:kept`` lesson; one whose share is at most
  0.2 gets a ``site:dropped`` lesson; anything in between gets none. The numbers in the text
  are those totals. Only web sites (host names) get a track record: over the user's own
  documents (a local site, ``<corpus id>/<folder>``) the user chose every file.
* Source kinds that went with weakly supported citations: snippet-only pages and press
  releases, where the critic tagged them and the facts counted weakly supported citations.

Each key is counted over its own window of the pool (:mod:`.pool`). Only names that pass
:func:`~research_agent.memory.store.names.valid_hostname` and fit a lesson key reach a lesson, and
a site name reaches a prompt only when it names a site of the run's own sources
(:mod:`..setting`).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

from ...store.critique_types import Critique
from ...store.names import valid_hostname
from ...store.schema import LESSON_KEY
from .evidence import Evidence, Need, shown, stamp_of_id
from .pool import EvidencePool

__all__ = ["judging_evidence", "usable_site", "MAX_SITE_CHARS", "MIN_REPORTS", "MIN_PAGES", "KEPT_SHARE", "DROPPED_SHARE"]

MAX_SITE_CHARS = 60
MIN_REPORTS = 2  # reports a site's track record must span
MIN_PAGES = 3  # pages (kept and dropped) across them
KEPT_SHARE = 0.7  # a kept share at least this gives a site:kept lesson
DROPPED_SHARE = 0.2  # a kept share at most this gives a site:dropped lesson


@dataclass(frozen=True)
class _Track:
    """One site's pages summed over the critiques that saw it."""

    kept: int
    dropped: int
    cited: int
    ids: tuple[str, ...]

    @property
    def pages(self) -> int:
        return self.kept + self.dropped


def usable_site(site: str) -> bool:
    """A site name that may appear in a lesson and its key: a web host (never a folder of the user's
    own documents, nor a scholarly work's ``scholarly/<identifier>``)."""
    return (
        len(site) <= MAX_SITE_CHARS and valid_hostname(site)
        and bool(LESSON_KEY.match(f"site:kept:{site}"))
    )  # fmt: skip


def _track(site: str, critiques: Sequence[Critique]) -> _Track:
    """``site``'s totals over every one of ``critiques`` that saw it."""
    kept = dropped = cited = 0
    ids = []
    for critique in critiques:
        counts = next((p for p in critique.facts.sites.per_site if p.site == site), None) if critique.facts else None
        if counts is not None:
            kept, dropped, cited = kept + counts.kept, dropped + counts.dropped, cited + counts.cited
            ids.append(critique.id)
    return _Track(kept, dropped, cited, tuple(sorted(ids, key=stamp_of_id, reverse=True)))


def _site_evidence(kind: str, site: str, track: _Track, n: int) -> Evidence:
    slots: dict[str, int | str] = {
        "site": site,
        "kept": track.kept,
        "dropped": track.dropped,
        "pages": track.pages,
        "cited": track.cited,
        "reports": len(track.ids),
    }
    pages = track.kept if kind == "site:kept" else track.dropped
    weight = len(track.ids) / max(n, 1) + pages / 1000  # more reports first, then more pages
    return Evidence(f"{kind}:{site}", track.ids, tuple(sorted(slots.items())), weight)


def _verdict(track: _Track) -> str | None:
    """``site:kept``, ``site:dropped`` or None for a site's totals."""
    if len(track.ids) < MIN_REPORTS or track.pages < MIN_PAGES:
        return None
    share = track.kept / track.pages
    return "site:kept" if share >= KEPT_SHARE else "site:dropped" if share <= DROPPED_SHARE else None


def _sites(pool: EvidencePool) -> list[Evidence]:
    seen = sorted(
        {p.site for c in pool.critiques if c.facts is not None for p in c.facts.sites.per_site if usable_site(p.site)}
    )
    out = []
    for site in seen:
        for kind in ("site:kept", "site:dropped"):
            window = pool.for_key(f"{kind}:{site}")
            track = _track(site, window)
            if _verdict(track) == kind:
                out.append(_site_evidence(kind, site, track, len(window)))
    return out


def _source_kind(key: str, tag: str, critiques: Sequence[Critique], threshold: Need) -> list[Evidence]:
    measured = [c for c in critiques if c.facts is not None]
    hits = [
        c
        for c in measured
        if tag in c.tags and c.facts is not None and c.facts.citations.weakly_supported > 0
    ]
    weak = sum(c.facts.citations.weakly_supported for c in hits if c.facts is not None)
    sentences = sum(c.facts.citations.sentences for c in hits if c.facts is not None)
    return shown(key, hits, len(measured), threshold, weak=weak, sentences=max(sentences, weak))


_SOURCE_KINDS = {"source-kind:snippet-only": "snippet_only_sources", "source-kind:press-release": "press_release_heavy"}


def judging_evidence(pool: EvidencePool) -> list[Evidence]:
    """Evidence for every judging lesson the ``pool`` shows, each key over its own window."""
    out = _sites(pool)
    for key, tag in _SOURCE_KINDS.items():
        out += _source_kind(key, tag, pool.for_key(key), functools.partial(pool.need, key))
    return out
