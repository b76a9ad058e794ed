"""docs/configuration.md stays true: every setting has a meaning, every option its help, the
example config.toml loads to the defaults, and the committed page is what the script writes."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

import pytest

from research_agent.config import ENV_VARS, Settings, load_settings
from tools import config_reference as ref

FIX = "add it to MEANINGS in tools/config_reference.py, then run `python tools/config_reference.py`"


def test_every_setting_has_a_meaning_and_no_meaning_is_left_over() -> None:
    names = {f.name for f in fields(Settings)}
    assert sorted(names - set(ref.MEANINGS)) == [], f"settings without a meaning: {FIX}"
    assert sorted(set(ref.MEANINGS) - names) == [], "meanings of settings that no longer exist"
    assert all(text.strip() for text in ref.MEANINGS.values())


def test_every_option_and_argument_has_help_text() -> None:
    missing = [
        f"{' '.join(path)} {param.opts[0]}"
        for path, command in ref._commands(ref._root_command())
        for param in command.params
        if not (param.help or "").strip()
    ]
    assert missing == [], "options without help=: the configuration page would not say what they do"


def test_the_page_names_every_setting_flag_and_environment_variable() -> None:
    page = ref.render()
    settings = page.split("## Modes")[0]
    for field in fields(Settings):
        assert f"| `{field.name}` |" in settings
    for var in ENV_VARS:
        assert f"`{var}`" in settings
    for path, command in ref._commands(ref._root_command()):
        section = page.split(f"### {' '.join(path)}\n", 1)[1].split("\n### ", 1)[0]
        for param in command.params:
            assert f"| {ref._code(param.get_help_record(ref.typer.Context(command))[0])} |" in section


def test_run_flags_are_found_through_the_command_itself() -> None:
    flags = ref.setting_flags()
    assert flags["mode"] == ["`--quick`", "`--standard`", "`--deep`"]
    assert flags["respect_robots"] == ["`--ignore-robots`"]
    assert flags["run_timeout"] == ["`--timeout`"]
    assert flags["cache_dir"] == ["`--cache-dir` (corpus index, corpus search)"]
    assert "api_key" not in flags  # the key is never a flag: every user can read a command line


def test_other_flags_that_no_longer_exist_fail_the_script() -> None:
    with pytest.raises(LookupError, match="corpus index has no --cache-folder"):
        ref.setting_flags({"cache_dir": ("--cache-folder", ("corpus index",))})


def test_the_example_config_loads_to_the_defaults(tmp_path: Path) -> None:
    example = tmp_path / "config.toml"
    example.write_text(ref.example_config(), encoding="utf-8")
    absent = tmp_path / "absent.toml"
    assert load_settings(env={}, config_file=example) == load_settings(env={}, config_file=absent)


def test_every_commented_out_example_is_a_valid_setting(tmp_path: Path) -> None:
    lines = ref.example_config().splitlines()
    names = {f.name for f in fields(Settings)}
    commented = [m for line in lines if (m := re.match(r"# (\w+) = (.+)$", line)) and m.group(1) in names]
    unset = {f.name for f in fields(Settings) if ref._default(f.name) is None}
    assert {m.group(1) for m in commented} == unset | set(ref.SHOWN_DEFAULTS)
    assert all(m.group(2) != '""' for m in commented)
    example = tmp_path / "config.toml"
    example.write_text("\n".join(f"{m.group(1)} = {m.group(2)}" for m in commented) + "\n", encoding="utf-8")
    settings = load_settings(env={}, config_file=example)
    assert settings.max_sources == 12 and settings.output == Path("answer.md")
    assert settings.cache_dir == Path("~/.cache/research-agent").expanduser()


def test_the_committed_page_is_what_the_script_writes() -> None:
    stale = "docs/configuration.md is stale: run `python tools/config_reference.py`"
    assert ref.PAGE.read_text(encoding="utf-8") == ref.render(), stale
