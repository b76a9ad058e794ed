"""``memory ab`` through the installed CLI, against the OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
import signal
import subprocess
import threading
from pathlib import Path

import pytest
import yaml

from tests.support.ab import QUESTIONS
from tests.support.cli import CLI, cli, cli_env
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.reliability import with_default_sigint
from tests.support.research_responder import ResearchResponder


def write_questions(tmp_path: Path) -> Path:
    path = tmp_path / "questions.txt"
    path.write_text("# VACUUM\n" + "\n".join(QUESTIONS) + "\n", encoding="utf-8")
    return path


def test_json_stdout_is_only_the_json_and_both_arms_are_critiqued(tmp_path, corpus, server):
    reports = tmp_path / "reports"
    proc = cli(tmp_path, "memory", "ab", str(write_questions(tmp_path)), "--corpus", str(corpus),
               "--reports-dir", str(reports), "--json", base_url=server.base_url)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert [p["question"] for p in data["pairs"]] == list(QUESTIONS)
    assert {"dimensions", "facts", "usage", "path"} <= set(data)
    assert [r.stage for r in server.requests].count("critique") == 4
    assert yaml.safe_load(Path(data["path"]).read_text())["pairs"] == data["pairs"]
    assert "question 2/2 done" in proc.stderr


def test_a_binary_questions_file_fails_before_the_endpoint_is_asked_anything(tmp_path, corpus, server):
    questions = tmp_path / "questions.bin"
    questions.write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 8)
    proc = cli(tmp_path, "memory", "ab", str(questions), "--corpus", str(corpus), base_url=server.base_url)
    assert proc.returncode == 2 and proc.stderr.startswith("error: questions file") and "Traceback" not in proc.stderr
    assert server.requests == [] and proc.stdout == ""


@pytest.mark.parametrize(
    ("sent", "code", "said"),
    [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")],  # Ctrl-C; timeout, docker stop, CI
)
def test_a_signal_keeps_the_finished_pair_saves_it_and_exits_with_its_code(tmp_path, corpus, sent, code, said):
    """A real signal, sent while question 2's first model call waits for its answer."""
    responder = ResearchResponder()
    reached, release = threading.Event(), threading.Event()
    first_plans: list[int] = []
    lock = threading.Lock()

    def answer(body: dict, stage: str) -> str:
        if stage == "decompose":
            with lock:
                first_plans.append(1)
                third = len(first_plans) == 3  # question 2's first run starts
            if third:
                reached.set()
                release.wait(60)
        return responder(body, stage)

    reports = tmp_path / "reports"
    with FakeOpenAIServer(answer) as server:
        args = ["memory", "ab", str(write_questions(tmp_path)), "--corpus", str(corpus), "--reports-dir", str(reports)]
        # the child starts with SIGINT at its default: a suite started in the background (`pytest &`)
        # passes its ignored SIGINT on, and the CLI would never see this Ctrl-C
        proc = subprocess.Popen(with_default_sigint([str(CLI), *args]), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=cli_env(tmp_path, server.base_url), cwd=tmp_path)  # fmt: skip
        try:
            assert reached.wait(60), "question 2 never started"
            proc.send_signal(sent)
            out, err = proc.communicate(timeout=60)
        finally:
            release.set()
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert proc.returncode == code, err
    assert f"{said}: kept 1 finished pair(s); saved to" in err and "Traceback" not in err
    [path] = (reports / "meta").glob("ab-*.yaml")
    data = yaml.safe_load(path.read_text())
    assert data["complete"] is False and [p["question"] for p in data["pairs"]] == [QUESTIONS[0]]
    assert "mean score" in out and "saved to" in out and "1 of 2 pairs complete" in out
    assert not [p for p in (reports / "meta").iterdir() if p.name.startswith(".")], "no temp file left behind"
