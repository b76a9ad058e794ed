"""The planning lessons a run offers its decompose call before the question's domain is known.

The first decompose call names the domain, so it cannot be given one domain's lessons:
it is given the planning lessons of every domain that has some, grouped by domain, at
most :data:`MAX_PER_DOMAIN` each and :data:`MAX_OFFERED` in all (domains with the most
critiques behind them first), and told to follow only its chosen domain's. Afterwards
:meth:`LessonOffer.settle` turns the chosen domain's selection into what the run was
really given: its planning lessons that the prompt listed, and its judging lessons (which
reach relevance after the domain is known). Only those count as applied and appear in
the report; a planning lesson the prompt had no room for is excluded, with that reason.
Everything the prompt listed, of every domain, is kept apart in the selection's ``offered``
(the run record's ``lessons.offered``, with the other domains it named): a lesson withheld for
its trial is never listed, since the offer is drawn from each domain's selection after its draw.

A person's lessons are listed apart, first, as guidance from the person running the tool
(see :func:`.render.person_block`). Those written for every domain (``any``) that every
domain's selection gives are listed once, under "every domain" (``everywhere``); the caller
then passes ``any_keys`` and a selection of every domain, so that whatever domain the call
names, it was given them.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, replace

from ... import prompts
from .render import domain_label, person_block
from .types import MAX_LESSONS, Lesson, LessonSelection

__all__ = ["LessonOffer", "offer_lessons", "MAX_OFFERED", "MAX_PER_DOMAIN"]

MAX_PER_DOMAIN = MAX_LESSONS
MAX_OFFERED = 15
NOT_OFFERED = f"not in the planning prompt (it lists at most {MAX_OFFERED} lessons over all domains)"


@dataclass(frozen=True)
class LessonOffer:
    """The planning lessons listed in the first decompose prompt, per domain, in prompt order,
    and a person's lessons listed once for every domain (``everywhere``)."""

    by_domain: Mapping[str, tuple[Lesson, ...]]
    everywhere: tuple[Lesson, ...] = ()

    def _groups(self, person: bool) -> list[str]:
        lines = []
        for domain, lessons in self.by_domain.items():
            chosen = [lesson for lesson in lessons if (lesson.origin != "built") is person]
            if chosen:
                label = domain_label(domain)
                lines.append(f"{domain}:" if label == domain else f"{domain} ({label}):")
                lines += [f"- {lesson.text}" for lesson in chosen]
        return lines

    def prompt_block(self) -> str:
        """The decompose prompt's lessons block; empty when no domain has planning lessons."""
        blocks = []
        person = self._groups(person=True)
        if self.everywhere or person:
            lines = person_block(self.everywhere, "decompose").split("\n")
            if person:
                lines += [prompts.fragment("offered_person_lessons"), *person]
            blocks.append("\n".join(lines))
        built = self._groups(person=False)
        if built:
            blocks.append("\n".join([prompts.fragment("offered_lessons"), *built]))
        return "\n\n".join(blocks)

    @property
    def listed(self) -> tuple[tuple[str, Lesson], ...]:
        """Every lesson the prompt lists, as ``(domain, lesson)`` (``any``: listed for every domain)."""
        return (*(("any", lesson) for lesson in self.everywhere),
                *((domain, lesson) for domain, lessons in self.by_domain.items() for lesson in lessons))  # fmt: skip

    def settle(self, selection: LessonSelection) -> LessonSelection:
        """``selection`` (the chosen domain's) as the run was given it: its planning lessons
        the prompt did not list move to ``excluded``; what the prompt listed is kept in ``offered``."""
        selection = replace(selection, offered=self.listed)
        offered = {lesson.key for lesson in (*self.everywhere, *self.by_domain.get(selection.domain, ()))}
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


def _shared(selections: list[LessonSelection], any_keys: Collection[str]) -> tuple[Lesson, ...]:
    """The planning lessons of ``any_keys`` that every one of ``selections`` gives, in the first's order."""
    given = [
        {lesson.key for lesson in s.for_stage("decompose")} if s.adaptive else set() for s in selections
    ]
    first = selections[0].for_stage("decompose") if selections else ()
    return tuple(lesson for lesson in first if lesson.key in any_keys and all(lesson.key in g for g in given))


def offer_lessons(
    selections: Iterable[LessonSelection],
    *,
    per_domain: int = MAX_PER_DOMAIN,
    total: int = MAX_OFFERED,
    any_keys: Collection[str] = (),
) -> LessonOffer:
    """The planning lessons to list from ``selections`` (in priority order: the best-evidenced
    domain first), ``per_domain`` each and ``total`` in all. Stops reading ``selections``
    once the prompt is full, so a lazy iterable selects no more domains than it needs.

    ``any_keys``: a person's lessons for every domain. Then ``selections`` must hold every
    domain's; those lessons that all of them give are listed once (``everywhere``)."""
    everywhere: tuple[Lesson, ...] = ()
    if any_keys:
        selections = list(selections)
        everywhere = _shared(selections, any_keys)[: min(per_domain, total)]
    shared = {lesson.key for lesson in everywhere}
    by_domain: dict[str, tuple[Lesson, ...]] = {}
    room = total - len(everywhere)
    for selection in selections if room > 0 else ():
        planning = selection.for_stage("decompose") if selection.adaptive else ()
        own = tuple(lesson for lesson in planning if lesson.key not in shared)
        lessons = own[: min(per_domain - (len(planning) - len(own)), room)]
        if lessons:
            by_domain[selection.domain] = lessons
            room -= len(lessons)
        if room <= 0:
            break
    return LessonOffer(by_domain, everywhere)
