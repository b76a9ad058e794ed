"""A person's lessons in the prompts: first, under their own header, and in the first decompose
call before the domain is known (issue 25)."""

from __future__ import annotations

import random

from research_agent.memory.lessons.render import lessons_markdown, lessons_prompt_block
from research_agent.memory.lessons.run import MemoryLessons
from research_agent.memory.lessons.types import Lesson, LessonSelection
from research_agent.memory.store.person.file import PersonLesson
from research_agent.memory.store.person.lessons import add_lesson
from tests.support.memory import NOW, make_critique, put

EVERYWHERE = "Include the release notes of the version asked about."
TECHNOLOGY = "Prefer the project's own manual to blog posts."
HEADER = "Guidance from the person running research-agent"


def _memory(tmp_path, *lessons: PersonLesson, seed: int = 0, critiques: int = 0) -> MemoryLessons:
    meta, state = tmp_path / "reports" / "meta", tmp_path / "state"
    for n in range(critiques):
        put(meta, make_critique(n, tags=("missing_counterarguments",)))
    for lesson in lessons:
        add_lesson(meta, state, lesson)
    return MemoryLessons(meta, now=NOW, rng=random.Random(seed), control_fraction=0.0, trial_probability=0.0,
                         state_dir=state)  # fmt: skip


def test_a_lesson_for_every_domain_is_offered_once_and_given_whatever_domain_is_named(tmp_path):
    memory = _memory(
        tmp_path,
        PersonLesson("user:notes", "decompose", "any", EVERYWHERE),
        PersonLesson("user:manual", "decompose", "technology", TECHNOLOGY),
    )
    offer = memory.offer()
    assert [lesson.key for lesson in offer.everywhere] == ["user:notes"]
    assert [lesson.key for lesson in offer.by_domain["technology"]] == ["user:manual"]
    block = offer.prompt_block()
    assert block.startswith(HEADER) and block.count(EVERYWHERE) == 1 and block.count(TECHNOLOGY) == 1
    assert block.index(EVERYWHERE) < block.index("Lines under a domain apply only") < block.index("technology:")
    assert "Planning lessons from critiques" not in block, "no built lessons yet: no built block"
    health = memory.given("health")
    assert [lesson.key for lesson in health.lessons] == ["user:notes"] and health.adaptive
    technology = memory.given("technology")
    assert [lesson.key for lesson in technology.lessons] == ["user:notes", "user:manual"]


def test_the_person_s_lessons_come_before_built_ones_in_a_stage_s_slots_and_its_prompt(tmp_path):
    person = [PersonLesson(f"user:p{n}", "decompose", "technology", f"Planning advice number {n}.") for n in range(4)]
    memory = _memory(tmp_path, *person, critiques=4)
    memory.offer()
    given = memory.given("technology")
    planning = given.for_stage("decompose")
    assert [lesson.key for lesson in planning][:4] == [p.key for p in person]
    assert [lesson.origin for lesson in planning] == ["user"] * 4 + ["built"], "five slots, the person's first"
    assert planning[-1].key == "counterarguments:missing"
    block = lessons_prompt_block(given, "decompose")
    person_part, built_part = block.split("\n\n")
    assert person_part.startswith(HEADER) and "when choosing sub-queries" in person_part
    assert built_part.startswith("Planning lessons from critiques of earlier technology reports")
    report = lessons_markdown(given)
    assert "This run used your own lessons and lessons drawn from critiques" in report
    assert "(your own lesson, `user:p0`)" in report and "(critiques: `" in report


def test_an_approved_lesson_is_named_as_the_person_s_in_the_report():
    lesson = Lesson("approved:cite-manuals", "relevance", "mean_score", "Cite the manual.", ())
    selection = LessonSelection("technology", (lesson,), True, "given")
    assert lessons_prompt_block(selection, "relevance").startswith(HEADER)
    assert "when judging each source" in lessons_prompt_block(selection, "relevance")
    assert "a critic's proposal you approved, `approved:cite-manuals`" in lessons_markdown(selection)
    assert lesson.origin == "approved"
