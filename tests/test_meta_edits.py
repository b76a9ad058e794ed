"""Meta files a person may edit (issue 43, point 4): a critique's derived values are recomputed when it is
read, a score changed by hand is honoured, ``memory validate`` names the edit as an edit, and the run's row
in the trial ledger is amended (its scores only) and says it was edited by hand."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from research_agent.cli.memory import MemoryDeps, app
from research_agent.config import Settings
from research_agent.memory.lessons.effects_view import lesson_effects
from research_agent.memory.store.critique_types import Scores
from research_agent.memory.store.files import critique_path, load_critique
from research_agent.memory.store.index.summary import open_index
from research_agent.memory.store.schema import DIMENSIONS
from research_agent.memory.store.trials import TrialRow
from tests.support.memory import NOW, make_critique, put, stamp, state_in, trust_in

COUNTER = "counterarguments:missing"


def _deps(tmp_path: Path) -> MemoryDeps:
    reports = tmp_path / "reports"
    return MemoryDeps(load_settings=lambda o: Settings(**{"reports_dir": reports, "state_dir": state_in(tmp_path), **o}),
                      clock=lambda: NOW)  # fmt: skip


def _edit(meta: Path, run_id: str, **scores: int) -> None:
    """Change scores in the critique file as a person would in an editor: the rest of the file left as it was."""
    path = critique_path(meta, run_id)
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["scores"].update(scores)
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")


def _row(tmp_path: Path, run_id: str) -> TrialRow:
    with open_index(tmp_path / "reports" / "meta", trust=trust_in(tmp_path)) as index:  # memory read
        return index.ledger().rows[run_id]


def test_a_score_edited_by_hand_is_honoured_named_by_validate_and_amends_the_ledger_row(tmp_path: Path) -> None:
    meta = tmp_path / "reports" / "meta"
    critique = make_critique(1, scores=(4, 4, 1, 4, 4), applied=(COUNTER,))
    put(meta, critique)
    first = _row(tmp_path, critique.id)
    assert first.scores == (4, 4, 1, 4, 4) and not first.passed and first.edit is None
    _edit(meta, critique.id, coverage=5)  # mean_score 3.4 and overall_pass false left in the file
    loaded = load_critique(critique_path(meta, critique.id))
    assert loaded.mean_score == pytest.approx(4.2) and loaded.overall_pass
    assert loaded.edits == ("edited by hand: mean recomputed (3.40 in the file, 4.20 from the scores), "
                            "verdict changed (fail in the file, pass from the scores)",)  # fmt: skip
    checked = CliRunner().invoke(app, ["validate"], obj=_deps(tmp_path))
    assert checked.exit_code == 0, checked.output
    assert (f"edited   critique-{critique.id}.yaml: edited by hand: mean recomputed (3.40 in the file, 4.20 from "
            "the scores), verdict changed (fail in the file, pass from the scores)") in checked.stdout  # fmt: skip
    assert "1 valid, 0 invalid" in checked.stdout
    row = _row(tmp_path, critique.id)
    assert row.scores == (4, 4, 5, 4, 4) and row.mean == pytest.approx(4.2) and row.passed
    assert row.edit is not None and row.edit.how == "hand" and row.edit.was == (4, 4, 1, 4, 4)
    assert (row.run, row.domain, row.uses, row.kind, row.created) == (first.run, first.domain, first.uses, first.kind,
                                                                     first.created)  # fmt: skip
    shown = CliRunner().invoke(app, ["ledger"], obj=_deps(tmp_path))
    assert shown.exit_code == 0, shown.output
    assert "scores edited by hand since first recorded: coverage 1 \u2192 5 (mean 3.40 \u2192 4.20)" in shown.stdout
    listed = json.loads(CliRunner().invoke(app, ["ledger", "--json"], obj=_deps(tmp_path)).stdout)
    assert listed["rows"][-1]["edit"]["how"] == "hand" and listed["rows"][-1]["edit"]["was"] == [4, 4, 1, 4, 4]
    (effect,) = lesson_effects(meta, now=NOW, state_dir=state_in(tmp_path))
    assert effect.mean_with == pytest.approx(5.0), "the edited coverage is what the lesson's target counts"


def test_an_edit_that_keeps_the_mean_and_verdict_still_reaches_the_ledger_and_an_edit_undone_leaves_none(
    tmp_path: Path,
) -> None:
    meta = tmp_path / "reports" / "meta"
    critique = make_critique(1, scores=(5, 4, 3, 4, 4))
    put(meta, critique)
    _row(tmp_path, critique.id)
    _edit(meta, critique.id, claim_support=3, coverage=4)  # the mean stays 4.0, the verdict pass
    assert load_critique(critique_path(meta, critique.id)).edits == ()  # nothing derived was contradicted
    row = _row(tmp_path, critique.id)
    assert row.scores == (5, 3, 4, 4, 4) and row.edit.was == (5, 4, 3, 4, 4) and row.mean == pytest.approx(4.0)
    _edit(meta, critique.id, claim_support=4, coverage=3)  # back to the scores first recorded
    back = _row(tmp_path, critique.id)
    assert back.scores == (5, 4, 3, 4, 4) and back.edit is None


def test_a_hand_edit_changes_how_a_run_was_judged_never_what_it_was(tmp_path: Path) -> None:
    meta = tmp_path / "reports" / "meta"
    critique = make_critique(1, scores=(4, 4, 2, 4, 4), withheld=(COUNTER,))
    put(meta, critique)
    first = _row(tmp_path, critique.id)
    path = critique_path(meta, critique.id)
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["scores"]["coverage"] = 5
    data["lessons_withheld"] = []  # an edit cannot move the run out of the lesson's arm
    data["lessons_applied"] = [{"text": "x", "key": COUNTER, "stage": "decompose"}]
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    row = _row(tmp_path, critique.id)
    assert row.scores == (4, 4, 5, 4, 4) and row.uses == first.uses and row.kind == first.kind
    (effect,) = lesson_effects(meta, now=NOW, state_dir=state_in(tmp_path))
    assert (effect.applied_runs, effect.baseline_runs) == (0, 1) and effect.mean_without == pytest.approx(5.0)


def test_derived_counts_follow_the_measured_facts(tmp_path: Path) -> None:
    meta = tmp_path / "reports" / "meta"
    critique = make_critique(1)
    path = put(meta, critique)
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["source_count"] = 99
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    loaded = load_critique(path)
    assert loaded.source_count == critique.facts.sources.kept
    assert loaded.edits == (f"edited by hand: source_count recomputed (99 in the file, {critique.facts.sources.kept} "
                            "from facts.sources.kept)",)  # fmt: skip


def test_a_later_critique_of_the_same_run_is_named_as_such_not_as_a_hand_edit(tmp_path: Path) -> None:
    meta = tmp_path / "reports" / "meta"
    critique = make_critique(3, scores=(4, 4, 2, 4, 4))
    put(meta, critique)
    _row(tmp_path, critique.id)
    scores = Scores(**dict(zip(DIMENSIONS, (4, 4, 4, 4, 4), strict=True)))
    again = replace(critique, timestamp=stamp(NOW - timedelta(hours=1)), scores=scores, mean_score=scores.mean,
                    overall_pass=scores.passed)  # `memory retry` or `critique --run` made it anew, two hours on
    put(meta, again)
    row = _row(tmp_path, critique.id)
    assert row.edit is not None and row.edit.how == "critique" and row.scores == (4, 4, 4, 4, 4)
    shown = CliRunner().invoke(app, ["ledger"], obj=_deps(tmp_path))
    assert "scores changed by a later critique since first recorded: coverage 2 \u2192 4" in shown.stdout
