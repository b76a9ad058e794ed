"""``research-agent batch`` end to end in-process, with a scripted model: the page, a failed question
that does not stop the batch, a transient one tried again, lessons reaching later questions, and a
cancelled batch resumed without asking again what was done."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from research_agent.errors import InvalidModelOutput, LLMUnavailable
from research_agent.files.locks import exclusive_lock
from research_agent.llm import ChatRequest
from research_agent.record import read_run_record
from tests.support.batch import QUESTIONS, asked, batch_deps, questions_file, run_batch, saved_state
from tests.support.llm import Sleeps
from tests.support.pipeline import write_docs
from tests.support.research_responder import ResearchResponder
from tests.support.responder_model import ResponderModel


def _batch(tmp_path: Path, model: ResponderModel, *args: str, lines: tuple[str, ...] = QUESTIONS[:3], **base):
    corpus = write_docs(tmp_path / "corpus")
    asked_file = questions_file(tmp_path, "# a batch about VACUUM", *lines)
    deps = batch_deps(tmp_path, model, **base)
    return run_batch(tmp_path, deps, str(asked_file), "--corpus", str(corpus), *args), deps


def test_every_question_is_researched_and_critiqued_and_the_page_says_what_came_out(tmp_path: Path) -> None:
    model = ResponderModel(ResearchResponder(), cost_usd=0.001)
    result, _ = _batch(tmp_path, model, "--json", "--format", "html")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    reports = tmp_path / "reports"
    assert data["page"] == str(reports / f"batch-{data['id']}.html")
    totals = data["totals"]
    assert (totals["questions"], totals["done"], totals["failed"], totals["pending"]) == (3, 3, 0, 0)
    assert totals["approved"] + totals["rejected"] == 3 and totals["claims_checked"] > 0
    assert totals["cost_usd"] == round(sum(q["cost_usd"] for q in data["questions"]), 6) > 0
    assert totals["tokens"] == sum(q["tokens"] for q in data["questions"]) > 0
    assert len(model.calls("critique")) == 3, "each report is critiqued inside the batch"
    for n, question in enumerate(data["questions"]):
        assert question["question"] == QUESTIONS[n] and question["line"] == n + 2  # after the comment line
        assert question["status"] == "done" and question["critique"]["state"] in ("passed", "not passed")
        record = read_run_record(reports / "meta" / f"run-{question['run_id']}.yaml")
        assert question["review"] == record.review.status and question["report"] == str(reports / f"{record.id}.md")
        assert question["claims_checked"] == record.claim_check.checked
        assert question["sources_kept"] == sum(1 for s in record.sources if s.status == "kept") > 0
        assert Path(question["html"]).is_file() and question["html"].endswith(".html")
    markdown = (reports / f"batch-{data['id']}.md").read_text(encoding="utf-8")
    assert "3 questions: 3 done, 0 failed, 0 not run yet" in markdown
    for question in data["questions"]:
        assert f"[report](<{Path(question['report']).name}>)" in markdown
    page = Path(data["page"]).read_text(encoding="utf-8")
    assert all(f'href="{Path(q["html"]).name}"' in page for q in data["questions"]), "the HTML page links the exports"
    _, state = saved_state(reports)
    assert state["status"] == "finished" and [q["state"] for q in state["questions"]] == ["done"] * 3
    lines = result.stderr.splitlines()  # without a terminal: one line per question, nothing else
    assert sorted(line.split("]")[0] for line in lines) == ["[1/3", "[2/3", "[3/3"], result.stderr


def _fails_for(question: str, stage: str, error: Exception, times: int | None = None):
    seen = {"count": 0}

    def hook(request: ChatRequest) -> None:
        if request.stage == stage and question in request.user and (times is None or seen["count"] < times):
            seen["count"] += 1
            raise error

    return hook


def test_a_question_that_keeps_failing_is_marked_failed_and_the_batch_goes_on(tmp_path: Path) -> None:
    broken = InvalidModelOutput("the draft stage got invalid output from model scripted after 3 attempts")
    model = ResponderModel(ResearchResponder(), before=_fails_for(QUESTIONS[1], "draft", broken))
    result, _ = _batch(tmp_path, model, "--parallel", "1", "--json")
    assert result.exit_code == 1, result.output
    data = json.loads(result.stdout)
    assert [q["status"] for q in data["questions"]] == ["done", "failed", "done"]
    failed = data["questions"][1]
    assert failed["attempts"] == 1, "a model that cannot answer is not tried again"
    assert "invalid output" in failed["error"]
    journal = json.loads((tmp_path / "reports" / "meta" / f"journal-{failed['run_id']}.json").read_text(encoding="utf-8"))
    assert journal["status"] == "failed" and "invalid output" in journal["error"], "the failed run is in the journal"
    assert not (tmp_path / "reports" / f"{failed['run_id']}.md").exists()
    assert asked(model, QUESTIONS[2]) > 0, "the question after the failed one ran"
    markdown = (tmp_path / "reports" / f"batch-{data['id']}.md").read_text(encoding="utf-8")
    assert "failed after 1 attempt(s): the draft stage got invalid output" in markdown


def test_a_transient_failure_is_tried_again_after_a_backoff_up_to_the_limit(tmp_path: Path) -> None:
    once = LLMUnavailable("cannot reach the model endpoint")
    hook_once = _fails_for(QUESTIONS[0], "draft", once, times=1)
    hook_always = _fails_for(QUESTIONS[1], "draft", once)
    model = ResponderModel(ResearchResponder(), before=lambda r: (hook_once(r), hook_always(r)))
    sleeps = Sleeps()
    corpus = write_docs(tmp_path / "corpus")
    deps = batch_deps(tmp_path, model, sleep=sleeps)
    asked_file = questions_file(tmp_path, *QUESTIONS[:2])
    result = run_batch(tmp_path, deps, str(asked_file), "--corpus", str(corpus), "--retries", "2", "--json")
    assert result.exit_code == 1, result.output
    first, second = json.loads(result.stdout)["questions"]
    assert (first["status"], first["attempts"]) == ("done", 2)
    assert (second["status"], second["attempts"]) == ("failed", 3), "tried again twice, then failed"
    assert "cannot reach the model endpoint" in second["error"]
    retry_waits = [s for s in sleeps.calls if s >= 2.5]
    assert len(retry_waits) == 3 and all(2.5 <= s <= 120 for s in retry_waits), sleeps.calls


def test_lessons_from_the_batch_s_first_critiques_reach_its_later_questions(tmp_path: Path) -> None:
    model = ResponderModel(ResearchResponder())
    result, _ = _batch(tmp_path, model, "--parallel", "1", "--json", lines=QUESTIONS,
                       control_fraction=0.0, trial_probability=0.0)  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    meta = tmp_path / "reports" / "meta"
    applied = [read_run_record(meta / f"run-{q['run_id']}.yaml").lessons.applied for q in data["questions"]]
    assert [bool(a) for a in applied] == [False, False, False, True, True], "none until 3 passing critiques exist"
    assert all(q["critique"]["state"] == "passed" for q in data["questions"][:3])
    assert data["lessons_changed"], "the lessons built during the batch are on its page"
    assert {change["before"] for change in data["lessons_changed"]} == {"new"}
    decompose = [r for r in model.calls("decompose") if QUESTIONS[3] in r.user]
    assert decompose and any(lesson.text in decompose[0].user for lesson in applied[3] if lesson.stage == "decompose")


@pytest.mark.usefixtures("default_sigint")  # a suite started in the background inherits SIGINT ignored
def test_a_cancelled_batch_resumes_where_it_stopped_and_skips_the_questions_done(tmp_path: Path) -> None:
    def stop_at_the_second(request: ChatRequest) -> None:
        if request.stage == "decompose" and QUESTIONS[1] in request.user:
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C, in the middle of the second question

    first = ResponderModel(ResearchResponder(), before=stop_at_the_second)
    stopped, deps = _batch(tmp_path, first, "--parallel", "1")
    assert stopped.exit_code == 130, stopped.output
    path, state = saved_state(tmp_path / "reports")
    assert [q["state"] for q in state["questions"]] == ["done", "pending", "pending"]
    assert state["status"] == "stopped" and f"continue with: research-agent batch --resume {state['id']}" in stopped.stderr
    done_run = state["questions"][0]["run_id"]
    assert sorted(p.name for p in (tmp_path / "reports").glob("*.md") if not p.name.startswith("batch-")) == [
        f"{done_run}.md"], "the cancelled question left no report"

    second = ResponderModel(ResearchResponder())
    again = run_batch(tmp_path, batch_deps(tmp_path, second), str(tmp_path / "questions.txt"),
                      "--corpus", str(tmp_path / "corpus"), "--parallel", "1")  # fmt: skip
    assert again.exit_code == 0, again.output
    assert asked(second, QUESTIONS[0]) == 0, "the question done before is not asked again"
    assert asked(second, QUESTIONS[1]) > 0 and asked(second, QUESTIONS[2]) > 0
    path_again, resumed = saved_state(tmp_path / "reports")
    assert path_again == path and resumed["questions"][0]["run_id"] == done_run
    assert [q["state"] for q in resumed["questions"]] == ["done"] * 3 and resumed["status"] == "finished"


@pytest.mark.usefixtures("default_sigint")  # a suite started in the background inherits SIGINT ignored
def test_resume_by_id_continues_with_the_options_it_was_started_with(tmp_path: Path) -> None:
    def stop_at_the_second(request: ChatRequest) -> None:
        if request.stage == "decompose" and QUESTIONS[1] in request.user:
            os.kill(os.getpid(), signal.SIGINT)

    stopped, _ = _batch(tmp_path, ResponderModel(ResearchResponder(), before=stop_at_the_second), "--parallel", "1")
    assert stopped.exit_code == 130
    _, state = saved_state(tmp_path / "reports")
    second = ResponderModel(ResearchResponder())
    with exclusive_lock(tmp_path / "reports" / "meta" / f"batch-{state['id']}.lock"):  # another process runs it
        refused = run_batch(tmp_path, batch_deps(tmp_path, second), "--resume", state["id"])
    assert refused.exit_code == 2 and refused.stderr == f"error: batch {state['id']} is running in another process\n"
    assert second.requests == []
    again = run_batch(tmp_path, batch_deps(tmp_path, second), "--resume", state["id"], "--parallel", "1")
    assert again.exit_code == 0, again.output
    assert asked(second, QUESTIONS[0]) == 0 and asked(second, QUESTIONS[2]) > 0
    _, resumed = saved_state(tmp_path / "reports")
    assert all(q["options"]["corpus"] == [str((tmp_path / "corpus").resolve())] for q in resumed["questions"])
    assert [q["state"] for q in resumed["questions"]] == ["done"] * 3
