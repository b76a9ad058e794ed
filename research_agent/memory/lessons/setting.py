"""Where a run searches, and so which lessons can mean anything to it.

A lesson whose target cannot move in the run's setting is not offered: distinct sites over a
corpus that is one site (a folder with no sub-folders), or a site lesson about another corpus,
or about a web site in a run that searches no web. A site name reaches a prompt only when it
names a site of the run's own sources: before the search, an existing first-level folder of
the run's own corpus (:meth:`RunSetting.names`); at relevance, a site among the sources being
judged (:meth:`~research_agent.memory.lessons.types.LessonSelection.for_sites`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..store.names import corpus_id, local_site, site_corpus, valid_hostname
from ..store.schema import key_kind
from .build.evidence import Evidence

__all__ = ["RunSetting", "corpus_sites"]

_SITE_KINDS = ("site:kept", "site:dropped")


def corpus_sites(root: str | os.PathLike[str]) -> frozenset[str]:
    """The sites of the corpus at ``root``: one per first-level folder, and the corpus's own name
    when files lie at its top (hidden entries are not indexed and do not count)."""
    path = Path(root).resolve()
    cid = corpus_id(path)
    sites: set[str] = set()
    try:
        with os.scandir(path) as entries:
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                folder = entry.is_dir(follow_symlinks=False)
                sites.add(local_site(cid, entry.name if folder else path.name))
    except OSError:
        return frozenset()
    return frozenset(sites)


@dataclass(frozen=True)
class RunSetting:
    """A run's setting: whether it searches the web, and each corpus it searches (its id -> its sites)."""

    web: bool
    corpora: Mapping[str, frozenset[str]] = field(default_factory=dict)

    @classmethod
    def of(cls, corpus_dirs: Iterable[str | os.PathLike[str]], *, web: bool) -> RunSetting:
        roots = [Path(root).resolve() for root in corpus_dirs]
        return cls(web, {corpus_id(root): corpus_sites(root) for root in roots})

    @property
    def one_site(self) -> bool:
        """Whether the run can draw from one site at most (no web, corpora of one site in all)."""
        return not self.web and sum(len(sites) for sites in self.corpora.values()) <= 1

    def applies(self, site: str) -> bool:
        """Whether a lesson about ``site`` fits: a web host in a run that searches the web, or a
        site of one of the run's corpora."""
        if valid_hostname(site):
            return self.web
        corpus = site_corpus(site)
        return corpus is not None and site in self.corpora.get(corpus, frozenset())

    def names(self, site: str) -> bool:
        """Whether a planning prompt may name ``site`` (before any search): an existing
        first-level folder of one of the run's corpora."""
        return site_corpus(site) is not None and self.applies(site)

    def fit(self, evidence: Sequence[Evidence]) -> tuple[list[Evidence], list[tuple[str, str]]]:
        """The evidence that fits the setting, and ``(key, reason)`` for the rest."""
        kept: list[Evidence] = []
        left: list[tuple[str, str]] = []
        for item in evidence:
            kind = key_kind(item.key)
            if kind in _SITE_KINDS and not self.applies(str(item.slot("site"))):
                left.append((item.key, "its site is not one this run can draw from (another corpus, or the web)"))
            elif item.key == "breadth:sites" and self.one_site:
                left.append((item.key, "distinct sites cannot move: this run draws from one site"))
            elif item.key == "breadth:sites" and item.slot("top") and not self.names(str(item.slot("top"))):
                kept.append(replace(item, slots=_unnamed(item.slots)))
            else:
                kept.append(item)
        return kept, left


def _unnamed(slots: tuple[tuple[str, int | str], ...]) -> tuple[tuple[str, int | str], ...]:
    """The slots of ``breadth:sites`` without its dominant site (the text then names none)."""
    values = dict(slots)
    values.update(top="", top_reports=0)
    return tuple(sorted(values.items()))
