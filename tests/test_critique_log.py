"""critique.log is opened without blocking and must be a regular file (issue 10, item 5).

A FIFO planted as ``critique.log`` used to hang the detached critique, and ``--wait-critique``
with it, forever. Every test that could block without the fix runs behind a hang guard
(a subprocess timeout, or a thread joined with a timeout and released by opening the FIFO).
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from research_agent.config import Settings
from research_agent.errors import StorageError
from research_agent.memory.critique.schedule import critique_now
from research_agent.memory.critique.spawn import spawn_critique
from research_agent.memory.store.files import LOG_NAME, append_log
from tests.conftest import ScriptedModel
from tests.support.cli import CLI
from tests.support.critique import make_record
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.pipeline import write_docs
from tests.support.reliability import cli_env, message_lines
from tests.support.research_responder import ResearchResponder

HANG_GUARD = 60.0
FIFO_REFUSED = "it is a FIFO, not a regular file"


def call_guarded(fn: Callable[[], Any], fifo: Path) -> BaseException | None:
    """Run ``fn`` in a thread; fail (instead of hanging) if it blocks on ``fifo``. Returns what it raised."""
    outcome: dict[str, BaseException | None] = {"raised": None}

    def target() -> None:
        try:
            fn()
        except BaseException as exc:  # handed to the test
            outcome["raised"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(HANG_GUARD)
    if thread.is_alive():
        reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # lets the blocked writer go
        thread.join(HANG_GUARD)
        os.close(reader)
        pytest.fail(f"blocked on the FIFO {fifo.name} for {HANG_GUARD:g}s")
    return outcome["raised"]


@pytest.fixture
def meta(tmp_path: Path) -> Path:
    folder = tmp_path / "reports" / "meta"
    folder.mkdir(parents=True)
    return folder


def test_a_fifo_without_a_reader_is_refused_at_once(meta: Path) -> None:
    os.mkfifo(meta / LOG_NAME)
    raised = call_guarded(lambda: append_log(meta, "ok", "critique-x.yaml", "mean 3.00"), meta / LOG_NAME)
    assert isinstance(raised, StorageError) and FIFO_REFUSED in str(raised)


def test_a_fifo_with_a_reader_is_refused_and_gets_nothing(meta: Path) -> None:
    os.mkfifo(meta / LOG_NAME)
    reader = os.open(meta / LOG_NAME, os.O_RDONLY | os.O_NONBLOCK)
    try:
        with pytest.raises(StorageError, match=FIFO_REFUSED):
            append_log(meta, "ok", "critique-x.yaml", "mean 3.00")
        assert os.read(reader, 100) == b""  # the refused writer wrote nothing before closing
    finally:
        os.close(reader)


def test_a_symlinked_log_is_refused_and_its_target_untouched(meta: Path, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.log"
    target.write_text("", encoding="utf-8")
    (meta / LOG_NAME).symlink_to(target)
    with pytest.raises(StorageError, match="it is a symlink"):
        append_log(meta, "ok", "critique-x.yaml")
    assert target.read_text(encoding="utf-8") == ""


def test_a_regular_log_still_gets_its_line(meta: Path) -> None:
    append_log(meta, "ok", "critique-x.yaml", "mean 3.00, pass")
    assert (meta / LOG_NAME).read_text(encoding="utf-8").endswith(" ok critique-x.yaml: mean 3.00, pass\n")


def test_the_detached_critique_is_not_started_over_a_fifo(tmp_path: Path) -> None:
    record = make_record(tmp_path)
    os.mkfifo(record.parent / LOG_NAME)
    started: list[Any] = []
    with pytest.raises(StorageError, match=FIFO_REFUSED):
        spawn_critique(record, reports_dir=tmp_path / "reports", popen=lambda *a, **k: started.append(a))
    assert started == []


def test_wait_critique_refuses_a_fifo_before_the_model_call(tmp_path: Path) -> None:
    record = make_record(tmp_path)
    os.mkfifo(record.parent / LOG_NAME)
    model = ScriptedModel()  # nothing scripted: a model call would fail the test
    raised = call_guarded(
        lambda: critique_now(record, Settings(reports_dir=tmp_path / "reports"), model=model),
        record.parent / LOG_NAME,
    )
    assert isinstance(raised, StorageError) and FIFO_REFUSED in str(raised)
    assert model.requests == []


def test_the_critique_command_over_a_fifo_is_one_line_exit_5(tmp_path: Path) -> None:
    record = make_record(tmp_path)
    os.mkfifo(record.parent / LOG_NAME)
    with FakeOpenAIServer(ResearchResponder()) as server:
        env = cli_env(tmp_path / "home", server.base_url)
        proc = subprocess.run(
            [str(CLI), "critique", "--run", str(record)], capture_output=True, text=True, env=env,
            cwd=tmp_path, timeout=HANG_GUARD,
        )
        requests = list(server.requests)
    assert proc.returncode == 5, proc.stderr
    assert message_lines(proc.stderr) == [f"error: cannot write {record.parent / LOG_NAME}: {FIFO_REFUSED}"]
    assert requests == []


@pytest.mark.parametrize("how", ["--wait-critique", "detached"])
def test_a_run_over_a_fifo_log_keeps_its_report_and_says_why_there_is_no_critique(
    tmp_path: Path, how: str
) -> None:
    corpus = write_docs(tmp_path / "corpus")
    reports = tmp_path / "reports"
    (reports / "meta").mkdir(parents=True)
    os.mkfifo(reports / "meta" / LOG_NAME)
    with FakeOpenAIServer(ResearchResponder()) as server:
        env = cli_env(tmp_path / "home", server.base_url)
        args = ["run", "How does PostgreSQL VACUUM reclaim space?", "--corpus", str(corpus),
                "--reports-dir", str(reports)] + (["--wait-critique"] if how == "--wait-critique" else [])
        proc = subprocess.run([str(CLI), *args], capture_output=True, text=True, env=env, cwd=tmp_path,
                              timeout=HANG_GUARD)
        stages = [r.stage for r in server.requests]
    assert proc.returncode == 0, proc.stderr
    assert Path(proc.stdout.strip()).is_file()  # the report is the user's, whatever the log is
    (line,) = message_lines(proc.stderr)[-1:]
    lead = "critique failed" if how == "--wait-critique" else "could not start the critique"
    assert line == f"{lead}: cannot write {reports / 'meta' / LOG_NAME}: {FIFO_REFUSED}", proc.stderr
    assert "critique" not in stages
