"""Settings resolve as flags > environment > config file > defaults."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from research_agent.config import MODES, load_settings
from research_agent.errors import ConfigError
from tests.support.cli import cli


def test_precedence_flags_over_env_over_file_over_defaults(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('model = "from-file"\nfast_model = "fast-from-file"\nmin_viability = 60\n')
    env = {"RESEARCH_AGENT_MODEL": "from-env", "RESEARCH_AGENT_CONFIG": str(config)}
    settings = load_settings({"min_viability": 70}, env=env)
    assert settings.model == "from-env"
    assert settings.fast_model_name == "fast-from-file"
    assert settings.min_viability == 70
    assert settings.max_plans == 3  # default
    assert load_settings(env={"RESEARCH_AGENT_CONFIG": str(config)}).model == "from-file"


def test_mode_providers_and_paths(tmp_path):
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "RESEARCH_AGENT_CACHE_DIR": str(tmp_path / "c")}
    settings = load_settings({"mode": "deep", "corpus_dirs": (str(tmp_path),), "context_path": "none"}, env=env)
    assert settings.mode is MODES["deep"] and settings.providers == ("local",)
    assert settings.context_path is None and settings.cache_dir == tmp_path / "c"
    web = load_settings({"search_providers": "DDGS, searxng"}, env=env)
    assert web.providers == ("ddgs", "searxng")
    assert load_settings(env=env).providers == ("ddgs",)
    assert load_settings(env={**env, "RESEARCH_AGENT_REPORTS_DIR": "out"}).meta_dir == Path("out/meta")


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"mode": "turbo"}, "unknown mode"),
        ({"min_viability": 101}, "min_viability"),
        ({"max_plans": 0}, "max_plans"),
        ({"max_sources": "many"}, "max_sources"),
        ({"control_fraction": 2}, "control_fraction"),
        ({"nonsense": 1}, "unknown setting"),
    ],
)
def test_bad_values_are_one_clear_error(tmp_path, overrides, message):
    with pytest.raises(ConfigError, match=message):
        load_settings(overrides, env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})


def test_a_broken_config_file_is_named(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text("model = [unclosed\n")
    with pytest.raises(ConfigError, match=str(config)):
        load_settings(env={"RESEARCH_AGENT_CONFIG": str(config)})
    config.write_text("colour = 'blue'\n")
    with pytest.raises(ConfigError, match="unknown setting"):
        load_settings(env={"RESEARCH_AGENT_CONFIG": str(config)})


def test_model_call_concurrency_comes_from_the_environment_for_single_slot_servers(tmp_path):
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "RESEARCH_AGENT_LLM_CONCURRENCY": "1"}
    assert load_settings(env=env).llm_concurrency == 1
    with pytest.raises(ConfigError, match="llm_concurrency"):
        load_settings(env={**env, "RESEARCH_AGENT_LLM_CONCURRENCY": "0"})


def _special(tmp_path: Path, kind: str) -> Path:
    if kind == "missing":
        return tmp_path / "nowhere.toml"
    if kind == "folder":
        (tmp_path / "folder.toml").mkdir()
        return tmp_path / "folder.toml"
    if kind == "fifo":
        os.mkfifo(tmp_path / "fifo.toml")
        return tmp_path / "fifo.toml"
    return Path("/dev/zero")


@pytest.mark.parametrize(
    ("kind", "reason"),
    [("missing", "file not found"), ("folder", "not a regular file"), ("fifo", "not a regular file"),
     ("device", "not a regular file")],
)
def test_a_config_file_the_user_named_must_be_a_readable_file(tmp_path: Path, kind: str, reason: str) -> None:
    path = _special(tmp_path, kind)
    with pytest.raises(ConfigError) as info:
        load_settings(env={"RESEARCH_AGENT_CONFIG": str(path)})
    assert str(path) in str(info.value) and reason in str(info.value) and "\n" not in str(info.value)


def test_the_default_config_path_may_be_absent(tmp_path: Path) -> None:
    assert load_settings(env={"XDG_CONFIG_HOME": str(tmp_path / "nothing-here")}).model == "gpt-4o-mini"


@pytest.mark.parametrize("kind", ["missing", "fifo", "device"])
def test_the_cli_names_a_config_file_that_is_not_there_in_one_line_and_exits_2(tmp_path: Path, kind: str) -> None:
    path = _special(tmp_path, kind)
    proc = cli(tmp_path, "memory", "list", env={"RESEARCH_AGENT_CONFIG": str(path)})
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert proc.stderr.startswith(f"error: config file {path}:") and proc.stderr.count("\n") == 1, proc.stderr


@pytest.mark.parametrize(
    ("var", "value", "setting"),
    [("MIN_VIABILITY_SCORE", "x", "min_viability"), ("MAX_REVISIONS", "99", "max_revisions"),
     ("MAX_PLANNING_ITERATIONS", "2.5", "max_plans"), ("MIN_VIABILITY_SCORE", "nan", "min_viability")],
)
def test_a_bad_unprefixed_variable_is_ignored_with_one_warning_naming_it(tmp_path, caplog, var, value, setting):
    """Issue 43: a stray MIN_VIABILITY_SCORE=x left by another tool broke every run."""
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), var: value}
    with caplog.at_level("WARNING", logger="research_agent.config"):
        settings = load_settings(env=env)
    assert getattr(settings, setting) == getattr(load_settings(env={"XDG_CONFIG_HOME": env["XDG_CONFIG_HOME"]}), setting)
    (warning,) = [r.getMessage() for r in caplog.records if var in r.getMessage()]
    assert warning.startswith(f"ignoring {var}=") and setting in warning and "\n" not in warning


def test_a_good_unprefixed_variable_still_counts_and_the_prefixed_name_wins(tmp_path):
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "MIN_VIABILITY_SCORE": "60", "MAX_REVISIONS": "1"}
    settings = load_settings(env=env)
    assert (settings.min_viability, settings.max_revisions) == (60, 1)
    both = load_settings(env={**env, "RESEARCH_AGENT_MIN_VIABILITY": "70", "RESEARCH_AGENT_MAX_REVISIONS": "0"})
    assert (both.min_viability, both.max_revisions) == (70, 0)
    bad_old = load_settings(env={**env, "MAX_PLANNING_ITERATIONS": "x", "RESEARCH_AGENT_MAX_PLANS": "5"})
    assert bad_old.max_plans == 5
    with pytest.raises(ConfigError, match="max_plans"):  # a prefixed name is the user's own: still an error
        load_settings(env={**env, "RESEARCH_AGENT_MAX_PLANS": "x"})


def test_the_cli_runs_with_a_stray_unprefixed_variable_and_says_so_once(tmp_path: Path) -> None:
    proc = cli(tmp_path, "memory", "list", "--reports-dir", str(tmp_path / "r"), env={"MIN_VIABILITY_SCORE": "x"})
    assert proc.returncode == 0, proc.stderr
    (line,) = [line for line in proc.stderr.splitlines() if "MIN_VIABILITY_SCORE" in line]
    assert "ignoring MIN_VIABILITY_SCORE='x'" in line
