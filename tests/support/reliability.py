"""Driving the installed CLI the way a user does (started, interrupted, killed) and checking what it left on disk."""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from research_agent.files.atomic import TEMP_SUFFIX
from research_agent.search.corpus_index import CorpusIndex
from tests.support.cli import CLI
from tests.support.pipeline import source_entries
from tests.support.research_responder import ResearchResponder

PROGRESS = "… "  # RichProgress prints one such line per stage when stderr is not a terminal


HANG_GUARD = 60.0  # seconds; only ever reached when the behaviour under test is broken


class Tap:
    """A responder wrapper that counts requests and lets a test wait for a stage.

    ``hooks[stage]`` is called (in the server thread) before that stage is answered,
    e.g. to delete the corpus while the CLI is waiting for the model.
    """

    def __init__(self, inner: Callable[[dict, str], str] | None = None) -> None:
        self.inner = inner or ResearchResponder()
        self.stages: list[str] = []
        self.hooks: dict[str, Callable[[], None]] = {}
        self.marker = ""  # when set, only requests whose messages contain it are counted
        self._cond = threading.Condition()

    def __call__(self, body: dict, stage: str) -> str:
        if not body.get("messages"):  # a client killed between headers and body: nobody to answer
            return ""
        if self.marker and self.marker not in str(body["messages"]):  # a late request of a killed run
            return self.inner(body, stage)
        hook = self.hooks.get(stage)
        if hook is not None:
            hook()
        with self._cond:
            self.stages.append(stage)
            self._cond.notify_all()
        return self.inner(body, stage)

    def wait_for(self, predicate: Callable[[list[str]], bool], timeout: float = 60.0) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: predicate(self.stages), timeout)

    def reset(self) -> None:
        with self._cond:
            self.stages.clear()


def cli_env(home: Path, base_url: str, config: dict[str, Any] | None = None) -> dict[str, str]:
    """An isolated environment; ``config`` becomes the TOML config file (Settings field names)."""
    config_path = home / "config.toml"
    home.mkdir(parents=True, exist_ok=True)
    lines = [f"{key} = {value!r}" if not isinstance(value, bool) else f"{key} = {str(value).lower()}"
             for key, value in (config or {}).items()]
    config_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "RESEARCH_AGENT_CACHE_DIR": str(home / "cache"),
        "RESEARCH_AGENT_CONFIG": str(config_path),
        "NO_COLOR": "1",
        "OPENAI_BASE_URL": base_url,
    }


def run_cli(env: dict[str, str], *args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(CLI), *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout
    )


def with_default_sigint(argv: list[str]) -> list[str]:
    """``argv`` started with SIGINT at its default disposition, whatever this process inherited.

    A shell that starts a job in the background without job control ignores SIGINT for it,
    and an ignored signal stays ignored across exec: the CLI would never see a test's Ctrl-C.
    """
    reset = "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])"
    return [sys.executable, "-c", reset, *argv]


def start_cli(env: dict[str, str], *args: str, cwd: Path) -> subprocess.Popen:
    return subprocess.Popen(
        with_default_sigint([str(CLI), *args]), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=env, cwd=cwd,
    )


def message_lines(stderr: str) -> list[str]:
    """stderr without the progress lines: what the user is told."""
    return [line for line in stderr.splitlines() if line.strip() and not line.startswith(PROGRESS)]


def temp_files(reports: Path) -> list[Path]:
    return sorted(p for folder in (reports, reports / "meta") if folder.is_dir()
                  for p in folder.iterdir() if p.name.endswith(TEMP_SUFFIX))


def check_report(path: Path) -> dict[str, Any]:
    """A report is complete: front matter, a title, a Sources section; return its front matter."""
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n"), f"{path.name}: no front matter"
    front = yaml.safe_load(text.split("---\n", 2)[1])
    assert isinstance(front, dict) and front.get("query"), f"{path.name}: bad front matter"
    assert "\n# " in text and "\n## Sources" in text and text.endswith("\n"), f"{path.name}: incomplete report"
    if front.get("gate_decision") == "full_report":
        assert source_entries(text), f"{path.name}: a full report without source entries"
    return front


