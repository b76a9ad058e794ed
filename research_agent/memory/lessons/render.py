"""Lessons as prompts and readers see them: one block per stage, and the report's
"Lessons Applied" section, and the progress line that says what the run got.

A prompt receives only its own stage's lessons, each text verbatim on its own line. A
person's lessons (``user:``, ``approved:``) come first, under their own header: guidance from
the person running the tool, not data and not the tool's own findings. The report lists
every lesson with its stage, and either the critiques behind it, by short id
(:mod:`research_agent.run_refs`: 7 hex digits, unique among the critiques the run considered),
or that it is the user's; then the lessons withheld for their trial, by key; a control run
says that it was one, and a run of a suspended domain why it went without.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ... import prompts
from ...run_refs import short_ids
from ...text.mdsafe import code_span, plain_text
from .types import KEPT_WORDS, Lesson, LessonSelection

__all__ = [
    "DOMAIN_LABELS", "domain_label", "lessons_prompt_block", "person_block", "lessons_markdown", "lessons_line",
]  # fmt: skip

DOMAIN_LABELS = {
    "policy_law": "policy and law",
    "history_culture": "history and culture",
    "other": "general",
}

_HEADERS = {
    "decompose": (
        "Planning lessons from critiques of earlier {label} reports (research-agent wrote them from measured "
        "facts and scores; use them when choosing sub-queries):"
    ),
    "relevance": (
        "Judging lessons from critiques of earlier {label} reports (research-agent wrote them from measured "
        "facts; weigh them together with what the page itself shows):"
    ),
}
_STAGE_NAMES = {"decompose": "planning (decompose)", "relevance": "judging (relevance)"}
_STAGE_USES = {"decompose": "when choosing sub-queries", "relevance": "when judging each source"}
_ORIGIN_WORDS = {
    "user": "your own lesson",
    "approved": "a critic's proposal you approved",
}


def domain_label(domain: str) -> str:
    """The words for a domain in a sentence ("policy and law")."""
    return DOMAIN_LABELS.get(domain, domain.replace("_", " "))


def person_block(lessons: Sequence[Lesson], stage: str) -> str:
    """A person's lessons for ``stage``, under the header that names them as the person's
    guidance (the header alone when ``lessons`` is empty)."""
    lines = [prompts.fragment("person_lessons", use=_STAGE_USES[stage])]
    return "\n".join([*lines, *(f"- {lesson.text}" for lesson in lessons)])


def lessons_prompt_block(selection: LessonSelection, stage: str) -> str:
    """The lessons for ``stage``'s prompt (decompose or relevance); empty when it has none."""
    lessons = selection.for_stage(stage)
    person = [lesson for lesson in lessons if lesson.origin != "built"]
    built = [lesson for lesson in lessons if lesson.origin == "built"]
    blocks = [person_block(person, stage)] if person else []
    if built:
        lines = [_HEADERS[stage].format(label=domain_label(selection.domain))]
        blocks.append("\n".join([*lines, *(f"- {lesson.text}" for lesson in built)]))
    return "\n\n".join(blocks)


def _source(lesson: Lesson, shown: Mapping[str, str]) -> str:
    """Where a lesson came from: the person (and its key), or the critiques behind it by short id."""
    if lesson.origin != "built":
        return f"{_ORIGIN_WORDS[lesson.origin]}, {code_span(lesson.key)}"
    if lesson.kept:
        return f"{KEPT_WORDS}; first given in run {code_span(shown[lesson.critique_ids[0]])}"
    return "critiques: " + ", ".join(code_span(shown[i]) for i in lesson.critique_ids)


def _reasons(selection: LessonSelection) -> set[str]:
    return {w.reason for w in selection.withheld}


def lessons_line(selection: LessonSelection) -> str:
    """The progress line: what the run got ('' when it had nothing to get)."""
    reasons = _reasons(selection)
    if not selection.lessons and "control" in reasons:
        return "control run: no lessons, to measure whether they help"
    if not selection.lessons and "suspended" in reasons:
        return "no lessons: this domain's lessons are suspended (runs given them scored worse)"
    trial = sum(1 for w in selection.withheld if w.reason == "trial")
    if not selection.lessons and not trial:
        return ""
    held = f", {trial} withheld for {'its' if trial == 1 else 'their'} trial" if trial else ""
    return f"lessons: {len(selection.lessons)} given{held}"


def _intro(selection: LessonSelection) -> str:
    label = domain_label(selection.domain)
    origins = {lesson.origin for lesson in selection.lessons}
    if origins == {"built"}:
        return f"This run used lessons drawn from critiques of earlier {label} reports:"
    if "built" in origins:
        return f"This run used your own lessons and lessons drawn from critiques of earlier {label} reports:"
    return "This run used your own lessons:"


def _without(selection: LessonSelection) -> list[str]:
    """What the section says of a run that went without lessons by a whole-run draw, or of the
    lessons it withheld for their trial."""
    reasons = _reasons(selection)
    if not selection.lessons and "control" in reasons:
        count = sum(1 for w in selection.withheld if w.reason == "control")
        return [
            f"This run was a control run: it was given none of the {count} lesson(s) it could have had, so that "
            "its critique shows how runs without lessons do, and whether lessons help."
        ]
    if not selection.lessons and "suspended" in reasons:
        return [
            f"This run was given no lessons: the {domain_label(selection.domain)} lessons are suspended, "
            "because runs given them scored worse than runs without them."
        ]
    trial = [w.key for w in selection.withheld if w.reason == "trial"]
    if not trial:
        return []
    keys = ", ".join(code_span(key) for key in trial)
    return [f"Withheld for their trial (each lesson is left out of some runs at random, to measure it): {keys}."]


def _retired(selection: LessonSelection) -> list[str]:
    """The retired lessons the run would otherwise have been given, each with its decision (the
    reason its selection excluded it with); none for a run told to go without (``--no-lessons``)."""
    reasons = _reasons(selection)
    if "no_lessons" in reasons:
        return []
    why = dict(selection.excluded)
    keys = [w.key for w in selection.withheld if w.reason == "retired"]
    return [f"Not given, retired by its own trial: {code_span(key)}, {plain_text(why.get(key, 'retired'))}."
            for key in keys]  # fmt: skip


def lessons_markdown(selection: LessonSelection) -> str:
    """The report's closing "## Lessons Applied" section; empty when the run had no lesson to
    get, or was told to go without (``--no-lessons``). A retired lesson the run would otherwise
    have been given is named with its decision."""
    without = _without(selection) + _retired(selection)
    if not selection.lessons and not without:
        return ""
    lines = ["## Lessons Applied", ""]
    if selection.lessons:
        lines += [_intro(selection), ""]
        shown = short_ids({*selection.considered, *(i for lesson in selection.lessons for i in lesson.critique_ids)})
        for number, lesson in enumerate(selection.lessons, start=1):
            lines.append(f"{number}. {_STAGE_NAMES[lesson.stage]}: {plain_text(lesson.text)} ({_source(lesson, shown)})")
        lines += [""] if without else []
    lines += without
    return "\n".join(lines) + "\n"
