"""Where a run searches, and so which lessons can mean anything to it.

Site lessons (a site's track record, ``site:kept:<host>`` and ``site:dropped:<host>``, and the
spread of sites, ``breadth:sites``) exist only where a site is a choice: on the web. Over the
user's own documents the user chose every file, so no site lesson is built from a corpus run
(:mod:`.build`) and none is offered to a run that searches no web; a run that searches both
gets the web's. A site name reaches a prompt only at relevance, when it names a site among the
sources being judged (:meth:`~research_agent.memory.lessons.types.LessonSelection.for_sites`);
a planning prompt names none (the dominant site of ``breadth:sites`` is left out of its text).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from ..store.names import valid_hostname
from ..store.schema import key_kind
from .build.evidence import Evidence

__all__ = ["RunSetting", "SITE_KINDS", "is_site_lesson", "NOT_OVER_CORPUS"]

SITE_KINDS = ("site:kept", "site:dropped")
NOT_OVER_CORPUS = "a site lesson: over your own documents every site is your choice; only web runs get site lessons"


def is_site_lesson(key: str) -> bool:
    """Whether ``key`` is a site lesson: a site's track record, or the spread of sites."""
    return key_kind(key) in SITE_KINDS or key == "breadth:sites"


@dataclass(frozen=True)
class RunSetting:
    """A run's setting: whether it searches the web (its corpora, if any, change no lesson's fit)."""

    web: bool

    @classmethod
    def of(cls, corpus_dirs: Iterable[str | os.PathLike[str]], *, web: bool) -> RunSetting:
        """The setting of a run over ``corpus_dirs`` (and the web when ``web``)."""
        return cls(web)

    def fit(self, evidence: Sequence[Evidence]) -> tuple[list[Evidence], list[tuple[str, str]]]:
        """The evidence that fits the setting, and ``(key, reason)`` for the rest."""
        kept: list[Evidence] = []
        left: list[tuple[str, str]] = []
        for item in evidence:
            if is_site_lesson(item.key) and not self.web:
                left.append((item.key, NOT_OVER_CORPUS))
            elif key_kind(item.key) in SITE_KINDS and not valid_hostname(str(item.slot("site"))):
                left.append((item.key, "its site is not a web site"))
            elif item.key == "breadth:sites" and item.slot("top"):
                kept.append(replace(item, slots=_unnamed(item.slots)))
            else:
                kept.append(item)
        return kept, left


def _unnamed(slots: tuple[tuple[str, int | str], ...]) -> tuple[tuple[str, int | str], ...]:
    """The slots of ``breadth:sites`` without its dominant site (the text then names none)."""
    values = dict(slots)
    values.update(top="", top_reports=0)
    return tuple(sorted(values.items()))
