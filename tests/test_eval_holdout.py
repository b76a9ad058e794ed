"""The holdout marker: a critique of an eval's measured half (``held_out``) builds no lesson, and
still counts as an outcome (its row in the trial ledger reaches every effect). The one place that decides is the
evidence pool (memory/lessons/build/pool.py), which every lesson is built from."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

from research_agent.memory.lessons.build.pool import EvidencePool
from research_agent.memory.lessons.select import build_lessons, select_lessons
from research_agent.memory.store.files import critique_path, load_critique
from research_agent.memory.store.schema import validate_critique
from research_agent.memory.store.trials import open_ledger
from tests.support.memory import NOW, make_critique, make_facts, put, state_in

EVAL_ID = "builtin-42-20261122T110000000000Z"
WEAK = make_facts(sub_queries=((5, 0, 0), (5, 3, 2), (5, 0, 0), (5, 2, 1)))  # builds coverage:unanswered


def _critiques(held_out: str | None, count: int = 4, **kw):
    return [replace(make_critique(i, facts=WEAK, **kw), held_out=held_out) for i in range(count)]


def test_held_out_critiques_build_no_lesson_and_the_others_do() -> None:
    learned, _ = build_lessons(_critiques(None))
    held, _ = build_lessons(_critiques(EVAL_ID))
    assert "coverage:unanswered" in {lesson.key for lesson in learned}
    assert held == ()
    mixed = EvidencePool.of([*_critiques(EVAL_ID, 2), *_critiques(None, 2)[:1]])
    assert [c.held_out for c in mixed.critiques] == [None]


def test_the_marker_is_written_validated_and_read_back(tmp_path: Path) -> None:
    critique = _critiques(EVAL_ID, 1)[0]
    path = put(tmp_path / "meta", critique)
    assert f"held_out: {EVAL_ID}" in path.read_text(encoding="utf-8")
    assert load_critique(path).held_out == EVAL_ID
    assert validate_critique({**critique.as_dict(), "held_out": "not an eval id"}) != []
    assert "held_out" not in make_critique(0).as_dict(), "absent unless a run was held out"


def test_a_run_selects_no_lesson_from_held_out_critiques_but_they_still_count_in_effects(tmp_path: Path) -> None:
    meta = tmp_path / "meta"
    for critique in _critiques(EVAL_ID, 4, applied=("coverage:low-score",)):
        put(meta, critique)
    selection = select_lessons(meta, "technology", now=NOW, rng=random.Random(1), state_dir=state_in(tmp_path))
    assert selection.lessons == () and "0 eligible technology critique(s)" in selection.reason
    rows = open_ledger(meta, state_in(tmp_path)).rows.values()
    uses = [use for row in rows for use in row.uses if use.key == "coverage:low-score" and use.arm == "applied"]
    assert len(uses) == 4, "the held-out runs are outcomes: their uses of a lesson count in its effect"
    for critique in _critiques(None, 4):
        put(meta, replace(critique, id=critique.id.replace("question", "learning"), query="learning " + critique.query))
    learned = select_lessons(meta, "technology", now=NOW, rng=random.Random(1), state_dir=state_in(tmp_path))
    assert learned.considered and all(critique_path(meta, i).exists() for i in learned.considered)
    assert all(load_critique(critique_path(meta, i)).held_out is None for i in learned.considered)
