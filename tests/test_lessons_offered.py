"""The run record says which lessons the first decompose prompt was offered and which were applied (issue 43,
point 8): every domain's planning lessons listed before the domain is known, the other domains named, a lesson
withheld for its trial never offered."""

from __future__ import annotations

import random
from pathlib import Path

from research_agent.memory.lessons.run import MemoryLessons
from research_agent.pipeline import research
from research_agent.record import read_run_record
from tests.support.memory import NOW, make_critique, put
from tests.support.pipeline import QUERY, DocsProvider, record_of, settings_for
from tests.support.research_responder import ResearchResponder
from tests.support.responder_model import ResponderModel


def _meta(tmp_path: Path) -> Path:
    meta = tmp_path / "reports" / "meta"
    for domain in ("technology", "health"):
        for n in range(4):
            put(meta, make_critique(n, domain=domain, query=f"{domain} question {n}",
                                    tags=("missing_counterarguments", "low_coverage"), scores=(4, 4, 2, 4, 4)))  # fmt: skip
    return meta


async def test_a_technology_runs_record_lists_the_health_lessons_its_prompt_was_offered_apart_from_those_applied(
    tmp_path: Path,
) -> None:
    meta = _meta(tmp_path)
    lessons = MemoryLessons(meta, now=NOW, control_fraction=0.0, rng=random.Random(3), trial_probability=0.0)
    model = ResponderModel(ResearchResponder())
    result = await research(QUERY, settings=settings_for(tmp_path), model=model, providers=[DocsProvider(tmp_path)],
                            lessons=lessons)  # fmt: skip
    block = record_of(result)["lessons"]
    offered = {(o["domain"], o["key"]) for o in block["offered"]}
    assert {domain for domain, _ in offered} == {"technology", "health"}
    assert block["offered_other_domains"] == ["health"]
    applied = {a["key"] for a in block["applied"] if a["stage"] == "decompose"}
    assert applied and applied == {key for domain, key in offered if domain == "technology"}
    assert all(o["text"] in model.calls("decompose")[0].user for o in block["offered"]), "what the prompt held"
    record = read_run_record(result.run_record_path)
    assert {(d, k) for d, k, _ in record.lessons.offered} == offered
    assert record.lessons.offered_other_domains == ("health",)
    assert record.lessons.as_dict()["offered"] == block["offered"]


def test_a_lesson_withheld_for_its_trial_is_never_in_the_offer(tmp_path: Path) -> None:
    meta = _meta(tmp_path)
    seen_withheld = 0
    for seed in range(8):
        lessons = MemoryLessons(meta, now=NOW, control_fraction=0.0, rng=random.Random(seed), trial_probability=0.5)
        lessons.offer()
        for domain in ("technology", "health"):
            given = lessons.given(domain)
            offered = {key.key for _, key in given.offered}
            withheld = {w.key for w in given.withheld if w.reason == "trial"}
            seen_withheld += len(withheld)
            assert not withheld & offered, f"seed {seed}: {withheld & offered} withheld and offered"
            assert {lesson.key for lesson in given.for_stage("decompose")} <= offered
    assert seen_withheld, "some lesson was withheld for its trial"


def test_a_run_offered_nothing_records_no_offer(tmp_path: Path) -> None:
    lessons = MemoryLessons(tmp_path / "reports" / "meta", now=NOW, control_fraction=0.0, rng=random.Random(1))
    lessons.offer()
    record = lessons.given("technology").as_record()
    assert "offered" not in record and "offered_other_domains" not in record