def check_folder(reports: Path) -> dict[str, list[Path]]:
    """Every report, run record and critique in ``reports`` is complete and consistent.

    Returns the files found by kind. A run record always names a report that exists
    (the report is written first); a critique always names a run record's report.
    """
    from research_agent.memory.store.files import load_critique

    found: dict[str, list[Path]] = {"reports": [], "records": [], "critiques": []}
    if not reports.is_dir():
        return found
    for path in sorted(p for p in reports.glob("*.md") if not p.name.startswith("batch-")):  # not a batch's page
        check_report(path)
        found["reports"].append(path)
    meta = reports / "meta"
    for path in sorted(meta.glob("*.yaml")) if meta.is_dir() else ():
        if path.name.startswith("run-"):
            record = yaml.safe_load(path.read_text(encoding="utf-8"))
            assert isinstance(record, dict) and record.get("id") == path.stem.removeprefix("run-"), path.name
            report = Path(record["report_path"])
            report = report if report.is_absolute() else reports / report.name
            assert report.is_file(), f"{path.name} names a missing report"
            assert check_report(report)["query"] == record["query"], f"{path.name}: report of another query"
            assert record.get("usage") and record.get("finished"), f"{path.name}: incomplete record"
            found["records"].append(path)
        elif path.name.startswith("batch-"):
            continue  # a batch's state (tests/test_batch_* read it)
        elif path.name.startswith("critique-"):
            critique = load_critique(path, meta_dir=meta)
            record = meta / f"run-{critique.id}.yaml"
            assert record.is_file(), f"{path.name} has no run record"
            assert yaml.safe_load(record.read_text(encoding="utf-8"))["query"] == critique.query
            found["critiques"].append(path)
        else:
            raise AssertionError(f"unexpected file in reports/meta: {path.name}")
    return found


def index_rows(db_path: Path) -> dict[str, list[str]]:
    """{file path: [its passages in order]} from a corpus index, after an integrity check."""
    conn = sqlite3.connect(db_path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        orphans = conn.execute("SELECT count(*) FROM passages WHERE file_id NOT IN (SELECT id FROM files)")
        assert orphans.fetchone()[0] == 0
        rows: dict[str, list[str]] = {}
        for path, body in conn.execute(
            "SELECT f.path, p.body FROM files f JOIN passages p ON p.file_id = f.id "
            "WHERE f.skip_reason IS NULL ORDER BY f.path, p.seq"
        ):
            rows.setdefault(path, []).append(body)
        return rows
    finally:
        conn.close()


def fresh_index_rows(corpus: Path, scratch: Path) -> dict[str, list[str]]:
    """What an index built from scratch over ``corpus`` holds."""
    index = CorpusIndex(corpus, scratch)
    index.refresh()
    return index_rows(index.db_path)


def _mount(*args: str) -> None:
    subprocess.run(["mount", *args], check=True, capture_output=True, timeout=30)


@contextlib.contextmanager
def mounted(*args: str, target: Path) -> Iterator[Path]:
    """Mount (root only) and always unmount; skip the test when mounting is not possible."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("needs root and mount(8) to make a real full or read-only file system")
    target.mkdir(parents=True, exist_ok=True)
    try:
        _mount(*args, str(target))
    except (subprocess.CalledProcessError, OSError) as exc:
        detail = exc.stderr.strip() if isinstance(exc, subprocess.CalledProcessError) else exc
        pytest.skip(f"cannot mount here ({detail}); run as root with CAP_SYS_ADMIN")
    try:
        yield target
    finally:
        subprocess.run(["umount", "-l", str(target)], capture_output=True, timeout=30)
