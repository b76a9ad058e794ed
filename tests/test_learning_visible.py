"""What people see of the learning (issue 30, points 4, 6, 7): rejected reports teach nothing,
null scores do not crash the stats, fresh critiques are not blamed on an earlier version, and the
trials are visible in the progress line, the report and ``memory effects``."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from research_agent.cli.memory import app
from research_agent.config import Settings
from research_agent.memory.critique.judgement import critique_run, summarize
from research_agent.memory.effects.stats import compute_stats
from research_agent.memory.lessons.effects_view import lesson_effects
from research_agent.memory.lessons.render import lessons_line, lessons_markdown
from research_agent.memory.lessons.select import select_lessons
from research_agent.memory.lessons.types import Lesson, LessonSelection
from research_agent.memory.store.critique_types import WithheldLesson
from research_agent.memory.store.files import load_all, load_critique
from research_agent.memory.store.schema import validate_critique
from tests.conftest import ScriptedModel
from tests.support.critique import ANSWER, make_record
from tests.support.memory import NOW, make_critique, put, put_raw
from tests.support.memory_cli import deps_for

COUNTER = "counterarguments:missing"
REJECTED = {"status": "rejected", "open_critical": 2, "reasons": ["a claim without support"]}


def invoke(args: list[str], reports: Path):
    return CliRunner().invoke(app, args, obj=deps_for(reports), env={"COLUMNS": "200"})


async def test_a_rejected_reports_critique_never_passes_and_builds_no_lesson(tmp_path: Path) -> None:
    path = make_record(tmp_path, review=REJECTED)
    model = ScriptedModel()
    model.enqueue("critique", ANSWER)  # scores that pass: mean 3.0, none below 2
    critique = await critique_run(path, model, settings=Settings(), now=NOW)
    assert critique.review == "rejected" and critique.overall_pass is False and critique.mean_score == 3.0
    assert critique.fail_reason == "report rejected by its own review"
    assert "(fail: report rejected by its own review)" in summarize(critique)
    meta = tmp_path / "reports" / "meta"
    loaded = load_critique(meta / f"critique-{critique.id}.yaml")
    assert loaded.review == "rejected" and not loaded.overall_pass
    data = yaml.safe_load((meta / f"critique-{critique.id}.yaml").read_text(encoding="utf-8"))
    assert data["review"] == "rejected" and validate_critique(data) == []
    assert validate_critique({**data, "overall_pass": True}) == []  # a derived value is not checked: recomputed
    put_raw(meta, critique, overall_pass=True)  # a hand edit cannot make a rejected report's critique pass
    edited = load_critique(meta / f"critique-{critique.id}.yaml")
    assert not edited.overall_pass and edited.edits == (
        "edited by hand: overall_pass recomputed from the scores, verdict changed (pass in the file, fail from the scores)",
    )
    listed = invoke(["list"], tmp_path / "reports")
    assert "no: report rejected by its" in listed.stdout
    rows = json.loads(invoke(["list", "--json"], tmp_path / "reports").stdout)
    assert rows["critiques"][0]["not_passed"] == "report rejected by its own review"


def test_rejected_critiques_teach_nothing_but_count_in_every_effect(tmp_path: Path) -> None:
    def rejected(n: int, **kw):
        critique = make_critique(n, tags=("missing_counterarguments",), **kw)
        return replace(critique, review="rejected", overall_pass=False)

    for n in range(5):
        put(tmp_path, rejected(n))
    selection = select_lessons(tmp_path, "technology", now=NOW, rng=__import__("random").Random(0))
    assert selection.lessons == () and selection.considered == ()
    assert "rejected by its own review" in dict(selection.excluded).values()  # not "failing (mean 4.00)"
    # a lesson whose runs get their reports rejected must show it: those runs still count
    for n in range(10, 13):
        put(tmp_path, rejected(n, applied=(COUNTER,), scores=(2, 3, 3, 3, 3)))
    (effect,) = [e for e in lesson_effects(tmp_path, now=NOW) if e.key == COUNTER]
    assert effect.applied_runs == 3 and effect.score.mean_with == pytest.approx(2.8)


def test_memory_stats_with_null_scores(tmp_path: Path) -> None:
    """A database manual's critiques: geographic balance does not apply to any of them."""
    reports = tmp_path / "reports"
    for n in range(6):
        put(reports / "meta", make_critique(n, scores=(4, 3 + n % 2, 4, None, 4)))
    stats = compute_stats(load_all(reports / "meta"))
    (trend,) = [t for t in stats.domains[0].trends if t.dimension == "geographic_balance"]
    assert (trend.mean, trend.earlier, trend.recent, trend.delta) == (None, None, None, None)
    shown = invoke(["stats"], reports)
    assert shown.exit_code == 0, shown.output
    assert "n/a" in shown.stdout and "Traceback" not in shown.output
    as_json = json.loads(invoke(["stats", "--json"], reports).stdout)
    assert as_json["domains"][0]["dimensions"]["geographic_balance"]["mean"] is None


