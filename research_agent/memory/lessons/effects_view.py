"""Each lesson's measured effect as a person (``memory effects``) or a caller (MCP) sees it.

The numbers come from :func:`~research_agent.memory.effects.lesson_effects.effects_in`, with
``confounded_with``. The text shown beside a key is the text its lesson has when it is built
now from its domain's critiques: built lessons are always written from their key and the
facts, never read back from a critique, so text planted in a critique file is never shown.
A key that is not built now shows no text.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from pathlib import Path

from ..effects.lesson_effects import LessonEffect, effects_in
from ..store.index import CritiqueIndex, open_index
from .select import SelectionRules, build_lessons, check_ttl, evidence_pool
from .types import MAX_LESSONS

__all__ = ["lesson_effects", "current_texts"]


def current_texts(
    index: CritiqueIndex, domains: list[str], *, now: datetime, ttl_days: float = 30, limit: int = 10
) -> dict[tuple[str, str], str]:
    """``(domain, key) -> text`` of every lesson built now in ``domains`` (any run setting)."""
    rules = SelectionRules(now, ttl_days, limit, 0, 0.0, False, MAX_LESSONS)
    texts: dict[tuple[str, str], str] = {}
    for domain in domains:
        pool, _ = evidence_pool(index, domain, rules)
        lessons, _ = build_lessons(pool)
        texts.update(((domain, lesson.key), lesson.text) for lesson in lessons)
    return texts


def lesson_effects(
    meta_dir: Path, *, now: datetime, domain: str | None = None, ttl_days: float = 30
) -> tuple[LessonEffect, ...]:
    """The effect of every lesson key in ``meta_dir`` (of ``domain``, or of every domain) at
    ``now``, each with its current text and ``confounded_with``."""
    check_ttl(ttl_days)
    with open_index(Path(meta_dir)) as index:
        effects = effects_in(index, now=now, domain=domain, detail=True)
        texts = current_texts(index, sorted({e.domain for e in effects}), now=now, ttl_days=ttl_days)
    return tuple(replace(e, text=texts.get((e.domain, e.key), "")) for e in effects)
