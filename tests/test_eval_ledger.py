"""An eval's grades in the trial ledger (issue 42): each graded run's row carries its ground truth, kept when
its critique comes later and past retention, and ``memory effects`` shows each lesson's effect on fact recall
beside its effect on the critic's score, with how far the critic tracks ground truth in its domain."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from research_agent.cli.eval import app as eval_app
from research_agent.cli.memory import MemoryDeps
from research_agent.cli.memory import app as memory_app
from research_agent.config import Settings
from research_agent.memory.lessons.effects_view import lesson_effects
from research_agent.memory.store.index.summary import open_index
from research_agent.memory.store.trials import Grade, open_ledger, record_grades
from tests.support.batch import batch_deps
from tests.support.eval_writers import CopyingResponder
from tests.support.memory import NOW, make_critique, put, state_in, trust_in
from tests.support.responder_model import ResponderModel

COUNTER = "counterarguments:missing"  # target scores.coverage


def test_an_evals_grades_go_into_the_trial_ledger_and_stay_when_the_critique_fills_the_row(tmp_path: Path) -> None:
    result = CliRunner().invoke(eval_app, ["run", "--json", "--limit", "3"],
                                obj=batch_deps(tmp_path, ResponderModel(CopyingResponder())))  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    meta, state = tmp_path / "reports" / "meta", tmp_path / "state"
    graded = [q for q in data["questions"] if q["graded"]]
    assert len(graded) == 3
    with open_index(meta, trust=trust_in(tmp_path)) as index:  # memory read: rows synced with the critiques
        rows = index.ledger().rows
    for q in graded:
        grade = rows[q["run_id"]].grade
        assert grade is not None and (grade.world, grade.eval_id, grade.question_id) == (
            data["world"]["name"], data["id"], q["id"])
        assert grade.fact_recall == pytest.approx(q["recall"]) and grade.checkpoints == len(q["checkpoints"])
        assert grade.unsupported == len(q["unsupported"]) and grade.stale == len(q["stale"])
        assert rows[q["run_id"]].mean == pytest.approx(q["critic"]["mean"]), "the critique's outcome joined the grade"
    for path in meta.glob("critique-*.yaml"):  # retention prunes critiques: the grades stay
        path.unlink()
    again = open_ledger(meta, state).rows
    assert all(again[q["run_id"]].grade.eval_id == data["id"] for q in graded)


def _runs(meta: Path, recalls: list[float], coverages: list[int], *, applied: bool, start: int) -> dict[str, float]:
    """Critiques of runs given (or withheld, by its trial) the lesson, each with its fact recall to record."""
    out = {}
    for i, (recall, coverage) in enumerate(zip(recalls, coverages, strict=True)):
        critique = make_critique(start + i, scores=(4, 4, coverage, 4, 4),
                                 **({"applied": (COUNTER,)} if applied else {"withheld": (COUNTER,)}))  # fmt: skip
        put(meta, critique)
        out[critique.id] = recall
    return out


def _graded(tmp_path: Path, recall_with: list[float], recall_without: list[float], coverage_with: list[int],
            coverage_without: list[int]) -> Path:  # fmt: skip
    meta = tmp_path / "reports" / "meta"
    recalls = {**_runs(meta, recall_with, coverage_with, applied=True, start=0),
               **_runs(meta, recall_without, coverage_without, applied=False, start=20)}  # fmt: skip
    with open_index(meta, trust=trust_in(tmp_path)) as index:
        index.ledger()  # the rows, from the critiques, before the eval grades them
    grades = {run: Grade("builtin-42", "builtin-42-20260101T000000Z", f"q{n}", recall, 1.0, 0, 0, 4)
              for n, (run, recall) in enumerate(recalls.items())}  # fmt: skip
    record_grades(meta, state_in(tmp_path), grades)
    return meta


def test_memory_effects_shows_a_lessons_effect_on_fact_recall_beside_the_critics_and_says_a_noisy_critic_is_noise(
    tmp_path: Path,
) -> None:
    # the critic likes the lesson (coverage 5 against 3), ground truth sees no change in fact recall
    spread = [0.25, 0.5, 0.75, 1.0, 0.5, 0.75]
    meta = _graded(tmp_path, spread, list(reversed(spread)), [5, 5, 5, 5, 5, 5], [3, 3, 3, 3, 3, 3])
    (found,) = [e for e in lesson_effects(meta, now=NOW, state_dir=state_in(tmp_path)) if e.key == COUNTER]
    assert found.delta == pytest.approx(2.0) and found.score.delta == pytest.approx(0.4)
    recall = found.recall
    assert (recall.n_with, recall.n_without) == (6, 6)
    assert recall.mean_with == pytest.approx(0.625) and recall.mean_without == pytest.approx(0.625)
    assert recall.delta == pytest.approx(0.0) and recall.interval[0] < 0 < recall.interval[1]
    assert found.critic["verdict"] == "tells nothing" and found.critic["n"] == 12
    deps = MemoryDeps(load_settings=lambda o: Settings(**{"reports_dir": meta.parent, "state_dir": state_in(tmp_path),
                                                          **o}), clock=lambda: NOW)  # fmt: skip
    shown = CliRunner().invoke(memory_app, ["effects"], obj=deps)
    assert shown.exit_code == 0, shown.output
    assert "fact recall (ground truth, eval runs) 0.62 with over 6 run(s), 0.62 without over 6: delta +0.00" in shown.stdout
    assert "the critic against ground truth: the critic's mean score against fact recall: rho " in shown.stdout
    assert "a lesson judged by a critic that tracks nothing is judged by noise" in shown.stdout
    [listed] = [e for e in json.loads(CliRunner().invoke(memory_app, ["effects", "--json"], obj=deps).stdout)
                if e["key"] == COUNTER]  # fmt: skip
    assert listed["fact_recall"]["n_with"] == 6 and listed["fact_recall"]["delta"] == 0.0
    assert listed["critic_tracking"]["verdict"] == "tells nothing"


def test_a_critic_that_tracks_fact_recall_is_said_to_and_no_grades_means_no_ground_truth(tmp_path: Path) -> None:
    meta = _graded(tmp_path, [0.75, 1.0, 1.0, 0.75, 1.0, 0.75], [0.25, 0.0, 0.25, 0.5, 0.0, 0.25],
                   [5, 5, 5, 5, 5, 5], [2, 2, 2, 2, 2, 2])  # fmt: skip
    (found,) = [e for e in lesson_effects(meta, now=NOW, state_dir=state_in(tmp_path)) if e.key == COUNTER]
    assert found.critic["verdict"] == "tracks" and found.critic["words"].endswith("the critic tracks ground truth")
    assert found.recall.delta == pytest.approx(0.875 - 1.25 / 6) and found.recall.interval[0] > 0
    plain = tmp_path / "plain"
    _runs(plain / "reports" / "meta", [0.5] * 3, [4] * 3, applied=True, start=0)
    _runs(plain / "reports" / "meta", [0.5] * 3, [4] * 3, applied=False, start=20)
    (ungraded,) = lesson_effects(plain / "reports" / "meta", now=NOW, state_dir=state_in(plain))
    assert ungraded.recall is None and ungraded.critic is None
    assert ungraded.as_dict()["fact_recall"] is None
