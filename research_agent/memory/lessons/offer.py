"""The planning lessons a run offers its decompose call before the question's domain is known.

The first decompose call names the domain, so it cannot be given one domain's lessons:
it is given the planning lessons of every domain that has some, grouped by domain, at
most :data:`MAX_PER_DOMAIN` each and :data:`MAX_OFFERED` in all (domains with the most
critiques behind them first), and told to follow only its chosen domain's. Afterwards
:meth:`LessonOffer.settle` turns the chosen domain's selection into what the run was
really given: its planning lessons that the prompt listed, and its judging lessons (which
reach relevance after the domain is known). Only those count as applied and appear in
the report; a planning lesson the prompt had no room for is excluded, with that reason.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from ... import prompts
from .render import domain_label
from .types import MAX_LESSONS, Lesson, LessonSelection

__all__ = ["LessonOffer", "offer_lessons", "MAX_OFFERED", "MAX_PER_DOMAIN"]

MAX_PER_DOMAIN = MAX_LESSONS
MAX_OFFERED = 15
NOT_OFFERED = f"not in the planning prompt (it lists at most {MAX_OFFERED} lessons over all domains)"


@dataclass(frozen=True)
class LessonOffer:
    """The planning lessons listed in the first decompose prompt, per domain, in prompt order."""

    by_domain: Mapping[str, tuple[Lesson, ...]]

    def prompt_block(self) -> str:
        """The decompose prompt's lessons block; empty when no domain has planning lessons."""
        if not self.by_domain:
            return ""
        lines = [prompts.fragment("offered_lessons")]
        for domain, lessons in self.by_domain.items():
            label = domain_label(domain)
            lines.append(f"{domain}:" if label == domain else f"{domain} ({label}):")
            lines += [f"- {lesson.text}" for lesson in lessons]
        return "\n".join(lines)

    def settle(self, selection: LessonSelection) -> LessonSelection:
        """``selection`` (the chosen domain's) as the run was given it: its planning lessons
        the prompt did not list move to ``excluded``."""
        offered = {lesson.key for lesson in self.by_domain.get(selection.domain, ())}
        left_out = [lesson for lesson in selection.for_stage("decompose") if lesson.key not in offered]
        if not left_out:
            return selection
        given = tuple(lesson for lesson in selection.lessons if lesson not in left_out)
        excluded = (*selection.excluded, *((lesson.key, NOT_OFFERED) for lesson in left_out))
        if given:
            return replace(selection, lessons=given, excluded=excluded)
        return replace(
            selection, lessons=(), adaptive=False, excluded=excluded,
            reason=f"no lessons: none of the {selection.domain} lessons fit in the planning prompt",
        )  # fmt: skip


def offer_lessons(
    selections: Iterable[LessonSelection], *, per_domain: int = MAX_PER_DOMAIN, total: int = MAX_OFFERED
) -> LessonOffer:
    """The planning lessons to list from ``selections`` (in priority order: the best-evidenced
    domain first), ``per_domain`` each and ``total`` in all. Stops reading ``selections``
    once the prompt is full, so a lazy iterable selects no more domains than it needs."""
    by_domain: dict[str, tuple[Lesson, ...]] = {}
    room = total
    for selection in selections:
        lessons = selection.for_stage("decompose")[: min(per_domain, room)] if selection.adaptive else ()
        if lessons:
            by_domain[selection.domain] = lessons
            room -= len(lessons)
        if room <= 0:
            break
    return LessonOffer(by_domain)
