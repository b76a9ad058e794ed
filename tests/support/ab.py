"""Running ``memory ab`` in-process (Typer's CliRunner) against a model passed in, on a clock that ticks."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import yaml
from typer.testing import CliRunner

from research_agent.cli.memory import MemoryDeps, app
from research_agent.config import load_settings
from research_agent.memory.effects.ab import AB_NAME
from tests.support.memory import NOW
from tests.support.pipeline import QUERY

QUESTIONS = (QUERY, "How does autovacuum reclaim space from dead tuples in PostgreSQL?")


def ticking(start: datetime = NOW):
    """A clock that starts at ``start`` and moves one second per reading (ids stay unique and ordered)."""
    state = {"now": start}

    def clock() -> datetime:
        state["now"] += timedelta(seconds=1)
        return state["now"]

    return clock


def ab_deps(tmp_path: Path, model, **base) -> MemoryDeps:
    """Settings as the real loader makes them (no environment, no config file), ``model`` for every call."""
    defaults = {
        "reports_dir": tmp_path / "reports",
        "cache_dir": tmp_path / "cache",
        "state_dir": tmp_path / "state",  # never the real home's
        "context_path": "none",
    }

    def settings(overrides):
        return load_settings({**defaults, **base, **overrides}, env={}, config_file=tmp_path / "no-config.toml")

    return MemoryDeps(load_settings=settings, make_model=lambda _settings: model, clock=ticking())


def questions_file(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "questions.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run_ab_command(tmp_path: Path, corpus: Path, model, *args: str, questions: Path | None = None, **base):
    """``memory ab QUESTIONS --corpus CORPUS *args``; ``base``: settings as if from the config file."""
    questions = questions or questions_file(tmp_path, "# two questions about VACUUM", QUESTIONS[0], "", QUESTIONS[1])
    command = ["ab", str(questions), "--corpus", str(corpus), *args]
    return CliRunner().invoke(app, command, obj=ab_deps(tmp_path, model, **base))


def saved_ab(reports: Path) -> tuple[Path, dict]:
    """The one ab-<stamp>.yaml in ``reports/meta``, and its content."""
    [path] = [p for p in (reports / "meta").iterdir() if p.name.startswith("ab-")]
    assert AB_NAME.match(path.name)
    return path, yaml.safe_load(path.read_text(encoding="utf-8"))
