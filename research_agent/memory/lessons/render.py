"""Lessons as prompts and readers see them: one block per stage, and the report's
"Lessons Applied" section.

A prompt receives only its own stage's lessons, each text verbatim on its own line. The
report lists every lesson with its stage and the critiques behind it, by short id
(:mod:`research_agent.run_refs`: 7 hex digits, unique among the critiques the run considered).
"""

from __future__ import annotations

from ...run_refs import short_ids
from ...text.mdsafe import code_span, plain_text
from .types import LessonSelection

__all__ = ["DOMAIN_LABELS", "domain_label", "lessons_prompt_block", "lessons_markdown"]

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


def domain_label(domain: str) -> str:
    """The words for a domain in a sentence ("policy and law")."""
    return DOMAIN_LABELS.get(domain, domain.replace("_", " "))


def lessons_prompt_block(selection: LessonSelection, stage: str) -> str:
    """The lessons for ``stage``'s prompt (decompose or relevance); empty when it has none."""
    lessons = selection.for_stage(stage)
    if not lessons:
        return ""
    lines = [_HEADERS[stage].format(label=domain_label(selection.domain))]
    lines += [f"- {lesson.text}" for lesson in lessons]
    return "\n".join(lines)


def lessons_markdown(selection: LessonSelection) -> str:
    """The report's closing "## Lessons Applied" section; empty when no lessons."""
    if not selection.lessons:
        return ""
    lines = [
        "## Lessons Applied",
        "",
        f"This run used lessons drawn from critiques of earlier {domain_label(selection.domain)} reports:",
        "",
    ]
    shown = short_ids({*selection.considered, *(i for lesson in selection.lessons for i in lesson.critique_ids)})
    for number, lesson in enumerate(selection.lessons, start=1):
        ids = ", ".join(code_span(shown[i]) for i in lesson.critique_ids)
        lines.append(f"{number}. {_STAGE_NAMES[lesson.stage]}: {plain_text(lesson.text)} (critiques: {ids})")
    return "\n".join(lines) + "\n"
