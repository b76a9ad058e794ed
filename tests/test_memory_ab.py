"""``memory ab QUESTIONS.txt``: both arms of every question run, critiqued, measured and saved."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from research_agent.cli.memory import app
from research_agent.errors import InvalidModelOutput, LLMUnavailable
from research_agent.files.atomic import TEMP_SUFFIX
from research_agent.memory.store.files import load_critique
from research_agent.memory.store.schema import DIMENSIONS
from research_agent.record import read_run_record
from tests.support.ab import QUESTIONS, ab_deps, run_ab_command, saved_ab
from tests.support.memory import make_critique, put
from tests.support.research_responder import ResearchResponder
from tests.support.responder_model import ResponderModel, on_call

FACTS = {"citations.weakly_supported_share", "unanswered", "sites.distinct"}


def ab(tmp_path, corpus, model, *args, **kwargs):
    return run_ab_command(tmp_path, corpus, model, *args, **kwargs)


def saved(tmp_path):
    return saved_ab(tmp_path / "reports")


def seed_counterargument_critiques(meta: Path, count: int = 4) -> None:
    for n in range(count):
        put(meta, make_critique(n, tags=("missing_counterarguments",)))


def test_two_questions_make_two_pairs_both_critiqued_and_saved_with_their_measures(tmp_path, corpus):
    model = ResponderModel(ResearchResponder())
    result = ab(tmp_path, corpus, model)
    assert result.exit_code == 0, result.output
    path, data = saved(tmp_path)
    assert path.read_text().startswith("# research-agent learning A/B")
    assert data["complete"] is True and data["questions"] == 2 and data["mode"] == "standard"
    assert [p["question"] for p in data["pairs"]] == list(QUESTIONS)
    assert [p["first"] for p in data["pairs"]] == ["baseline", "adaptive"], "the arm that runs first alternates"
    meta = tmp_path / "reports" / "meta"
    for pair in data["pairs"]:
        assert pair["baseline"]["run_id"] != pair["adaptive"]["run_id"]
        for arm in ("baseline", "adaptive"):
            critique = load_critique(meta / f"critique-{pair[arm]['run_id']}.yaml")
            assert critique.scores.as_dict() == pair[arm]["scores"]
            assert pair[arm]["usage"]["run_tokens"] > 0 and pair[arm]["usage"]["critique_tokens"] > 0
    assert len(model.calls("critique")) == 4
    assert set(data["dimensions"]) == set(DIMENSIONS)
    assert all(m["n"] == 2 and m["delta"] == 0 and m["interval"][0] < 0 < m["interval"][1]
               for m in data["dimensions"].values())  # the same scores in both arms: still not zero width
    assert set(data["facts"]) == FACTS
    assert data["usage"]["baseline"]["tokens"] > 0 and data["usage"]["adaptive"]["cost_usd"] == 0
    # progress per question on stderr; the table and the saved path on stdout
    for line in ("question 1/2 · baseline run", "question 1/2 · critiques", "question 2/2 · adaptive run",
                 "question 2/2 done"):
        assert line in result.stderr
    assert "geographic balance" in result.stdout and f"saved to {path}" in result.stdout.replace("\n", "")
    assert "no adaptive run was given lessons" in result.stderr  # no critiques yet: both arms were baselines


def test_the_adaptive_arm_is_never_a_control_run_and_the_baseline_always_is(tmp_path, corpus):
    seed_counterargument_critiques(tmp_path / "reports" / "meta")
    model = ResponderModel(ResearchResponder())
    result = ab(tmp_path, corpus, model, control_fraction=1.0)  # a normal run here would always be a control run
    assert result.exit_code == 0, result.output
    _, data = saved(tmp_path)
    meta = tmp_path / "reports" / "meta"
    for pair in data["pairs"]:
        assert pair["adaptive"]["lessons"] and "lesson(s) from" in pair["adaptive"]["lessons_reason"]
        assert pair["baseline"]["lessons"] == [] and "--no-lessons" in pair["baseline"]["lessons_reason"]
        adaptive = read_run_record(meta / f"run-{pair['adaptive']['run_id']}.yaml")
        baseline = read_run_record(meta / f"run-{pair['baseline']['run_id']}.yaml")
        assert adaptive.lessons.adaptive and not baseline.lessons.adaptive
        assert load_critique(meta / f"critique-{pair['adaptive']['run_id']}.yaml").adaptive
    assert "no adaptive run was given lessons" not in result.stderr


def test_json_prints_only_one_object_with_pairs_dimensions_and_facts(tmp_path, corpus):
    result = ab(tmp_path, corpus, ResponderModel(ResearchResponder()), "--json", "--quick")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert len(data["pairs"]) == 2 and data["mode"] == "quick"
    assert set(data["dimensions"]) == set(DIMENSIONS) and set(data["facts"]) == FACTS
    for measure in [*data["dimensions"].values(), *data["facts"].values(), *data["overall"].values()]:
        assert {"baseline", "adaptive", "delta", "interval"} <= set(measure)
    assert Path(data["path"]) == saved(tmp_path)[0]
    assert "question 2/2 done" in result.stderr


def test_an_unknown_price_is_cost_unknown_never_zero(tmp_path, corpus):
    model = ResponderModel(ResearchResponder(), cost_usd=None)
    result = ab(tmp_path, corpus, model, "--quick")
    assert result.exit_code == 0, result.output
    assert "cost unknown" in result.stdout and "$" not in result.stdout
    _, data = saved(tmp_path)
    assert data["usage"]["baseline"]["cost_usd"] is None and data["usage"]["adaptive"]["cost_usd"] is None
    assert all(p[arm]["usage"]["cost_usd"] is None for p in data["pairs"] for arm in ("baseline", "adaptive"))


def _binary(path: Path) -> None:
    path.write_bytes(b"How does VACUUM work?\n\x00\x01\x02\x00" * 50)


@pytest.mark.parametrize(
    ("write", "message"),
    [
        (lambda p: p.write_text("# only comments\n\n   \n# and blanks\n"), "no questions"),
        (lambda p: p.write_text(""), "no questions"),
        (_binary, "binary data"),
        (lambda p: p.write_bytes(b"caf\xe9 questions\n"), "not a text file (not UTF-8"),
        (lambda p: p.write_text("What is VACUUM?\n" * 70_000), "too large"),
        (lambda p: p.write_text("".join(f"Question {n}?\n" for n in range(201))), "more than 200 questions"),
        (lambda p: p.write_text("ok?\n" + "x" * 2001 + "\n"), "line 2 is 2001 characters long"),
        (lambda p: p.mkdir(), "not a regular file"),
        (lambda p: None, "file not found"),
    ],
    ids=["comments", "empty", "binary", "latin1", "huge", "too-many", "long-line", "folder", "missing"],
)
def test_a_bad_questions_file_fails_in_one_line_before_any_model_call(tmp_path, corpus, write, message):
    path = tmp_path / "questions.txt"
    write(path)
    model = ResponderModel(ResearchResponder())
    result = ab(tmp_path, corpus, model, questions=path)
    assert result.exit_code == 2, result.output
    assert message in result.stderr and result.stderr.startswith("error: questions file")
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.output
    assert model.requests == []
    assert not (tmp_path / "reports").exists()


@pytest.mark.usefixtures("default_sigint")
def test_ctrl_c_after_the_first_pair_keeps_it_saved_and_summarised(tmp_path, corpus):
    # The third first-plan (decompose) call starts question 2's first run: Ctrl-C arrives right there.
    model = ResponderModel(ResearchResponder(), before=on_call("decompose", 3, lambda: signal.raise_signal(signal.SIGINT)))
    result = ab(tmp_path, corpus, model, "--json")
    assert result.exit_code == 130, result.output
    assert "interrupted: kept 1 finished pair(s); saved to" in result.stderr
    path, data = saved(tmp_path)
    assert data["complete"] is False and data["questions"] == 2
    assert [p["question"] for p in data["pairs"]] == [QUESTIONS[0]]
    assert json.loads(result.stdout)["pairs"] == data["pairs"]
    assert not [p for p in path.parent.iterdir() if p.name.endswith(TEMP_SUFFIX)], "no half-written file"
    assert len(model.calls("critique")) == 2


@pytest.mark.usefixtures("default_sigint")
def test_ctrl_c_before_any_pair_finished_writes_no_ab_file(tmp_path, corpus):
    model = ResponderModel(ResearchResponder(), before=on_call("decompose", 1, lambda: signal.raise_signal(signal.SIGINT)))
    result = ab(tmp_path, corpus, model)
    assert result.exit_code == 130, result.output
    assert "interrupted: kept 0 finished pair(s)" in result.stderr
    assert not [p for p in (tmp_path / "reports" / "meta").iterdir() if p.name.startswith("ab-")]


def test_an_error_that_stops_the_ab_keeps_the_finished_pairs_and_exits_with_its_code(tmp_path, corpus):
    def endpoint_gone():
        raise LLMUnavailable("cannot reach the model endpoint")

    # a stage that degrades (decompose, the skeptic) goes on without the endpoint; the draft cannot
    model = ResponderModel(ResearchResponder(), before=on_call("draft", 3, endpoint_gone))
    result = ab(tmp_path, corpus, model)
    assert result.exit_code == 3, result.output
    assert "stopped after 1 finished pair(s) of 2" in result.stderr
    assert result.stderr.strip().splitlines()[-1] == "error: cannot reach the model endpoint"
    _, data = saved(tmp_path)
    assert data["complete"] is False and len(data["pairs"]) == 1


def test_a_question_that_fails_on_its_own_is_recorded_and_the_ab_goes_on(tmp_path, corpus):
    def bad_draft():
        raise InvalidModelOutput("the draft stage got invalid output", stage="draft")

    model = ResponderModel(ResearchResponder(), before=on_call("draft", 1, bad_draft))
    result = ab(tmp_path, corpus, model)
    assert result.exit_code == 0, result.output
    _, data = saved(tmp_path)
    assert data["complete"] is True
    assert data["failed"] == [{"index": 1, "question": QUESTIONS[0], "error": "the draft stage got invalid output"}]
    assert [p["question"] for p in data["pairs"]] == [QUESTIONS[1]]
    assert "question 1/2 failed" in result.stderr and "1 question(s) failed" in result.stderr


def test_options_mean_what_they_mean_for_run(tmp_path, corpus):
    model = ResponderModel(ResearchResponder())
    result = ab(tmp_path, corpus, model, "--quick", "--deep")
    assert result.exit_code == 2 and "choose one of --quick, --standard, --deep" in result.stderr
    other = tmp_path / "elsewhere"
    result = ab(tmp_path, corpus, model, "--quick", "--reports-dir", str(other), "--max-sources", "2")
    assert result.exit_code == 0, result.output
    [path] = (other / "meta").glob("ab-*.yaml")
    record = read_run_record(other / "meta" / f"run-{yaml.safe_load(path.read_text())['pairs'][0]['adaptive']['run_id']}.yaml")
    assert record.mode == "quick" and len([s for s in record.sources if s.status != "unscored"]) <= 2
    assert not (tmp_path / "reports").exists()


def test_the_memory_groups_reports_dir_is_used_too(tmp_path, corpus):
    group = tmp_path / "group-reports"
    questions = tmp_path / "questions.txt"
    questions.write_text(QUESTIONS[0] + "\n", encoding="utf-8")
    deps = ab_deps(tmp_path, ResponderModel(ResearchResponder()))
    args = ["--reports-dir", str(group), "ab", str(questions), "--corpus", str(corpus), "--quick"]
    result = CliRunner().invoke(app, args, obj=deps)
    assert result.exit_code == 0, result.output
    assert len(saved_ab(group)[1]["pairs"]) == 1 and not (tmp_path / "reports").exists()


def test_no_finished_pair_is_cost_unknown_never_zero(tmp_path, corpus):
    # issue 32: both questions failed, and the usage lines said "0 tokens, ~$0.0000"
    def fail() -> None:
        raise InvalidModelOutput("the draft answer had no paragraph", stage="draft")

    model = ResponderModel(ResearchResponder(), before=lambda request: fail() if request.stage == "draft" else None)
    result = ab(tmp_path, corpus, model, "--quick")
    assert result.exit_code == 1 and "no question has a complete pair (2 failed)" in result.output
    assert "baseline: 0 tokens (0 in runs, 0 in critiques), cost unknown" in result.stdout and "$" not in result.stdout
