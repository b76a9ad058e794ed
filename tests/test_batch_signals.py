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

from tests.support.batch import QUESTIONS, questions_file, write_corpus
from tests.support.fake_openai_server import FakeOpenAIServer
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
    corpus = write_corpus(tmp_path / "corpus")
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
