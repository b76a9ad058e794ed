"""The critique's runtime in memory/: after_report (skip, wait, detach) and the detached worker.

The worker is run exactly as the detached critique runs it (``critique_argv``), against an
OpenAI-compatible server on 127.0.0.1, so the command line the parent spawns is proved to work.
"""

from __future__ import annotations

import asyncio
import subprocess
import threading
from pathlib import Path
from typing import Any

from research_agent.config import MODES, Settings
from research_agent.errors import ConfigError, StorageError
from research_agent.llm import ChatModel
from research_agent.memory.critique.schedule import after_report
from research_agent.memory.critique.spawn import critique_argv
from research_agent.memory.store.files import LOG_NAME
from tests.conftest import ScriptedModel
from tests.support.cli import CLI
from tests.support.critique import ANSWER, RUN_ID, make_record
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.pipeline import write_docs
from tests.support.reliability import cli_env
from tests.support.research_responder import ResearchResponder

HANG_GUARD = 60.0


class FakeSpawn:
    """Stands in for spawn_critique: records its calls, returns a pid or raises ``error``."""

    def __init__(self, error: Exception | None = None) -> None:
        self.calls: list[tuple[Path, dict[str, Any]]] = []
        self.error = error

    def __call__(self, record: Path, **kwargs: Any) -> int:
        self.calls.append((record, kwargs))
        if self.error is not None:
            raise self.error
        return 4242


def test_after_report_skips_quick_runs_and_runs_without_critique(tmp_path: Path) -> None:
    record = make_record(tmp_path)
    spawn, model = FakeSpawn(), ScriptedModel()  # nothing scripted: a model call would fail the test
    quick = Settings(mode=MODES["quick"])
    for settings in (quick, quick.replace(wait_critique=True), Settings(critique=False, wait_critique=True)):
        assert after_report(record, settings, model=model, spawn=spawn).state == "skipped"
    assert spawn.calls == [] and model.requests == []
    # the rule lives on Mode (the batch runner asks it too): quick alone skips the critique
    assert {name: mode.critiqued for name, mode in MODES.items()} == {"quick": False, "standard": True, "deep": True}


def test_after_report_detaches_with_this_run_s_settings(tmp_path: Path) -> None:
    record = make_record(tmp_path)
    settings = Settings(reports_dir=tmp_path / "reports", model="m1")
    spawn = FakeSpawn()
    scheduled = after_report(record, settings, spawn=spawn)
    assert (scheduled.state, scheduled.pid, scheduled.critique) == ("started", 4242, None)
    assert spawn.calls == [(record, {"reports_dir": tmp_path / "reports", "settings": settings})]


def test_after_report_says_why_a_detached_critique_did_not_start(tmp_path: Path) -> None:
    record = make_record(tmp_path)
    for error in (StorageError("cannot start the background critique: no such file"), OSError("fork failed")):
        scheduled = after_report(record, Settings(), spawn=FakeSpawn(error))
        assert (scheduled.state, scheduled.error) == ("not_started", str(error))


def test_after_report_waits_and_a_failed_critique_is_told_not_raised(tmp_path: Path) -> None:
    record = make_record(tmp_path)
    settings = Settings(reports_dir=tmp_path / "reports", wait_critique=True)
    done = after_report(record, settings, model=ScriptedModel().enqueue("critique", ANSWER))
    assert done.state == "done" and done.critique is not None and done.critique.id == RUN_ID
    assert done.path == record.parent / f"critique-{RUN_ID}.yaml" and done.path.is_file()

    failing = ScriptedModel().enqueue("critique", ConfigError("the model endpoint refused the API key"))
    failed = after_report(record, settings, model=failing)
    assert (failed.state, failed.error) == ("failed", "the model endpoint refused the API key")
    assert "FAIL" in (record.parent / LOG_NAME).read_text(encoding="utf-8").splitlines()[-1]


def run_worker(record: Path, reports: Path, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    argv = critique_argv(record, reports_dir=reports)
    return subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd, timeout=HANG_GUARD)


def test_the_detached_worker_writes_the_critique_and_prints_nothing(tmp_path: Path) -> None:
    record = make_record(tmp_path)
    with FakeOpenAIServer(ResearchResponder()) as server:
        proc = run_worker(record, tmp_path / "reports", cli_env(tmp_path / "home", server.base_url), tmp_path)
        stages = [r.stage for r in server.requests]
    assert proc.returncode == 0, proc.stderr
    assert (proc.stdout, proc.stderr) == ("", "")
    assert stages == ["critique"]
    assert (record.parent / f"critique-{RUN_ID}.yaml").is_file()
    (line,) = (record.parent / LOG_NAME).read_text(encoding="utf-8").splitlines()
    assert f" ok critique-{RUN_ID}.yaml: mean " in line


def test_the_detached_worker_logs_a_failure_and_exits_with_its_code(tmp_path: Path) -> None:
    record = make_record(tmp_path)
    env = cli_env(tmp_path / "home", "http://127.0.0.1:9/v1")
    del env["OPENAI_BASE_URL"]  # no endpoint at all: a ConfigError before any model call
    proc = run_worker(record, tmp_path / "reports", env, tmp_path)
    assert proc.returncode == 2
    assert (proc.stdout, proc.stderr) == ("", "")
    (line,) = (record.parent / LOG_NAME).read_text(encoding="utf-8").splitlines()
    assert f" FAIL run-{RUN_ID}.yaml: no model endpoint configured" in line
    assert not (record.parent / f"critique-{RUN_ID}.yaml").exists()


class StalledCritic(ChatModel):
    """A model whose critique never answers: only a deadline ends the wait."""

    async def complete(self, request: Any) -> Any:
        await asyncio.Event().wait()


def test_a_waited_for_critique_ends_when_the_time_left_runs_out(tmp_path: Path) -> None:
    record = make_record(tmp_path)
    settings = Settings(reports_dir=tmp_path / "reports", wait_critique=True)
    failed = after_report(record, settings, model=StalledCritic(), time_left=0.05)
    assert failed.state == "failed" and failed.critique is None
    assert failed.error.startswith("the critique did not finish within the 0.05s left of the deadline")
    assert "FAIL" in (record.parent / LOG_NAME).read_text(encoding="utf-8").splitlines()[-1]
    assert not (record.parent / f"critique-{RUN_ID}.yaml").exists()


def test_run_timeout_covers_a_waited_for_critique_whose_critic_stalls(tmp_path: Path) -> None:
    """``run --timeout N --wait-critique`` against a server whose critic never answers: the
    command ends by its deadline with the report written and the critique named as failed."""
    corpus = write_docs(tmp_path / "corpus")
    responder, release = ResearchResponder(), threading.Event()

    def answer(body: dict, stage: str) -> str:
        if stage == "critique":
            release.wait(HANG_GUARD)
        return responder(body, stage)

    reports = tmp_path / "reports"
    with FakeOpenAIServer(answer) as server:
        args = ["run", "How does PostgreSQL VACUUM reclaim space?", "--corpus", str(corpus), "--reports-dir",
                str(reports), "--wait-critique", "--timeout", "15"]  # fmt: skip
        try:
            proc = subprocess.run([str(CLI), *args], capture_output=True, text=True, timeout=HANG_GUARD,
                                  env=cli_env(tmp_path / "home", server.base_url), cwd=tmp_path)  # fmt: skip
        finally:
            release.set()
    assert proc.returncode == 0, proc.stderr
    assert Path(proc.stdout.strip()).is_file(), "the report is the user's whatever became of its critique"
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("critique failed: the critique did not finish within the"), proc.stderr
    assert not list((reports / "meta").glob("critique-*.yaml"))