async def test_memory_validate_does_not_blame_the_tools_own_fresh_critiques(tmp_path: Path) -> None:
    path = make_record(tmp_path)
    model = ScriptedModel()
    answer = {**ANSWER, "scores": {**ANSWER["scores"], "geographic_balance": 4}, "tags": ["geographic_bias"]}
    model.enqueue("critique", answer)
    critique = await critique_run(path, model, settings=Settings(), now=NOW)
    assert "geographic_bias" not in critique.tags  # the writer agrees with the reader: a score of 4 speaks
    meta = tmp_path / "reports" / "meta"
    assert load_critique(meta / f"critique-{critique.id}.yaml").load_notes == ()
    shown = invoke(["validate"], tmp_path / "reports")
    assert "earlier version" not in shown.stdout and "geographic_bias dropped" not in shown.stdout
    # a file an earlier version wrote with the tag beside a 4 still loads, and is named
    old = make_critique(1, scores=(4, 4, 4, 4, 4))
    put_raw(meta, old, tags=["geographic_bias"])
    shown = invoke(["validate"], tmp_path / "reports")
    assert "tag geographic_bias dropped: geographic balance scored 4" in shown.stdout


def _lesson(key: str) -> Lesson:
    return Lesson(key, "decompose", "scores.coverage", f"Text of {key}.", ("x_20261122T000000000000Z",), p=0.5)


def test_the_progress_line_says_what_the_run_got() -> None:
    given = LessonSelection("technology", (_lesson("a:x"), _lesson("b:x"), _lesson("c:x")), True, "",
                            withheld=(WithheldLesson("d:x", "trial", 0.5), WithheldLesson("e:x", "retired")))  # fmt: skip
    assert lessons_line(given) == "lessons: 3 given, 1 withheld for its trial"
    control = LessonSelection("technology", (), False, "", withheld=(WithheldLesson("a:x", "control"),))
    assert lessons_line(control) == "control run: no lessons, to measure whether they help"
    assert lessons_line(LessonSelection("technology", (), False, "no lessons yet")) == ""
    suspended = LessonSelection("technology", (), False, "", withheld=(WithheldLesson("a:x", "suspended"),))
    assert lessons_line(suspended).startswith("no lessons: this domain's lessons are suspended")


def test_lessons_applied_names_the_lessons_withheld_for_their_trial_and_a_control_run() -> None:
    given = LessonSelection("technology", (_lesson("coverage:x"),), True, "",
                            withheld=(WithheldLesson("primary:evidence", "trial", 0.5),))  # fmt: skip
    markdown = lessons_markdown(given)
    assert markdown.startswith("## Lessons Applied\n\nThis run used lessons drawn from critiques")
    assert markdown.endswith(
        "Withheld for their trial (each lesson is left out of some runs at random, to measure it): "
        "`primary:evidence`.\n"
    )
    control = LessonSelection("technology", (), False, "", withheld=(WithheldLesson(COUNTER, "control"),))
    assert "This run was a control run: it was given none of the 1 lesson(s)" in lessons_markdown(control)
    off = LessonSelection("technology", (), False, "", withheld=(WithheldLesson(COUNTER, "no_lessons"),))
    assert lessons_markdown(off) == "", "the user turned lessons off: nothing to report"


def test_memory_effects_shows_helpful_apart_from_active_with_the_runs_to_a_decision(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    for n in range(14):
        put(reports / "meta", make_critique(n, applied=(COUNTER,), scores=(5, 4, 5, 4, 5 - n % 2), query=f"q{n % 4}"))
        put(reports / "meta", make_critique(40 + n, withheld=(COUNTER,), scores=(3, 3, 4, 3, 3 + n % 2),
                                            query=f"q{n % 4}"))  # fmt: skip
    shown = invoke(["effects"], reports)
    assert shown.exit_code == 0, shown.output
    assert "counterarguments:missing: helpful (proven to help; still withheld now and then" in shown.stdout
    assert "    helpful on run " in shown.stdout and "mean score 4.50 with, 3.30 without" in shown.stdout
    (effect,) = json.loads(invoke(["effects", "--json"], reports).stdout)
    assert effect["status"] == "helpful" and effect["decided_after"] >= 10
    assert effect["decided_on"] in ("scores.coverage", "mean_score")
