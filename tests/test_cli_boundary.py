"""The CLI's one error boundary, the run options as settings, and ``--version``."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

import research_agent
from research_agent.cli import app as main_app
from research_agent.cli.boundary import guarded
from research_agent.cli.memory import MemoryDeps
from research_agent.cli.memory import app as memory_app
from research_agent.cli.run import settings_overrides
from research_agent.config import Settings, load_settings
from research_agent.errors import InputError, StorageError


def one_command(raised: BaseException) -> typer.Typer:
    app = typer.Typer()

    @app.command()
    @guarded
    def fail() -> None:
        raise raised

    return app


@pytest.mark.parametrize(
    ("raised", "code", "line"),
    [
        (StorageError("disk full while writing [/red] x"), 5, "error: disk full while writing [/red] x"),
        (InputError("bad\nquery"), 2, "error: bad query"),
        (RuntimeError("boom"), 1, "error: unexpected RuntimeError: boom (run with -v for details)"),
    ],
)
def test_the_boundary_prints_one_line_and_exits_with_the_error_s_code(raised, code, line) -> None:
    result = CliRunner().invoke(one_command(raised), [])
    assert result.exit_code == code
    assert result.output == line + "\n"


def test_typer_s_own_exit_passes_through_the_boundary() -> None:
    result = CliRunner().invoke(one_command(typer.Exit(7)), [])
    assert (result.exit_code, result.output) == (7, "")


def test_an_unexpected_error_in_a_memory_command_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    def broken(overrides) -> Settings:
        raise KeyError("reports_dir")

    result = CliRunner().invoke(memory_app, ["list"], obj=MemoryDeps(load_settings=broken))
    assert result.exit_code == 1
    assert result.output == "error: unexpected KeyError: 'reports_dir' (run with -v for details)\n"


def test_run_options_become_settings_overrides(tmp_path: Path) -> None:
    options = {"quick": True, "corpus": [Path("docs")], "context": "none", "no_cache": True, "wait_critique": True,
               "timeout": 30.0, "search": None, "no_lessons": False}
    overrides = settings_overrides(options)
    assert {k: v for k, v in overrides.items() if v is not None} == {
        "mode": "quick",
        "corpus_dirs": (Path("docs"),),
        "context_path": "none",
        "use_cache": False,
        "wait_critique": True,
        "run_timeout": 30.0,
    }
    settings = load_settings(overrides, env={}, config_file=tmp_path / "none.toml")
    assert settings.mode.name == "quick" and settings.corpus_dirs == (Path("docs"),) and not settings.use_cache
    with pytest.raises(InputError, match="choose one of --quick, --standard, --deep"):
        settings_overrides({"standard": True, "deep": True})


def test_version_flag_prints_the_version_without_a_command() -> None:
    result = CliRunner().invoke(main_app, ["--version"])
    assert (result.exit_code, result.output) == (0, f"research-agent {research_agent.__version__}\n")
