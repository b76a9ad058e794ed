"""A person's acts on the lessons, for every front end that lets a person act: the CLI's ``memory
add-lesson``, ``trust-lessons``, ``approve`` and ``reject``, and the web workbench's forms.

Written once, so that a lesson approved in a browser is exactly the lesson the CLI would have
written: the same checks of stage, domain, target and text, the same key, the same file, the
same decision record. :func:`carried_text` is the text as a prompt would carry it, which both
front ends show before a person confirms. No MCP tool calls the acts (an agent must not approve
its own lessons); it may only list the undecided proposals.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from ..domains import parse_domain
from ..errors import InputError
from ..memory.store.files import load_all
from ..memory.store.person.file import ANY_DOMAIN, PersonLesson, slug_of, text_problem
from ..memory.store.person.instructions import lesson_text
from ..memory.store.person.lessons import LessonsFile, add_lesson, read_lessons_file, trust_lessons_file
from ..memory.store.person.proposals import (
    PROPOSAL_PREFIX,
    Proposal,
    collect_proposals,
    decide_proposal,
    decided_texts,
)
from ..memory.store.schema import STAGES
from ..memory.store.targets import PERSON_TARGET, TARGETS
from ..text.controls import one_line

__all__ = [
    "LessonPlace", "checked_domain", "checked_stage", "checked_target", "carried_text", "undecided_proposals",
    "find_proposal", "new_lesson", "approved_lesson", "approve_proposal", "reject_proposal", "add_person_lesson",
    "trust_lessons",
]  # fmt: skip


@dataclass(frozen=True)
class LessonPlace:
    """Where a person's lesson files go: ``<reports>/meta`` and the user state folder (trust, decisions)."""

    meta_dir: Path
    state_dir: Path


def checked_domain(value: str) -> str:
    """A domain of the taxonomy, or ``any``; InputError naming the choices otherwise."""
    return ANY_DOMAIN if value.strip().lower() == ANY_DOMAIN else parse_domain(value)


def checked_stage(value: str) -> str:
    if value not in STAGES:
        raise InputError(f"unknown stage {value[:40]!r}: choose one of {', '.join(STAGES)}")
    return value


def checked_target(value: str | None) -> str:
    """The measured target a lesson names (:data:`PERSON_TARGET` when none)."""
    if not value:
        return PERSON_TARGET
    if value not in TARGETS:
        raise InputError(f"unknown target {value[:60]!r}: choose one of {', '.join(TARGETS)}")
    return value


def carried_text(text: str) -> str:
    """``text`` exactly as a prompt would carry it (:func:`~research_agent.memory.store.person.
    instructions.lesson_text`); InputError when it cannot be a lesson's text (one the prompt would
    carry changed is refused, so what a person confirms is what runs get)."""
    problem = text_problem(text)
    if problem is not None:
        raise InputError(f"the lesson text {problem}")
    return lesson_text(text)


def undecided_proposals(place: LessonPlace, *, now: datetime) -> tuple[Proposal, ...]:
    """The critic's proposals no person has decided yet, newest first."""
    loaded = load_all(place.meta_dir, now=now)
    critiques = [item.critique for item in loaded if item.critique is not None]
    return collect_proposals(critiques, decided_texts(place.state_dir))


def find_proposal(place: LessonPlace, key: str, *, now: datetime) -> Proposal:
    """The undecided proposal ``key`` (``proposal:<hash>``, or the hash alone); InputError otherwise."""
    wanted = key if key.startswith(PROPOSAL_PREFIX) else PROPOSAL_PREFIX + key
    for proposal in undecided_proposals(place, now=now):
        if proposal.key == wanted:
            return proposal
    raise InputError(f"no undecided proposal {wanted[:60]!r} (see `research-agent memory proposals`)")


def _taken(place: LessonPlace) -> list[str]:
    return _names(read_lessons_file(place.meta_dir, place.state_dir))


def _names(current: LessonsFile) -> list[str]:
    return [lesson.key.split(":", 1)[1] for lesson in current.lessons]


def new_lesson(
    place: LessonPlace, text: str, *, stage: str, domain: str, target: str | None = None, name: str | None = None
) -> PersonLesson:
    """The ``user:`` lesson a person's text makes (checked; its key free in the file as it stands)."""
    key = f"user:{name if name else slug_of(text, _taken(place))}"
    return PersonLesson(key, checked_stage(stage), checked_domain(domain), carried_text(text), checked_target(target))


def approved_lesson(
    place: LessonPlace, proposal: Proposal, *, text: str | None = None, domain: str | None = None,
    target: str | None = None,
) -> PersonLesson:  # fmt: skip
    """The ``approved:`` lesson approving ``proposal`` makes: its text (or the person's edit), the
    domain of the newest critique proposing it (or the one chosen), checked."""
    chosen = carried_text(text if text is not None else proposal.text)
    where = checked_domain(domain) if domain else proposal.domains[0]
    return PersonLesson(f"approved:{slug_of(chosen, _taken(place))}", proposal.stage, where, chosen,
                        checked_target(target))  # fmt: skip


def approve_proposal(place: LessonPlace, proposal: Proposal, lesson: PersonLesson, *, now: datetime) -> PersonLesson:
    """Write ``lesson`` (made by :func:`approved_lesson`) into ``lessons.yaml``, trusted, and record
    that ``proposal`` was approved, so that it is not proposed again: both under the lessons lock,
    with the check that it is still undecided (InputError when it was decided meanwhile). Its key
    is chosen again from the file as it stands then; the lesson written is returned."""

    def named(current: LessonsFile) -> PersonLesson:
        return replace(lesson, key=f"approved:{slug_of(lesson.text, _names(current))}")

    added = decide_proposal(place.meta_dir, place.state_dir, proposal.text, "approved", named, now=now)
    assert added is not None  # an approval always adds its lesson
    return added


def reject_proposal(place: LessonPlace, proposal: Proposal, *, now: datetime) -> None:
    """Record that ``proposal`` was rejected (under the lessons lock; InputError when it was decided
    meanwhile): the same text is not proposed again."""
    decide_proposal(place.meta_dir, place.state_dir, proposal.text, "rejected", now=now)


def add_person_lesson(place: LessonPlace, lesson: PersonLesson) -> LessonsFile:
    """Write the person's ``lesson`` (made by :func:`new_lesson`) into ``lessons.yaml``, trusted;
    InputError when the file already holds the same lesson (its text, case and spacing aside, for
    the same stage and domain) under any key: checked under the lessons lock, so a confirmation
    sent twice, at once or one after the other, writes one lesson."""

    def unless_held(current: LessonsFile) -> PersonLesson:
        for held in current.lessons:
            if (held.stage, held.domain, _words(held.text)) == (lesson.stage, lesson.domain, _words(lesson.text)):
                raise InputError(f"{current.path} already has this lesson, as {held.key}")
        return lesson

    return add_lesson(place.meta_dir, place.state_dir, unless_held)


def _words(text: str) -> str:
    return one_line(text.casefold())


def trust_lessons(place: LessonPlace, shown_digest: str | None) -> LessonsFile:
    """Trust ``lessons.yaml`` as it was shown (``shown_digest``: its content's hash then)."""
    return trust_lessons_file(place.meta_dir, place.state_dir, expected_digest=shown_digest)
