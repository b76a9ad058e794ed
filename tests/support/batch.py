"""Running ``research-agent batch`` in-process (Typer's CliRunner) against a model passed in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from research_agent.cli.batch import BatchDeps, app
from research_agent.config import load_settings
from tests.support.llm import Sleeps
from tests.support.pipeline import QUERY

QUESTIONS = (
    QUERY,
    "How does autovacuum reclaim space from dead tuples in PostgreSQL?",
    "What does VACUUM FULL do to a table's file in PostgreSQL?",
    "Why does PostgreSQL keep dead tuples after an update until VACUUM?",
    "How does the PostgreSQL visibility map help VACUUM skip pages?",
)


def questions_file(tmp_path: Path, *lines: str, name: str = "questions.txt") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def batch_deps(tmp_path: Path, model: Any, *, sleep: Any = None, **base: Any) -> BatchDeps:
    """Settings as the real loader makes them (no environment, no config file), ``model`` for every
    call, sleeps that return at once; ``base``: settings as if from the config file."""
    defaults = {
        "reports_dir": tmp_path / "reports",
        "cache_dir": tmp_path / "cache",
        "state_dir": tmp_path / "state",  # never the real home's
        "context_path": "none",
    }

    def settings(overrides: Any) -> Any:
        return load_settings({**defaults, **base, **overrides}, env={}, config_file=tmp_path / "no-config.toml")

    return BatchDeps(load_settings=settings, make_model=lambda _settings, _http: model, sleep=sleep or Sleeps())


def run_batch(tmp_path: Path, deps: BatchDeps, *args: str) -> Any:
    """``research-agent batch ARGS`` with ``deps``."""
    return CliRunner().invoke(app, list(args), obj=deps)


def saved_state(reports: Path) -> tuple[Path, dict]:
    """The one batch-<id>.yaml in ``reports/meta``, and its content."""
    [path] = sorted((reports / "meta").glob("batch-*.yaml"))
    return path, yaml.safe_load(path.read_text(encoding="utf-8"))


def asked(model: Any, question: str) -> int:
    """How many calls of ``model`` were about ``question``."""
    return sum(1 for request in model.requests if question in request.user)
