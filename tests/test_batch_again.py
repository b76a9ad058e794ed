"""Issue 43 point 7: a batch whose every question is done costs nothing unless asked (``--again``),
a configuration failure stops the batch at once as it stops ``run``, and the resume hint a
stopped batch prints works as printed."""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import signal
from pathlib import Path

import pytest

from research_agent.errors import ConfigError, EndpointUnreachable
from research_agent.llm import ChatRequest
from tests.support.batch import QUESTIONS, asked, batch_deps, questions_file, run_batch, saved_state
from tests.support.pipeline import write_docs
from tests.support.research_responder import ResearchResponder
from tests.support.responder_model import ResponderModel


def _first_batch(tmp_path: Path) -> tuple[Path, Path]:
    corpus = write_docs(tmp_path / "corpus")
    asked_file = questions_file(tmp_path, *QUESTIONS[:2])
    done = run_batch(tmp_path, batch_deps(tmp_path, ResponderModel(ResearchResponder())), str(asked_file),
                     "--corpus", str(corpus))  # fmt: skip
    assert done.exit_code == 0, done.output
    return asked_file, corpus


def test_a_batch_whose_questions_are_all_done_has_nothing_to_do_and_calls_nothing(tmp_path: Path) -> None:
    asked_file, corpus = _first_batch(tmp_path)
    path, before = saved_state(tmp_path / "reports")
    unchanged = path.read_text(encoding="utf-8")
    model = ResponderModel(ResearchResponder())
    again = run_batch(tmp_path, batch_deps(tmp_path, model), str(asked_file), "--corpus", str(corpus), "--json")
    assert again.exit_code == 0, again.output
    assert model.requests == [], "a finished batch costs no call"
    data = json.loads(again.stdout)
    assert data["nothing_to_do"] is True and data["id"] == before["id"] and data["totals"]["done"] == 2
    assert "nothing to do: the 2 question(s) of batch" in again.stderr and "--again" in again.stderr
    assert path.read_text(encoding="utf-8") == unchanged, "nothing is written"
    by_id = run_batch(tmp_path, batch_deps(tmp_path, model), "--resume", before["id"])
    assert by_id.exit_code == 0 and "nothing to do" in by_id.stderr and model.requests == []


def test_again_researches_every_question_in_a_new_batch(tmp_path: Path) -> None:
    asked_file, corpus = _first_batch(tmp_path)
    model = ResponderModel(ResearchResponder())
    again = run_batch(tmp_path, batch_deps(tmp_path, model), str(asked_file), "--corpus", str(corpus), "--again",
                      "--json")  # fmt: skip
    assert again.exit_code == 0, again.output
    assert asked(model, QUESTIONS[0]) > 0 and asked(model, QUESTIONS[1]) > 0
    assert len(list((tmp_path / "reports" / "meta").glob("batch-*.yaml"))) == 2
    refused = run_batch(tmp_path, batch_deps(tmp_path, model), "--resume", json.loads(again.stdout)["id"], "--again")
    assert refused.exit_code == 2 and "--again researches a questions FILE anew" in refused.stderr


def test_a_file_with_a_new_question_runs_only_that_one(tmp_path: Path) -> None:
    asked_file, corpus = _first_batch(tmp_path)
    asked_file.write_text("\n".join(QUESTIONS[:3]) + "\n", encoding="utf-8")
    model = ResponderModel(ResearchResponder())
    again = run_batch(tmp_path, batch_deps(tmp_path, model), str(asked_file), "--corpus", str(corpus))
    assert again.exit_code == 0, again.output
    assert asked(model, QUESTIONS[0]) == 0 and asked(model, QUESTIONS[1]) == 0 and asked(model, QUESTIONS[2]) > 0


@pytest.mark.parametrize(
    "failure",
    [EndpointUnreachable("cannot reach the model endpoint at http://127.0.0.1:9/v1 (connection refused)"),
     ConfigError("the model endpoint refused the API key (HTTP 401)")],
    ids=["unreachable", "key refused"],
)  # fmt: skip
def test_a_configuration_failure_stops_the_batch_at_once(tmp_path: Path, failure: Exception) -> None:
    def fail(request: ChatRequest) -> None:
        raise failure

    model = ResponderModel(ResearchResponder(), before=fail)
    corpus = write_docs(tmp_path / "corpus")
    asked_file = questions_file(tmp_path, *QUESTIONS)
    result = run_batch(tmp_path, batch_deps(tmp_path, model), str(asked_file), "--corpus", str(corpus),
                       "--parallel", "1")  # fmt: skip
    assert result.exit_code == failure.exit_code, result.output  # type: ignore[attr-defined]
    assert result.stderr.splitlines()[-1] == f"error: {failure}"
    assert len(model.requests) == 1, "one call, not every question's attempts"
    _, state = saved_state(tmp_path / "reports")
    assert state["status"] == "stopped" and {q["state"] for q in state["questions"]} == {"pending"}
    assert all(q["attempts"] == 0 for q in state["questions"])


def test_a_dead_endpoint_stops_the_batch_at_its_first_call(tmp_path: Path) -> None:
    deps = dataclasses.replace(batch_deps(tmp_path, None, base_url="http://127.0.0.1:9/v1", api_key="k"), make_model=None)
    corpus = write_docs(tmp_path / "corpus")
    asked_file = questions_file(tmp_path, *QUESTIONS)
    result = run_batch(tmp_path, deps, str(asked_file), "--corpus", str(corpus), "--parallel", "1", "--model", "m")
    assert result.exit_code == 3, result.output
    assert "cannot reach the model endpoint at http://127.0.0.1:9/v1" in result.stderr
    _, state = saved_state(tmp_path / "reports")
    assert {q["state"] for q in state["questions"]} == {"pending"} and all(q["attempts"] == 0 for q in state["questions"])


@pytest.mark.usefixtures("default_sigint")  # a suite started in the background inherits SIGINT ignored
def test_the_resume_hint_of_a_stopped_batch_works_as_printed(tmp_path: Path) -> None:
    def stop_at_the_second(request: ChatRequest) -> None:
        if request.stage == "decompose" and QUESTIONS[1] in request.user:
            os.kill(os.getpid(), signal.SIGINT)

    reports = tmp_path / "elsewhere"
    corpus = write_docs(tmp_path / "corpus")
    asked_file = questions_file(tmp_path, *QUESTIONS[:3])
    first = ResponderModel(ResearchResponder(), before=stop_at_the_second)
    deps = batch_deps(tmp_path, first, reports_dir=tmp_path / "reports")  # the config's folder: not this one
    stopped = run_batch(tmp_path, deps, str(asked_file), "--corpus", str(corpus), "--parallel", "1",
                        "--reports-dir", str(reports))  # fmt: skip
    assert stopped.exit_code == 130, stopped.output
    hint = stopped.stderr.rsplit("continue with: ", 1)[1].strip()
    words = shlex.split(hint)
    assert words[:3] == ["research-agent", "batch", "--resume"] and ["--reports-dir", str(reports.resolve())] == words[4:6]
    second = ResponderModel(ResearchResponder())
    resumed = run_batch(tmp_path, batch_deps(tmp_path, second, reports_dir=tmp_path / "reports"), *words[2:])
    assert resumed.exit_code == 0, resumed.output
    assert asked(second, QUESTIONS[0]) == 0 and asked(second, QUESTIONS[2]) > 0
    _, state = saved_state(reports)
    assert [q["state"] for q in state["questions"]] == ["done"] * 3
