"""The planning lessons the first decompose call is offered before the domain is known (issue 13)."""

from __future__ import annotations

import random

from research_agent.domains import DOMAINS
from research_agent.memory.lessons.offer import MAX_OFFERED, NOT_OFFERED, offer_lessons
from research_agent.memory.lessons.run import FixedLessons, MemoryLessons
from research_agent.memory.lessons.types import Lesson, LessonSelection
from tests.support.memory import NOW, make_critique, put


def lesson(domain: str, n: int, stage: str = "decompose") -> Lesson:
    kind = "coverage" if stage == "decompose" else "site:kept"
    return Lesson(f"{kind}:{domain}-{n}", stage, "coverage", f"{domain} lesson {n}", (f"{domain}_critique",))


def selection(domain: str, planning: int, judging: int = 0, critiques: int = 3) -> LessonSelection:
    lessons = tuple(lesson(domain, n) for n in range(planning))
    lessons += tuple(lesson(domain, n, "relevance") for n in range(judging))
    considered = tuple(f"{domain}-{n}" for n in range(critiques))
    return LessonSelection(domain, lessons, bool(lessons), "given", considered)


def test_at_most_five_a_domain_and_fifteen_in_all_the_best_evidenced_domains_first():
    selections = {d: LessonSelection.none(d) for d in DOMAINS}
    selections |= {
        "science": selection("science", 5, critiques=4),
        "health": selection("health", 5, critiques=9),
        "business": selection("business", 5, critiques=6),
        "education": selection("education", 5, critiques=3),
    }
    offer = FixedLessons(selections.__getitem__).offer()
    assert list(offer.by_domain) == ["health", "business", "science"]
    assert sum(len(lessons) for lessons in offer.by_domain.values()) == MAX_OFFERED == 15
    block = offer.prompt_block()
    assert "education lesson" not in block and block.count("\n- ") == 15
    assert "\nhealth:\n- health lesson 0\n" in block


def test_a_domain_cut_short_by_the_total_keeps_what_fits_and_counts_only_that():
    chosen = selection("science", 5, judging=2)
    offer = offer_lessons([selection("health", 5, critiques=9), chosen], per_domain=5, total=7)
    assert [x.key for x in offer.by_domain["science"]] == ["coverage:science-0", "coverage:science-1"]
    given = offer.settle(chosen)
    assert [x.key for x in given.lessons] == [
        "coverage:science-0", "coverage:science-1", "site:kept:science-0", "site:kept:science-1"
    ]
    assert ("coverage:science-2", NOT_OFFERED) in given.excluded and given.adaptive


def test_a_domain_with_nothing_offered_and_no_judging_lessons_is_not_adaptive():
    chosen = selection("science", 3, critiques=1)
    offer = offer_lessons([selection("health", 5, critiques=9), chosen], total=5)
    given = offer.settle(chosen)
    assert given.lessons == () and not given.adaptive and "fit in the planning prompt" in given.reason


def test_judging_lessons_alone_are_not_offered_to_planning_and_stay_given():
    chosen = selection("science", 0, judging=2)
    offer = offer_lessons([chosen])
    assert offer.prompt_block() == "" and offer.settle(chosen) == chosen


def test_a_run_is_a_control_run_for_every_domain_or_for_none(tmp_path):
    meta = tmp_path / "reports" / "meta"
    for domain in ("technology", "health", "science"):
        for n in range(3):
            put(meta, make_critique(n, domain=domain, query=f"{domain} {n}", tags=("missing_counterarguments",)))
    kinds = set()
    for seed in range(12):
        lessons = MemoryLessons(meta, now=NOW, control_fraction=0.5, rng=random.Random(seed), trial_probability=0.0)
        offered = lessons.offer().by_domain
        given = {d: lessons.given(d) for d in ("technology", "health", "science")}
        controls = {g.reason.startswith("control run") for g in given.values()}
        assert len(controls) == 1, f"seed {seed}: {[g.reason for g in given.values()]}"
        (control,) = controls
        assert bool(offered) is not control, "a baseline run is offered nothing; any other run all three"
        assert control or set(offered) == set(given)
        kinds |= controls
    assert kinds == {True, False}, "both kinds of run occur"


def test_only_domains_with_enough_critiques_are_selected_before_the_plan_and_the_rest_on_demand(tmp_path):
    meta = tmp_path / "reports" / "meta"
    for domain, count in (("technology", 2), ("health", 5), ("science", 3)):
        for n in range(count):
            put(meta, make_critique(n, domain=domain, query=f"{domain} {n}", tags=("missing_counterarguments",)))
    lessons = MemoryLessons(meta, now=NOW, control_fraction=0.0, rng=random.Random(1), trial_probability=0.0)
    assert list(lessons.offer().by_domain) == ["health", "science"], "best-evidenced first"
    assert set(lessons._selected) == {"health", "science"}
    technology = lessons.given("technology")
    assert not technology.adaptive and "2 eligible technology critique(s); 3 are needed" in technology.reason
    assert len(technology.considered) == 2


def test_domains_are_not_selected_once_the_planning_prompt_is_full():
    selected = []

    def lazily():
        for domain in ("health", "science", "business", "education"):
            selected.append(domain)
            yield selection(domain, 5)

    offer = offer_lessons(lazily(), total=10)
    assert list(offer.by_domain) == ["health", "science"] and selected == ["health", "science"]
