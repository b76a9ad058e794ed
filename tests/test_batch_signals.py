"""SIGTERM (and Ctrl-C) in the middle of a batch run by the installed CLI: the running question is
cancelled cleanly, the finished one stays, the state and the page are written, exit 143 (130)."""

from __future__ import annotations

import os
import shlex
import signal
import threading
from pathlib import Path

import pytest
import yaml

from tests.support.batch import QUESTIONS, questions_file
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.pipeline import write_docs
from tests.support.reliability import HANG_GUARD, check_folder, cli_env, start_cli, temp_files
from tests.support.research_responder import ResearchResponder

pytestmark = pytest.mark.skipif(os.name != "posix", reason="signals are POSIX")


class HoldQuestion:
    """Answers as ResearchResponder, except that every call about ``question`` waits for ``release``."""

    def __init__(self, question: str) -> None:
        self.inner = ResearchResponder()
        self.question = question
        self.arrived = threading.Event()
        self.release = threading.Event()

    def __call__(self, body: dict, stage: str) -> str:
        if self.question in str(body.get("messages")):
            self.arrived.set()
            self.release.wait(HANG_GUARD)
        return self.inner(body, stage)


@pytest.mark.parametrize(("sent", "code", "word"), [(signal.SIGTERM, 143, "terminated"), (signal.SIGINT, 130, "interrupted")])
def test_a_signal_mid_batch_keeps_what_finished_and_writes_the_state(tmp_path: Path, sent: int, code: int, word: str) -> None:
    corpus = write_docs(tmp_path / "corpus")
    asked = questions_file(tmp_path, *QUESTIONS[:3])
    reports = tmp_path / "reports"
    hold = HoldQuestion(QUESTIONS[1])
    with FakeOpenAIServer(hold) as server:
        env = cli_env(tmp_path / "home", server.base_url)
        proc = start_cli(env, "batch", str(asked), "--corpus", str(corpus), "--parallel", "1", "--reports-dir",
                         str(reports), cwd=tmp_path)  # fmt: skip
        try:
            assert hold.arrived.wait(HANG_GUARD), "the batch never reached its second question"
            proc.send_signal(sent)
            out, err = proc.communicate(timeout=HANG_GUARD)
        finally:
            hold.release.set()
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert proc.returncode == code, err
    assert "Traceback" not in err
    [state_file] = (reports / "meta").glob("batch-*.yaml")
    state = yaml.safe_load(state_file.read_text(encoding="utf-8"))
    assert state["status"] == "stopped"
    assert [q["state"] for q in state["questions"]] == ["done", "pending", "pending"]
    resume = shlex.join(["research-agent", "batch", "--resume", state["id"], "--reports-dir", str(reports.resolve())])
    assert err.splitlines()[-1] == f"{word}: batch {state['id']} stopped, 2 question(s) left; continue with: {resume}"
    page = reports / f"batch-{state['id']}.md"
    assert out.strip() == str(page) and "3 questions: 1 done, 0 failed, 2 not run yet" in page.read_text()
    found = check_folder(reports)
    assert [p.stem for p in found["reports"]] == [state["questions"][0]["run_id"]], "nothing of the cancelled run"
    assert temp_files(reports) == []


class HoldStage:
    """Answers as ResearchResponder and counts each stage; the first request of ``stage`` waits for
    ``release`` (``arrived`` set), so a test can signal the CLI while that stage is running."""

    def __init__(self, stage: str) -> None:
        self.inner = ResearchResponder()
        self.stage = stage
        self.stages: list[str] = []
        self.about: list[tuple[str, str]] = []  # (stage, the question of the batch it names)
        self.arrived = threading.Event()
        self.release = threading.Event()

    def __call__(self, body: dict, stage: str) -> str:
        if not body.get("messages"):
            return ""
        self.stages.append(stage)
        self.about.extend((stage, q) for q in QUESTIONS[:2] if q in str(body["messages"]))
        if stage == self.stage and not self.arrived.is_set():
            self.arrived.set()
            self.release.wait(HANG_GUARD)
        return self.inner(body, stage)


@pytest.mark.parametrize("parallel", ["1", "2"])
def test_sigterm_during_a_critique_then_resume_researches_no_question_twice(tmp_path: Path, parallel: str) -> None:
    corpus = write_docs(tmp_path / "corpus")
    asked = questions_file(tmp_path, *QUESTIONS[:2])
    reports = tmp_path / "reports"
    options = ["--corpus", str(corpus), "--parallel", parallel, "--reports-dir", str(reports)]
    held = HoldStage("critique")
    with FakeOpenAIServer(held) as server:
        env = cli_env(tmp_path / "home", server.base_url)
        proc = start_cli(env, "batch", str(asked), *options, cwd=tmp_path)
        try:
            assert held.arrived.wait(HANG_GUARD), f"no critique started: {held.stages}"
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=HANG_GUARD)
        finally:
            held.release.set()
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert proc.returncode == 143, err
    [state_file] = (reports / "meta").glob("batch-*.yaml")
    state = yaml.safe_load(state_file.read_text(encoding="utf-8"))
    before = {q["question"]: q for q in state["questions"]}
    for q in before.values():  # a written report is a question done; one without is pending, its run kept
        assert (q["state"] == "done") == (reports / f"{q['run_id']}.md").is_file(), q
        assert q["state"] == "done" or q["run_id"] == "" or q["state"] == "pending"
    done_before = [q for q, entry in before.items() if entry["state"] == "done"]
    assert done_before and all(before[q]["outcome"]["critique"]["state"] == "not run" for q in done_before)
    reports_before = sorted(p.name for p in reports.glob("*.md") if not p.name.startswith("batch-"))

    again = HoldStage("")
    with FakeOpenAIServer(again) as server:
        env = cli_env(tmp_path / "home", server.base_url)
        proc = start_cli(env, "batch", "--resume", state["id"], "--reports-dir", str(reports), cwd=tmp_path)
        out, err = proc.communicate(timeout=HANG_GUARD * 2)
    assert proc.returncode == 0, err
    state = yaml.safe_load(state_file.read_text(encoding="utf-8"))
    assert [q["state"] for q in state["questions"]] == ["done", "done"]
    written = sorted(p.name for p in reports.glob("*.md") if not p.name.startswith("batch-"))
    assert len(written) == 2 and set(reports_before) <= set(written), "exactly one report a question"
    assert sorted(q["run_id"] + ".md" for q in state["questions"]) == written
    for q in state["questions"]:
        assert q["outcome"]["critique"]["state"] in ("passed", "not passed")
        if before[q["question"]]["run_id"]:  # the run it had: resumed (or its report taken), never a new one
            assert q["run_id"] == before[q["question"]]["run_id"]
    for question in done_before:
        assert {stage for stage, q in again.about if q == question} == {"critique"}, "only its critique ran again"
