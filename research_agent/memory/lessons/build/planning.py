"""Planning lessons for decompose, built from the facts and applicable scores of eligible critiques.

Each lesson is counted over its own window of the pool (:mod:`.pool`): the newest critiques
whose run was not given it, with its threshold (hysteresis included).

* ``coverage:unanswered``: sub-queries that found nothing kept, and how often (a sub-query the
  user's cap left unread is not unanswered);
* ``coverage:low-score``: coverage scored 2, or the critic tagged parts as uncovered;
* ``counterarguments:missing``: the critic tagged missing counterarguments;
* ``recency:old-sources``: the kept sources ran old (median over a year) where the critic
  judged them outdated, i.e. for a time-sensitive question;
* ``breadth:few-sources`` / ``breadth:sites``: few kept sources, or one site dominating
  (named when the same web site dominated at least two reports), counted only over runs the
  user did not cap (``facts.sources.capped_by_user``): the cap suppresses breadth lessons
  and nothing else; ``breadth:sites`` only over runs that searched the web (over the user's
  own documents the sites are the user's choice);
* ``geography:regions``: only from a geographic balance score of 2 or less where it applies;
  a ``geographic_bias`` tag alone never makes one (and one beside a score of 3 or more is
  dropped when the file loads);
* ``primary:evidence`` / ``primary:practical``: weak claim support or actionability.
"""

from __future__ import annotations

import functools
import statistics
from collections import Counter
from collections.abc import Callable, Sequence

from ....config import MODES
from ...store.critique_types import Critique
from ...store.names import valid_hostname
from .evidence import Evidence, Need, shown
from .judging import usable_site
from .pool import EvidencePool

__all__ = ["planning_evidence", "searched_web", "OLD_DAYS", "NARROW_SHARE"]

OLD_DAYS = 365  # median source age beyond which sources "ran old"
NARROW_SHARE = 0.7  # one site holding this share of the kept sources
LOW = 2  # a dimension score at or below this shows a weakness


def _low(critique: Critique, dimension: str) -> bool:
    value = critique.scores.get(dimension)
    return value is not None and value <= LOW


Builder = Callable[[Sequence[Critique], "Need | None"], list[Evidence]]


def _unanswered(critiques: Sequence[Critique], threshold: Need | None) -> list[Evidence]:
    measured = [c for c in critiques if c.facts is not None]
    hits = [c for c in measured if c.facts is not None and c.facts.open_sub_queries > 0]
    unanswered = sum(c.facts.open_sub_queries for c in hits if c.facts is not None)
    asked = sum(c.facts.asked_sub_queries for c in hits if c.facts is not None)
    return shown(
        "coverage:unanswered", hits, len(measured), threshold, unanswered=unanswered, asked=max(asked, unanswered)
    )


def _tagged_or_low(key: str, tag: str, dimension: str) -> Builder:
    def build(critiques: Sequence[Critique], threshold: Need | None) -> list[Evidence]:
        hits = [c for c in critiques if tag in c.tags or _low(c, dimension)]
        return shown(key, hits, len(critiques), threshold)

    return build


def _counterarguments(critiques: Sequence[Critique], threshold: Need | None) -> list[Evidence]:
    hits = [c for c in critiques if "missing_counterarguments" in c.tags]
    return shown("counterarguments:missing", hits, len(critiques), threshold)


def _recency(critiques: Sequence[Critique], threshold: Need | None) -> list[Evidence]:
    hits = [
        c
        for c in critiques
        if "outdated_sources" in c.tags
        and c.facts is not None
        and c.facts.recency.median_age_days is not None
        and c.facts.recency.median_age_days > OLD_DAYS
    ]
    ages = [age for c in hits if c.facts is not None and (age := c.facts.recency.median_age_days) is not None]
    years = [c.facts.recency.oldest_year for c in hits if c.facts is not None and c.facts.recency.oldest_year]
    if not hits:
        return []
    return shown(
        "recency:old-sources",
        hits,
        len(critiques),
        threshold,
        age=int(statistics.median(ages)),
        year=min(years) if years else 0,
    )


def _uncapped(critiques: Sequence[Critique]) -> list[Critique]:
    """Critiques whose source counts the user's cap did not shape (facts needed to know)."""
    return [c for c in critiques if c.facts is not None and not c.facts.sources.capped_by_user]


def _few_sources(critiques: Sequence[Critique], threshold: Need | None) -> list[Evidence]:
    uncapped = _uncapped(critiques)

    def few(c: Critique) -> bool:
        mode = MODES.get(c.mode)
        enough = mode.full_min_sources if mode is not None else 4
        return c.facts is not None and (c.facts.sources.kept < enough or "few_sources" in c.tags)

    hits = [c for c in uncapped if few(c)]
    if not hits:
        return []
    kept = int(statistics.median(c.facts.sources.kept for c in hits if c.facts is not None))
    found = int(statistics.median(c.facts.sources.found for c in hits if c.facts is not None))
    return shown("breadth:few-sources", hits, len(uncapped), threshold, kept=kept, found=max(found, kept))


def _dominant(hits: Sequence[Critique]) -> tuple[str, int]:
    """The site that was top in most of ``hits`` (at least 2), and in how many; else ("", 0)."""
    tops = Counter(
        c.facts.sites.top
        for c in hits
        if c.facts is not None and c.facts.sites.top and c.facts.sites.top_share >= NARROW_SHARE
    )
    for site, count in tops.most_common():
        if count >= 2 and usable_site(site):
            return site, count
    return "", 0


def searched_web(critique: Critique) -> bool:
    """Whether the critique's run drew from the web: a web host among its sites."""
    facts = critique.facts
    if facts is None:
        return False
    return any(valid_hostname(p.site) for p in facts.sites.per_site) or valid_hostname(facts.sites.top or "")


def _narrow(critiques: Sequence[Critique], threshold: Need | None) -> list[Evidence]:
    uncapped = [c for c in _uncapped(critiques) if searched_web(c)]

    def narrow(c: Critique) -> bool:
        assert c.facts is not None
        dominated = c.facts.sources.kept >= 2 and c.facts.sites.top_share >= NARROW_SHARE
        return dominated or "single_site" in c.tags or _low(c, "source_diversity")

    hits = [c for c in uncapped if narrow(c)]
    top, times = _dominant(hits)
    return shown("breadth:sites", hits, len(uncapped), threshold, top=top, top_reports=times)


def _geography(critiques: Sequence[Critique], threshold: Need | None) -> list[Evidence]:
    applies = [c for c in critiques if c.scores.applies("geographic_balance")]
    hits = [c for c in applies if _low(c, "geographic_balance")]
    return shown("geography:regions", hits, len(applies), threshold)


_BUILDERS: dict[str, Builder] = {
    "coverage:unanswered": _unanswered,
    "coverage:low-score": _tagged_or_low("coverage:low-score", "low_coverage", "coverage"),
    "counterarguments:missing": _counterarguments,
    "recency:old-sources": _recency,
    "breadth:few-sources": _few_sources,
    "breadth:sites": _narrow,
    "geography:regions": _geography,
    "primary:evidence": _tagged_or_low("primary:evidence", "weak_primary_sources", "claim_support"),
    "primary:practical": _tagged_or_low("primary:practical", "vague_recommendations", "actionability"),
}


def planning_evidence(pool: EvidencePool) -> list[Evidence]:
    """Evidence for every planning lesson the ``pool`` shows, each key over its own window."""
    out: list[Evidence] = []
    for key, build in _BUILDERS.items():
        critiques = pool.for_key(key)
        out += build(critiques, functools.partial(pool.need, key))
    return out

