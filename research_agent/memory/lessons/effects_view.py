"""Each lesson's measured effect as a person (``memory effects``) or a caller (MCP) sees it.

The numbers come from :func:`~research_agent.memory.effects.lesson_effects.effects_in`, with
``confounded_with``, and ground truth beside them where evals graded some of their runs
(:mod:`..effects.truth.recall`: the effect on fact recall, how far the critic tracks it). The
text shown beside a key is the text its lesson has when it is built now from its domain's
critiques: built lessons are always written from their key and the
facts, never read back from a critique, so text planted in a critique file is never shown.
A key that is not built now shows no text.

A person's lesson (``user:``, ``approved:``) is measured on its entry's target and shown with
its entry's text, both from the trusted ``lessons.yaml`` (:mod:`.person`); while the file is
not trusted, its lessons are not shown.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from pathlib import Path

from ..effects.lesson_effects import LessonEffect, effects_in
from ..effects.truth.recall import with_ground_truth
from ..store.critique_types import Critique
from ..store.index.summary import CritiqueIndex, IndexTrust, open_index
from .build.text import written_from_template
from .person import PersonLessons
from .select import SelectionRules, build_lessons, check_ttl, evidence_pool
from .types import MAX_LESSONS

__all__ = ["lesson_effects", "current_texts", "shown_lesson_texts"]


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
    meta_dir: Path,
    *,
    now: datetime,
    domain: str | None = None,
    ttl_days: float = 30,
    state_dir: Path | None = None,
) -> tuple[LessonEffect, ...]:
    """The effect of every lesson key in ``meta_dir`` (of ``domain``, or of every domain) at
    ``now``, each with its current text and ``confounded_with``. ``state_dir``: the user state
    folder, where the trust of the person's ``lessons.yaml`` and the index's key are kept (None:
    their lessons are not shown, and the index is built in memory)."""
    check_ttl(ttl_days)
    person = PersonLessons.read(Path(meta_dir), state_dir) if state_dir is not None else PersonLessons()
    trust = IndexTrust(state_dir) if state_dir is not None else None
    with open_index(Path(meta_dir), trust=trust) as index:
        ledger, stages_and_targets = index.ledger(), person.stages_and_targets()
        effects = effects_in(ledger, now=now, domain=domain, detail=True, person=stages_and_targets)
        effects = with_ground_truth(ledger, effects, now=now, domain=domain, person=stages_and_targets)
        texts = current_texts(index, sorted({e.domain for e in effects}), now=now, ttl_days=ttl_days)
    own = {entry.key: entry.text for entry in person.entries}
    return tuple(replace(e, text=own.get(e.key, texts.get((e.domain, e.key), ""))) for e in effects)


def shown_lesson_texts(
    meta_dir: Path, critique: Critique, *, now: datetime, ttl_days: float = 30, state_dir: Path | None = None
) -> Critique:
    """``critique`` as it may be shown (``memory show``, MCP ``memory_show``): each applied
    lesson keeps its stored text only when that equals the lesson's text now (a built lesson
    written from its key and the facts, a person's from the trusted ``lessons.yaml``), or when a
    built lesson's text is what its template writes with numbers and valid site names only (the
    text the run was given, its counts since moved on: :func:`.build.text.written_from_template`); any other
    stored text, planted or stale, is blanked. The key and stage stay."""
    person = PersonLessons.read(Path(meta_dir), state_dir) if state_dir is not None else PersonLessons()
    own = {entry.key: entry.text for entry in person.entries}
    trust = IndexTrust(state_dir) if state_dir is not None else None
    with open_index(Path(meta_dir), trust=trust) as index:
        built = current_texts(index, [critique.query_domain], now=now, ttl_days=ttl_days)
    lessons = tuple(
        lesson if lesson.key and (lesson.text == own.get(lesson.key, built.get((critique.query_domain, lesson.key)))
                                  or (lesson.key not in own and written_from_template(lesson.key, lesson.text)))
        else replace(lesson, text="")
        for lesson in critique.lessons_applied
    )  # fmt: skip
    return replace(critique, lessons_applied=lessons)
