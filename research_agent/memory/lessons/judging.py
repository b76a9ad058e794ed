"""Judging lessons for relevance, built from the facts of eligible critiques.

* Site track records (``site:kept:<site>``, ``site:dropped:<site>``). In each critique a
  site either earned its place (at least one page kept, no more dropped than kept) or was
  turned away (pages dropped, none kept). A site that earned its place in at least 2
  reports with at least 3 pages kept gets a ``site:kept`` lesson; one turned away in at
  least 2 reports with at least 3 pages dropped gets a ``site:dropped`` lesson. Both can
  appear for one site: :mod:`.settle` keeps the one with the newer evidence.
* Source kinds that went with weakly supported citations: snippet-only pages and press
  releases, where the critic tagged them and the facts counted weakly supported citations.

Only names that pass :func:`~research_agent.memory.store.names.valid_site` (strict host names,
corpus folders) and fit a lesson key ever reach a lesson.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..store.critique_types import Critique
from ..store.names import valid_site
from ..store.schema import LESSON_KEY
from .evidence import Evidence, shown, stamp_of_id

__all__ = ["judging_evidence", "usable_site", "MAX_SITE_CHARS", "MIN_REPORTS", "MIN_PAGES"]

MAX_SITE_CHARS = 60
MIN_REPORTS = 2  # reports a site's track record must span
MIN_PAGES = 3  # pages kept (or dropped) across them


@dataclass
class _Track:
    """One site's pages in the reports where it went one way: kept or dropped."""

    kept: int = 0
    dropped: int = 0
    cited: int = 0
    ids: list[str] = field(default_factory=list)


def usable_site(site: str) -> bool:
    """A site name that may appear in a lesson and its key."""
    return len(site) <= MAX_SITE_CHARS and valid_site(site) and bool(LESSON_KEY.match(f"site:kept:{site}"))


def _tracks(critiques: Sequence[Critique]) -> tuple[dict[str, _Track], dict[str, _Track]]:
    """Per site: the reports where it earned its place, and those where it was turned away."""
    earned: dict[str, _Track] = {}
    turned: dict[str, _Track] = {}
    for critique in critiques:
        if critique.facts is None:
            continue
        for counts in critique.facts.sites.per_site:
            if not usable_site(counts.site):
                continue
            if counts.kept >= 1 and counts.kept >= counts.dropped:
                track = earned.setdefault(counts.site, _Track())
            elif counts.kept == 0 and counts.dropped >= 1:
                track = turned.setdefault(counts.site, _Track())
            else:
                continue  # mixed: no clear verdict
            track.kept += counts.kept
            track.dropped += counts.dropped
            track.cited += counts.cited
            track.ids.append(critique.id)
    return earned, turned


def _site_evidence(kind: str, site: str, track: _Track, n: int) -> Evidence:
    ids = tuple(sorted(dict.fromkeys(track.ids), key=stamp_of_id, reverse=True))
    slots = {
        "site": site,
        "kept": track.kept,
        "dropped": track.dropped,
        "pages": track.kept + track.dropped,
        "cited": track.cited,
        "reports": len(ids),
    }
    pages = track.kept if kind == "site:kept" else track.dropped
    weight = len(ids) / max(n, 1) + pages / 1000  # more reports first, then more pages
    return Evidence(f"{kind}:{site}", ids, tuple(sorted(slots.items())), weight)


def _sites(critiques: Sequence[Critique]) -> list[Evidence]:
    earned, turned = _tracks(critiques)
    out = []
    for site, track in sorted(earned.items()):
        if len(set(track.ids)) >= MIN_REPORTS and track.kept >= MIN_PAGES:
            out.append(_site_evidence("site:kept", site, track, len(critiques)))
    for site, track in sorted(turned.items()):
        if len(set(track.ids)) >= MIN_REPORTS and track.dropped >= MIN_PAGES:
            out.append(_site_evidence("site:dropped", site, track, len(critiques)))
    return out


def _source_kind(key: str, tag: str, critiques: Sequence[Critique]) -> list[Evidence]:
    measured = [c for c in critiques if c.facts is not None]
    hits = [
        c
        for c in measured
        if tag in c.tags and c.facts is not None and c.facts.citations.weakly_supported > 0
    ]
    weak = sum(c.facts.citations.weakly_supported for c in hits if c.facts is not None)
    sentences = sum(c.facts.citations.sentences for c in hits if c.facts is not None)
    return shown(key, hits, len(measured), weak=weak, sentences=max(sentences, weak))


def judging_evidence(critiques: Sequence[Critique]) -> list[Evidence]:
    """Evidence for every judging lesson the eligible ``critiques`` (newest first) show."""
    return [
        *_sites(critiques),
        *_source_kind("source-kind:snippet-only", "snippet_only_sources", critiques),
        *_source_kind("source-kind:press-release", "press_release_heavy", critiques),
    ]
