"""A run killed (SIGKILL) at each stage, then resumed with ``run --resume``: the journal says
interrupted, the resumed run asks the model nothing it had an answer for, and its report is the
report an uninterrupted run writes from the same answers. The installed CLI, the fake
OpenAI-compatible server; a stage is reached when the server holds its request (no sleeps)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
from pathlib import Path

import pytest

from research_agent.journal.entries import JournalEntry, write_entry
from tests.support.batch import QUESTIONS
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.pipeline import write_docs
from tests.support.reliability import HANG_GUARD, cli_env, start_cli, temp_files
from tests.support.research_responder import ResearchResponder

pytestmark = pytest.mark.skipif(os.name != "posix", reason="signals are POSIX")

QUESTION = QUESTIONS[0]
# One model slot: the stages come one after another, so "killed at a stage" means one thing. Every
# cited sentence checked: a sample of them would be drawn by the run's id, another for each run.
CONFIG = {"llm_concurrency": 1, "claim_tokens": 20000}
ORDER = ("decompose", "relevance", "draft", "skeptic")  # as a standard run with one model slot asks


class Recorder:
    """ResearchResponder's answers; the stage of every request, in order. With ``hold``, the first
    request of that stage is never answered: ``arrived`` is set and it waits for ``release``."""

    def __init__(self, hold: str = "") -> None:
        self.inner = ResearchResponder()
        self.hold = hold
        self.stages: list[str] = []
        self.arrived = threading.Event()
        self.release = threading.Event()

    def __call__(self, body: dict, stage: str) -> str:
        if not body.get("messages"):
            return ""
        self.stages.append(stage)
        if stage == self.hold and not self.arrived.is_set():
            self.arrived.set()
            self.release.wait(HANG_GUARD)
        return self.inner(body, stage)


def _run(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    proc = start_cli(env, *args, cwd=cwd)
    out, err = proc.communicate(timeout=HANG_GUARD * 2)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def _options(corpus: Path, reports: Path) -> list[str]:
    return ["--corpus", str(corpus), "--reports-dir", str(reports), "--no-critique", "--no-lessons", "--standard"]


def _journal(env: dict[str, str], cwd: Path, reports: Path) -> list[dict]:
    listed = _run(env, cwd, "runs", "--json", "--reports-dir", str(reports))
    assert listed.returncode == 0, listed.stderr
    return json.loads(listed.stdout)


def _body(report: Path, run_id: str, folder: Path) -> str:
    """The report, its id and the test's folder (where its corpus lies) replaced."""
    return report.read_text(encoding="utf-8").replace(run_id, "<id>").replace(str(folder.resolve()), "<tmp>")


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[str]]:
    """The report of a run nobody stopped (its id replaced), and the stages it asked for."""
    tmp = tmp_path_factory.mktemp("whole")
    corpus, reports = write_docs(tmp / "corpus"), tmp / "reports"
    recorder = Recorder()
    with FakeOpenAIServer(recorder) as server:
        env = cli_env(tmp / "home", server.base_url, CONFIG)
        done = _run(env, tmp, "run", QUESTION, *_options(corpus, reports), "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    return _body(Path(summary["report_path"]), summary["id"], tmp), recorder.stages


@pytest.mark.parametrize("stage", ORDER)
def test_a_run_killed_at_a_stage_resumes_to_the_same_report(
    tmp_path: Path, stage: str, uninterrupted: tuple[str, list[str]]
) -> None:
    report, asked = uninterrupted
    assert stage in asked
    corpus, reports = write_docs(tmp_path / "corpus"), tmp_path / "reports"
    killed = Recorder(hold=stage)
    with FakeOpenAIServer(killed) as server:
        env = cli_env(tmp_path / "home", server.base_url, CONFIG)
        proc = start_cli(env, "run", QUESTION, *_options(corpus, reports), cwd=tmp_path)
        try:
            assert killed.arrived.wait(HANG_GUARD), f"the run never reached {stage}: {killed.stages}"
            [running] = _journal(env, tmp_path, reports)
            assert running["status"] == "running" and running["question"] == QUESTION and running["front_end"] == "cli"
            proc.send_signal(signal.SIGKILL)
            proc.communicate(timeout=HANG_GUARD)
        finally:
            killed.release.set()
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        [entry] = _journal(env, tmp_path, reports)
    assert entry["status"] == "interrupted" and entry["resumable"] and entry["report"] is None
    before = killed.stages[: killed.stages.index(stage)]  # what the killed run had its answers for

    again = Recorder()
    with FakeOpenAIServer(again) as server:
        env = cli_env(tmp_path / "home", server.base_url, CONFIG)
        resumed = _run(env, tmp_path, "run", "--resume", entry["short_id"], "--reports-dir", str(reports), "--json")
        [after] = _journal(env, tmp_path, reports)
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads(resumed.stdout)
    assert summary["id"] == entry["id"]
    assert _body(Path(summary["report_path"]), entry["id"], tmp_path) == report
    assert again.stages == asked[len(before) :], "the model is asked only for what the run did not have"
    assert after["status"] == "done" and after["resumed"] == 1 and after["report"] == summary["report_path"]
    assert temp_files(reports) == []


def test_a_done_run_is_not_resumed(tmp_path: Path) -> None:
    corpus, reports = write_docs(tmp_path / "corpus"), tmp_path / "reports"
    with FakeOpenAIServer(Recorder()) as server:
        env = cli_env(tmp_path / "home", server.base_url, CONFIG)
        assert _run(env, tmp_path, "run", QUESTION, *_options(corpus, reports)).returncode == 0
        [entry] = _journal(env, tmp_path, reports)
        again = _run(env, tmp_path, "run", "--resume", entry["id"][:12], "--reports-dir", str(reports))
        missing = _run(env, tmp_path, "run", "--resume", "nothing-like-it", "--reports-dir", str(reports))
    assert entry["status"] == "done" and not entry["resumable"]
    assert again.returncode == 2 and f"run {entry['id']} cannot be resumed: it is done" in again.stderr
    assert missing.returncode == 2 and "no journal entry matches 'nothing-like-it'" in missing.stderr
    assert "Traceback" not in again.stderr + missing.stderr


def test_a_run_drafting_beside_relevance_killed_in_its_draft_resumes_to_the_same_report(tmp_path: Path) -> None:
    """With slots to spare the first draft is written while relevance scores (run/first_draft.py):
    the checkpoints are keyed by what they hold, so the order the two finished in does not matter."""
    side_by_side = {**CONFIG, "llm_concurrency": 4}
    corpus, whole_reports, reports = write_docs(tmp_path / "corpus"), tmp_path / "whole", tmp_path / "reports"
    with FakeOpenAIServer(Recorder()) as server:
        env = cli_env(tmp_path / "home", server.base_url, side_by_side)
        done = _run(env, tmp_path, "run", QUESTION, *_options(corpus, whole_reports), "--json")
    assert done.returncode == 0, done.stderr
    whole = json.loads(done.stdout)
    killed = Recorder(hold="draft")
    with FakeOpenAIServer(killed) as server:
        env = cli_env(tmp_path / "home", server.base_url, side_by_side)
        proc = start_cli(env, "run", QUESTION, *_options(corpus, reports), cwd=tmp_path)
        try:
            assert killed.arrived.wait(HANG_GUARD), killed.stages
            proc.send_signal(signal.SIGKILL)
            proc.communicate(timeout=HANG_GUARD)
        finally:
            killed.release.set()
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    again = Recorder()
    with FakeOpenAIServer(again) as server:
        env = cli_env(tmp_path / "home", server.base_url, side_by_side)
        resumed = _run(env, tmp_path, "run", "--resume", "latest", "--reports-dir", str(reports), "--json")
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads(resumed.stdout)
    assert _body(Path(summary["report_path"]), summary["id"], tmp_path) == _body(Path(whole["report_path"]), whole["id"], tmp_path)
    assert "decompose" not in again.stages and again.stages.count("draft") == 1, again.stages


@pytest.mark.parametrize("key", [None, b"another user's key, 32 bytes...."])
def test_a_planted_entry_is_not_resumed(tmp_path: Path, key: bytes | None) -> None:
    """A journal entry not signed with the user's key (none, or another's) names settings nobody here
    chose (here a corpus folder outside the reports): the resume refuses before it reads them."""
    reports, secret = tmp_path / "reports", tmp_path / "secret"
    secret.mkdir()
    run_id = "what-is-vacuum_20260101T090000000000Z"
    planted = JournalEntry(run_id, QUESTION, "standard", "cli", "2026-01-01T09:00:00Z", status="failed",
                           settings={"corpus_dirs": [str(secret)], "allow_private": True})  # fmt: skip
    write_entry(reports / "meta", planted, key)
    recorder = Recorder()
    with FakeOpenAIServer(recorder) as server:
        env = cli_env(tmp_path / "home", server.base_url, CONFIG)
        resumed = _run(env, tmp_path, "run", "--resume", run_id, "--reports-dir", str(reports))
    assert resumed.returncode == 2 and "Traceback" not in resumed.stderr
    assert f"run {run_id} cannot be resumed: its journal entry was not written by research-agent" in resumed.stderr
    assert recorder.stages == [] and not list(reports.glob("*.md"))
