"""``research-agent eval run`` and ``eval compare`` end to end on the fake endpoint: the built-in world
through the real CLI, a writer that invents caught and a faithful one not, rounds with a holdout that
say "no significant change" when the endpoint ignores lessons, a comparison, and an eval continued."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from research_agent.cli.eval import app
from research_agent.errors import InvalidModelOutput
from research_agent.llm import ChatRequest
from research_agent.record import read_run_record
from tests.support.batch import batch_deps
from tests.support.cli import cli
from tests.support.eval_writers import CopyingResponder, InventingResponder
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.responder_model import ResponderModel

SUMMARY_FIELDS = {"fact_recall", "cited_precision", "stale", "unsupported_per_report", "words", "tokens", "cost_usd",
                  "calls", "wall_seconds"}  # fmt: skip


def _eval(tmp_path: Path, model: ResponderModel, *args: str):
    result = CliRunner().invoke(app, ["run", "--json", *args], obj=batch_deps(tmp_path, model))
    return result, (json.loads(result.stdout) if result.stdout.strip() else {})


def _written(data: dict) -> list[dict]:
    """The reports a writer wrote: "its reports" (a run whose gate found too little publishes the tool's
    own short report, in which no writer could invent anything)."""
    return [q for q in data["questions"] if q["graded"] and read_run_record(
        Path(q["report"]).parent / "meta" / f"run-{q['run_id']}.yaml").gate_decision in ("full_report", "short_report")]


def test_an_eval_of_the_built_in_world_runs_end_to_end_against_the_fake_endpoint(tmp_path: Path) -> None:
    with FakeOpenAIServer(CopyingResponder()) as server:
        done = cli(tmp_path, "eval", "run", "--json", "--parallel", "4", "--reports-dir", str(tmp_path / "reports"),
                   base_url=server.base_url, env={"OPENAI_API_KEY": "x"})  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["id"].startswith("builtin-42-") and data["status"] == "finished"
    assert set(data["summary"]) >= SUMMARY_FIELDS and data["summary"]["fact_recall"] > 0.5
    assert data["summary"]["cited_precision"] >= 0.9 and data["summary"]["unsupported_per_report"] == 0
    assert data["summary"]["calls"] > 0 and data["summary"]["tokens"] > 0
    assert len(data["questions"]) == data["world"]["questions"] >= 15
    for q in data["questions"]:
        assert {"id", "question", "report", "checkpoints", "stale", "unsupported"} <= set(q) and Path(q["report"]).is_file()
        assert all(set(c) == {"id", "answer", "found", "cited"} for c in q["checkpoints"])
    reports = tmp_path / "reports"
    markdown = (reports / f"eval-{data['id']}.md").read_text(encoding="utf-8")
    assert all(f"[report](<{Path(q['report']).name}>)" in markdown for q in data["questions"])
    assert all(f'href="{Path(q["report"]).name}"' in (reports / f"eval-{data['id']}.html").read_text(encoding="utf-8")
               for q in data["questions"])  # fmt: skip
    stored = json.loads((reports / f"eval-{data['id']}.json").read_text(encoding="utf-8"))
    assert stored == {k: v for k, v in data.items() if k != "pages"}
    state = yaml.safe_load((reports / "meta" / f"eval-{data['id']}.yaml").read_text(encoding="utf-8"))
    assert state["status"] == "finished" and len(state["questions"]) == len(data["questions"])
    assert sum(1 for line in done.stderr.splitlines() if line.startswith("[") and "found" in line) >= 15


def test_a_writer_that_invents_is_caught_and_a_faithful_writer_is_not(tmp_path: Path) -> None:
    inventing, data = _eval(tmp_path / "a", ResponderModel(InventingResponder()), "--no-critique")
    assert inventing.exit_code == 0, inventing.output
    written = _written(data)
    caught = [q for q in written if q["unsupported"]]
    assert len(written) >= 12 and len(caught) / len(written) >= 0.8
    assert any(u["token"] == "2031" and "2031" in u["sentence"] for q in caught for u in q["unsupported"])
    for seed in ("42", "5"):
        faithful, data = _eval(tmp_path / seed, ResponderModel(CopyingResponder()), "--no-critique", "--seed", seed)
        assert faithful.exit_code == 0, faithful.output
        flagged = [q for q in data["questions"] if q["unsupported"]]
        assert len(flagged) / len(data["questions"]) <= 0.2, [q["unsupported"] for q in flagged]


def test_rounds_with_a_holdout_report_each_round_and_no_significant_change_when_lessons_change_nothing(
    tmp_path: Path,
) -> None:
    result, data = _eval(tmp_path, ResponderModel(CopyingResponder()), "--rounds", "3", "--holdout", "--limit", "10")
    assert result.exit_code == 0, result.output
    rounds = data["rounds"]
    assert [r["round"] for r in rounds] == [1, 2, 3] and len({r["fact_recall"] for r in rounds}) == 1
    third = rounds[2]["vs_round_1"]
    assert third["delta"] == 0 and third["interval"][0] < 0 < third["interval"][1]
    assert third["words"].startswith("no significant change in fact recall: round 3 vs round 1 +0.00 [−0.")
    assert third["words"] in (tmp_path / "reports" / f"eval-{data['id']}.html").read_text(encoding="utf-8")
    measured = {q["run_id"] for q in data["questions"] if q["half"] == "measured"}
    assert len(measured) == 3 * 5 and {q["half"] for q in data["questions"]} == {"learning", "measured"}
    meta = tmp_path / "reports" / "meta"
    for path in meta.glob("critique-*.yaml"):
        critique = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert (critique.get("held_out") == data["id"]) == (critique["id"] in measured)
    built_from = {i for q in data["questions"] for a in read_run_record(meta / f"run-{q['run_id']}.yaml").lessons.applied
                  for i in a.critique_ids}  # fmt: skip
    assert built_from and not built_from & measured, "no lesson is built from the measured half"
    assert any(rounds[n]["lessons"] for n in (1, 2)), "later rounds are given the lessons"


def test_two_evals_of_one_world_compare_question_by_question(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    _, first = _eval(tmp_path, ResponderModel(CopyingResponder()), "--limit", "6", "--no-critique")
    _, second = _eval(tmp_path, ResponderModel(InventingResponder()), "--limit", "6", "--no-critique")
    result = CliRunner().invoke(app, ["compare", first["id"], second["id"], "--reports-dir", str(reports), "--json"])
    assert result.exit_code == 0, result.output
    measures = {m["measure"]: m for m in json.loads(result.stdout)["measures"]}
    assert measures["fact_recall"]["delta"] == 0 and measures["fact_recall"]["words"].startswith(
        "no significant change in fact recall: B vs A +0.00")
    assert measures["unsupported"]["delta"] > 0 and measures["unsupported"]["words"].startswith(
        "unsupported names and numbers a report rose: B vs A +")
    plain = CliRunner().invoke(app, ["compare", first["id"], str(reports / f"eval-{second['id']}.json"),
                                     "--reports-dir", str(reports)])  # fmt: skip
    assert plain.exit_code == 0 and f"A: {first['id']}" in plain.stdout and "rose" in plain.stdout
    _, other = _eval(tmp_path, ResponderModel(CopyingResponder()), "--limit", "2", "--no-critique", "--seed", "9")
    refused = CliRunner().invoke(app, ["compare", first["id"], other["id"], "--reports-dir", str(reports)])
    assert refused.exit_code == 2 and "not of the same world" in refused.stderr


def test_an_eval_that_stopped_continues_with_only_the_runs_it_lacks(tmp_path: Path) -> None:
    def failing_writer(request: ChatRequest) -> None:
        if request.stage == "draft" and "Jestjae" in request.user:
            raise InvalidModelOutput("the writer cannot answer", stage="draft")

    first, data = _eval(tmp_path, ResponderModel(CopyingResponder(), before=failing_writer), "--limit", "3",
                        "--no-critique")  # fmt: skip
    assert first.exit_code == 1 and data["summary"]["failed"] == 1
    assert data["status"] == "finished", "it ran to its end: one run failed, none is left to run"
    second_model = ResponderModel(CopyingResponder())
    again, resumed = _eval(tmp_path, second_model, "--limit", "3", "--no-critique")
    assert again.exit_code == 0 and resumed["id"] == data["id"] and resumed["summary"]["failed"] == 0
    asked = {r.user.split("Question: ", 1)[-1].split("\n", 1)[0] for r in second_model.calls("draft")}
    assert asked == {next(q["question"] for q in data["questions"] if q["status"] == "failed")}


@pytest.mark.usefixtures("default_sigint")  # a suite started in the background inherits SIGINT ignored
def test_ctrl_c_stops_the_eval_keeps_what_finished_and_writes_its_pages(tmp_path: Path) -> None:
    def stop_at_the_third(request: ChatRequest) -> None:
        if request.stage == "decompose" and "Zoutroun" in request.user:
            os.kill(os.getpid(), signal.SIGINT)

    stopped, _ = _eval(tmp_path, ResponderModel(CopyingResponder(), before=stop_at_the_third), "--limit", "4",
                       "--parallel", "1", "--no-critique")  # fmt: skip
    assert stopped.exit_code == 130
    [state_path] = (tmp_path / "reports" / "meta").glob("eval-*.yaml")
    state = yaml.safe_load(state_path.read_text(encoding="utf-8"))
    assert [q["state"] for q in state["questions"]] == ["done", "done", "pending", "pending"]
    assert f"continue with: research-agent eval run --resume {state['id']}" in stopped.stderr
    page = json.loads((tmp_path / "reports" / f"eval-{state['id']}.json").read_text(encoding="utf-8"))
    assert page["status"] == "stopped" and page["summary"]["reports"] == 2 and page["summary"]["not_run"] == 2
    model = ResponderModel(CopyingResponder())
    again, resumed = _eval(tmp_path, model, "--resume", state["id"])  # its options kept: --limit 4, no critique
    assert again.exit_code == 0 and resumed["id"] == state["id"] and resumed["summary"]["reports"] == 4
    assert len(model.calls("draft")) == 2 and not model.calls("critique")


def _stopped_eval_of(tmp_path: Path, world: Path) -> tuple[Path, dict]:
    """An eval of ``world`` stopped before any question ran (its state written, signed, as the tool writes it)."""
    def stop_at_once(request: ChatRequest) -> None:
        os.kill(os.getpid(), signal.SIGINT)

    stopped, _ = _eval(tmp_path, ResponderModel(CopyingResponder(), before=stop_at_once), str(world), "--limit", "2",
                       "--parallel", "1", "--no-critique")  # fmt: skip
    assert stopped.exit_code == 130, stopped.output
    [state_path] = (tmp_path / "reports" / "meta").glob("eval-*.yaml")
    return state_path, yaml.safe_load(state_path.read_text(encoding="utf-8"))


@pytest.mark.usefixtures("default_sigint")
def test_a_planted_eval_state_cannot_make_a_resume_read_another_world(tmp_path: Path) -> None:
    from research_agent.eval.world import write_world

    mine, theirs = write_world(tmp_path / "mine", 7), write_world(tmp_path / "theirs", 8)
    state_path, state = _stopped_eval_of(tmp_path, mine)
    text = state_path.read_text(encoding="utf-8").replace(str(mine), str(theirs))
    state_path.write_text(text, encoding="utf-8")  # someone else's file names another folder
    model = ResponderModel(CopyingResponder())
    refused, _ = _eval(tmp_path, model, "--resume", state["id"])
    assert refused.exit_code == 2 and "does not match" in refused.stderr and "WORLD_DIR" in refused.stderr
    assert not model.calls("decompose") and not model.calls("draft")
    again, resumed = _eval(tmp_path, model, str(mine), "--resume", state["id"])  # the folder given again: it runs
    assert again.exit_code == 0 and resumed["summary"]["reports"] == 2


@pytest.mark.usefixtures("default_sigint")
def test_a_planted_built_in_eval_state_writes_its_world_only_into_the_cache(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    def stop_at_once(request: ChatRequest) -> None:
        os.kill(os.getpid(), signal.SIGINT)

    stopped, _ = _eval(tmp_path, ResponderModel(CopyingResponder(), before=stop_at_once), "--limit", "1",
                       "--parallel", "1", "--no-critique")  # fmt: skip
    assert stopped.exit_code == 130
    [state_path] = (tmp_path / "reports" / "meta").glob("eval-*.yaml")
    state = yaml.safe_load(state_path.read_text(encoding="utf-8"))
    state_path.write_text(state_path.read_text(encoding="utf-8").replace(state["file"], str(victim)), encoding="utf-8")
    again, resumed = _eval(tmp_path, ResponderModel(CopyingResponder()), "--resume", state["id"])
    assert again.exit_code == 0 and resumed["summary"]["reports"] == 1
    assert list(victim.iterdir()) == [], "nothing is written where a stored state points"
