"""The whole learning loop with a model that follows its lessons.

Seeded critiques say counterarguments were missing; the lesson built from them reaches
the adaptive runs' decompose prompt; the lesson-following model (tests/support/
lesson_follower.py) then adds a counterarguments sub-query, which finds a page only that
sub-query can find; the A/B shows the adaptive arm doing better.

The A/B gives every lesson at once to one arm and none to the other (``--no-lessons``), so its
runs are in neither arm of a lesson's own effect (that compares only the runs its own trial
draw gave it or withheld it): ``memory effects`` counts the A/B's adaptive runs as given it,
but with nothing to compare them with, the lesson stays ``measuring`` however the A/B came out.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime

import yaml

from research_agent.memory.lessons.effects_view import lesson_effects
from research_agent.memory.lessons.select import select_lessons
from research_agent.record import read_run_record
from tests.support.ab import QUESTIONS, questions_file, run_ab_command, saved_ab
from tests.support.lesson_follower import COUNTER_QUERY, LessonFollower, write_debate_corpus
from tests.support.memory import make_critique, put
from tests.support.responder_model import ResponderModel


def seeded_ab(tmp_path, follower: LessonFollower | None = None, questions: int = 2):
    """Four passing critiques tagged missing_counterarguments, then an A/B of ``questions`` questions."""
    meta = tmp_path / "reports" / "meta"
    for n in range(4):
        put(meta, make_critique(n, tags=("missing_counterarguments",)))
    follower = follower or LessonFollower()
    corpus = write_debate_corpus(tmp_path / "corpus")
    lines = [QUESTIONS[i % 2] + ("" if i < 2 else f" (take {i})") for i in range(questions)]
    asked = questions_file(tmp_path, *lines)
    result = run_ab_command(tmp_path, corpus, ResponderModel(follower), questions=asked)
    assert result.exit_code == 0, result.output
    _, data = saved_ab(tmp_path / "reports")
    return follower, data


def sub_queries(meta, run_id: str) -> list[str]:
    record = read_run_record(meta / f"run-{run_id}.yaml")
    return [q for iteration in record.iterations for q in iteration.sub_queries]


def test_the_adaptive_arm_follows_the_lesson_and_scores_better(tmp_path):
    follower, data = seeded_ab(tmp_path)
    meta = tmp_path / "reports" / "meta"
    counter = COUNTER_QUERY.format(first="")  # " counterarguments objections", after the question's first word
    assert follower.followed == 2, "one lesson-following plan per adaptive run, none in a baseline run"
    for pair in data["pairs"]:
        assert any("counterarguments" in key for key in pair["adaptive"]["lessons"])
        assert any(q.endswith(counter) for q in sub_queries(meta, pair["adaptive"]["run_id"]))
        assert not any(q.endswith(counter) for q in sub_queries(meta, pair["baseline"]["run_id"]))
        assert pair["adaptive"]["scores"]["coverage"] == 4 and pair["baseline"]["scores"]["coverage"] == 3
    coverage = data["dimensions"]["coverage"]
    assert coverage["delta"] == 1 and coverage["n"] == 2
    assert coverage["interval"][0] < 1 < coverage["interval"][1], "the same difference twice: no zero width"
    assert data["overall"]["mean_score"]["delta"] > 0
    assert all(data["dimensions"][d]["delta"] == 0 for d in data["dimensions"] if d != "coverage")


def test_the_adaptive_arm_cites_more_distinct_sites(tmp_path):
    _, data = seeded_ab(tmp_path)
    sites = data["facts"]["sites.distinct"]
    assert sites["n"] == 2 and sites["delta"] > 0  # the debate/ folder is a site only the lesson's sub-query reaches


def _counter_effects(meta):
    return [e for e in lesson_effects(meta, now=datetime.now(UTC)) if e.key.startswith("counterarguments:")]


def test_the_ab_runs_are_in_no_arm_of_a_lessons_own_effect(tmp_path):
    seeded_ab(tmp_path)
    meta = tmp_path / "reports" / "meta"
    # its adaptive arm was given the lesson by no trial draw, its baseline arm withheld it with
    # --no-lessons, and both critiques say run_kind: ab: neither side enters the lesson's arms
    assert _counter_effects(meta) == []
    kinds = [c.get("run_kind") for c in (yaml.safe_load(p.read_text()) for p in meta.glob("critique-*.yaml"))]
    assert sorted(kinds, key=str) == [None] * 4 + ["ab"] * 4  # the A/B's two pairs; the four seeded critiques


def test_an_ab_that_shows_harm_retires_nothing_on_its_own(tmp_path):
    meta = tmp_path / "reports" / "meta"
    _, data = seeded_ab(tmp_path, LessonFollower(covered_coverage=2), questions=5)
    assert data["dimensions"]["coverage"]["delta"] == -1  # the A/B shows it: the adaptive arm covered worse
    assert _counter_effects(meta) == []  # no run of its own trial yet: nothing to decide on
    domain = yaml.safe_load(next(meta.glob("critique-*.yaml")).read_text())["query_domain"]
    later = select_lessons(meta, domain, now=datetime.now(UTC), rng=random.Random(0), control_fraction=0)
    assert any(lesson.key.startswith("counterarguments:") for lesson in later.lessons), "its own trial decides"
