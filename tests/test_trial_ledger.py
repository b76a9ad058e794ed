"""The trial ledger (issue 41): evidence retention never deletes, signed rows, grades, kinds."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from research_agent.errors import InputError
from research_agent.memory.effects.lesson_effects import effects_in
from research_agent.memory.store.files import prune_critiques
from research_agent.memory.store.index.summary import IndexTrust, open_index
from research_agent.memory.store.trials import (
    LEDGER_NAME,
    Grade,
    TrialEvent,
    TrialLedger,
    open_ledger,
    record_grade,
    row_from_critique,
)
from research_agent.record import read_run_record
from tests.support.critique import RUN_ID, make_record
from tests.support.memory import NOW, make_critique, put, state_in

COUNTER = "counterarguments:missing"  # a planning lesson
SITE = "site:kept:docs.python.org"  # a judging lesson
GRADE = Grade("w1", "eval-1", "q3", 0.75, None, 1, 0)


def ledger_of(meta: Path) -> TrialLedger:
    with open_index(meta, trust=IndexTrust(state_in(meta.parent))) as index:
        return index.ledger()


def effect(meta: Path, key: str):
    ledger = ledger_of(meta)
    found = [e for e in effects_in(ledger, now=NOW, domain="technology") if e.key == key]
    return found[0] if found else None


def test_the_ledger_keeps_every_runs_evidence_when_critiques_are_pruned(tmp_path: Path) -> None:
    meta = tmp_path / "meta"
    for i in range(6):
        put(meta, make_critique(i, applied=(COUNTER,), scores=(2, 2, 2, 2, 2)))
        put(meta, make_critique(20 + i, withheld=(COUNTER,), scores=(4, 4, 4, 4, 4)))
    before = effect(meta, COUNTER)
    assert (before.applied_runs, before.baseline_runs) == (6, 6)
    assert before.status == "retired"  # and the decision is recorded, once
    lines = (meta / LEDGER_NAME).read_text().splitlines()
    # a row per run, the lesson's text as a run was first given it (once per trial), the decision
    assert [json.loads(line).keys() - {"mac"} for line in lines] == [{"row"}] * 12 + [{"lesson"}, {"event"}]
    assert all(len(line) < 1000 for line in lines)  # a few hundred bytes a run
    assert len(prune_critiques(meta, 2, now=NOW)) == 10
    after = effect(meta, COUNTER)  # pruning removed text, not evidence
    assert (after.applied_runs, after.baseline_runs, after.delta, after.status) == (6, 6, before.delta, "retired")
    assert len((meta / LEDGER_NAME).read_text().splitlines()) == 14  # nothing was rebuilt or decided twice


def test_the_ledger_is_rebuilt_from_the_critiques_only_where_it_is_missing(tmp_path: Path) -> None:
    meta = tmp_path / "meta"
    first = make_critique(1, applied=(COUNTER,))
    put(meta, first)
    ledger = ledger_of(meta)
    assert list(ledger.rows) == [first.id]
    (meta / LEDGER_NAME).unlink()
    put(meta, make_critique(2, withheld=(COUNTER,)))
    assert len(ledger_of(meta).rows) == 2  # both rebuilt from the critiques that exist
    prune_critiques(meta, 1, now=NOW)
    put(meta, make_critique(3))
    rows = ledger_of(meta).rows
    assert len(rows) == 3 and first.id in rows  # its critique is gone, its row stays


def test_a_planted_or_edited_line_is_ignored_and_counted(tmp_path: Path) -> None:
    meta = tmp_path / "meta"
    good = make_critique(1, applied=(COUNTER,))
    put(meta, good)
    ledger = ledger_of(meta)
    path = meta / LEDGER_NAME
    line = json.loads(path.read_text().splitlines()[0])  # the run's row (its lesson's text follows)
    line["row"]["mean"] = 1.0  # an edit of a signed row
    planted = TrialEvent("retired", "technology", COUNTER, "2026-11-22T10:00:00Z", measure="mean_score")
    with path.open("a") as handle:
        handle.write(json.dumps(line) + "\n")
        handle.write(json.dumps({"event": planted.as_json(), "mac": "00" * 16}) + "\n")
        handle.write('{"row": {"run": "torn')  # a torn last line, no newline
    again = open_ledger(meta, state_in(tmp_path))
    assert again.refused == 3 and again.events == [] and again.rows[good.id].mean == ledger.rows[good.id].mean
    again.add([replace(again.rows[good.id], model="model-b")])  # the next line starts on its own
    last = open_ledger(meta, state_in(tmp_path))
    assert last.refused == 3 and last.rows[good.id].model == "model-b"
    # another user's key signs nothing here
    other = TrialLedger.open(meta, b"k" * 32)
    assert other.rows == {} and other.refused == last.lines


def test_a_ledger_that_is_not_a_regular_file_is_left_alone(tmp_path: Path) -> None:
    meta = tmp_path / "meta"
    put(meta, make_critique(1, applied=(COUNTER,)))
    outside = tmp_path / "elsewhere.jsonl"
    outside.write_text("")
    (meta / LEDGER_NAME).symlink_to(outside)
    ledger = ledger_of(meta)
    assert not ledger.on_disk and "not used" in ledger.problem and len(ledger.rows) == 1
    assert outside.read_text() == ""


def test_a_grade_amends_a_row_and_a_later_critique_keeps_it(tmp_path: Path) -> None:
    meta = tmp_path / "meta"
    critique = make_critique(1, applied=(COUNTER,))
    put(meta, critique)
    ledger_of(meta)
    row = record_grade(meta, state_in(tmp_path), critique.id, GRADE)
    assert row.grade == GRADE and row.mean == critique.mean_score
    assert open_ledger(meta, state_in(tmp_path)).rows[critique.id].grade == GRADE  # read back with its grade
    ledger = open_ledger(meta, state_in(tmp_path))
    ledger.add([row_from_critique(critique)])  # the critique again, as a hand edit would bring it
    assert open_ledger(meta, state_in(tmp_path)).rows[critique.id].grade == GRADE


def test_a_run_graded_but_never_critiqued_gets_its_row_from_its_run_record(tmp_path: Path) -> None:
    lessons = {"adaptive": True, "reason": "1 lesson", "applied": [{"key": COUNTER, "stage": "decompose",
               "target": "scores.coverage", "text": "t", "critique_ids": [], "p": 0.5}], "excluded": [],
               "withheld": [{"key": SITE, "reason": "trial", "p": 0.5}]}  # fmt: skip
    path = make_record(tmp_path, lessons=lessons, plan_by_person=True)
    meta = path.parent
    row = record_grade(meta, state_in(tmp_path), RUN_ID, GRADE)
    record = read_run_record(path)
    assert record.plan_by_person
    assert (row.scores, row.mean, row.grade, row.plan_by_person, row.kind) == (None, None, GRADE, True, "ordinary")
    assert [(u.key, u.arm, u.p) for u in row.uses] == [(COUNTER, "applied", 0.5), (SITE, "withheld", 0.5)]
    assert not row.measured  # no scores: in no arm of the mean-score comparison
    with pytest.raises(InputError, match="no row in the trial ledger"):
        record_grade(meta, state_in(tmp_path), "other_20260101T000000000000Z", GRADE)
    with pytest.raises(ValueError, match="fact_recall"):
        Grade("w", "e", "q", 1.5, None, 0, 0)


def test_a_plan_a_person_gave_counts_for_judging_lessons_only(tmp_path: Path) -> None:
    meta = tmp_path / "meta"
    for i in range(6):
        put(meta, replace(make_critique(i, applied=(COUNTER, SITE)), plan_by_person=True))
        put(meta, replace(make_critique(20 + i, withheld=(COUNTER, SITE)), plan_by_person=True))
    assert effect(meta, COUNTER) is None  # a planning lesson: none of these runs planned on its own
    judging = effect(meta, SITE)
    assert (judging.applied_runs, judging.baseline_runs) == (6, 6)
    rows = ledger_of(meta).rows.values()
    assert all(row.plan_by_person and row.kind == "ordinary" for row in rows)


def test_kinds_ab_runs_and_lessons_given_by_no_draw_stay_out_of_both_arms(tmp_path: Path) -> None:
    meta = tmp_path / "meta"
    for i in range(6):
        put(meta, make_critique(i, applied=(COUNTER,)))
        put(meta, make_critique(20 + i, withheld=(COUNTER,)))
    before = effect(meta, COUNTER)
    for i in range(4):  # a memory ab: both arms marked, and the adaptive arm's lesson given by no draw
        adaptive = make_critique(40 + i, applied=(COUNTER,), scores=(1, 1, 2, 1, 1))
        lessons = tuple(replace(use, p=0.0) for use in adaptive.lessons_applied)
        put(meta, replace(adaptive, run_kind="ab", lessons_applied=lessons))
        put(meta, replace(make_critique(50 + i, withheld=(COUNTER,), reason="no_lessons"), run_kind="ab"))
        put(meta, replace(make_critique(60 + i, applied=(COUNTER,), scores=(1, 1, 2, 1, 1)), lessons_applied=lessons))
    after = effect(meta, COUNTER)
    assert (after.applied_runs, after.baseline_runs, after.delta) == (before.applied_runs, before.baseline_runs, before.delta)
    kinds = sorted(row.kind for row in ledger_of(meta).rows.values())
    assert kinds.count("ab") == 8 and kinds.count("no_lessons") == 0
    put(meta, make_critique(70, withheld=(COUNTER,), reason="control"))
    assert ledger_of(meta).rows[make_critique(70).id].kind == "control"


def test_a_hand_edited_critique_amends_its_row(tmp_path: Path) -> None:
    meta = tmp_path / "meta"
    critique = make_critique(1, applied=(COUNTER,))
    put(meta, critique)
    digest = ledger_of(meta).rows[critique.id].digest
    edited = replace(critique, scores=replace(critique.scores, coverage=2), mean_score=3.6)
    put(meta, edited)
    row = ledger_of(meta).rows[critique.id]
    assert row.mean == 3.6 and row.scores[2] == 2 and row.digest != digest
