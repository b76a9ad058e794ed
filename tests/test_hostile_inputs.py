"""Hostile input files and numbers, through the installed CLI: one line, a clean exit, never a crash.

A file nested 60,000 levels deep (it fits the 64 KB critique cap) used to crash the
process inside libyaml's C composer (exit 139), so these run the real CLI in a
subprocess: a crash there fails the test instead of killing the test run.
"""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path

import pytest
import yaml

from research_agent.config import NUMBER_RANGES, Settings, load_settings
from research_agent.errors import ConfigError, InputError
from research_agent.llm import PriceTable
from research_agent.review.rules import load_rules
from research_agent.run.context import load_context
from tests.support.cli import cli
from tests.support.critique import RUN_ID, make_record
from tests.support.memory import make_critique, put, put_text
from tests.support.pipeline import QUERY

DEEP = "[" * 60_000
NO_MODEL = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}  # never reached: every case fails first


def one_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, text
    return lines[0]


@pytest.fixture
def deep_meta(tmp_path: Path) -> tuple[Path, str]:
    """A reports folder with one good critique and one nested 60,000 levels deep."""
    meta = tmp_path / "reports" / "meta"
    put(meta, make_critique(1))
    bad = put_text(meta, make_critique(0), DEEP)
    assert bad.stat().st_size < 64 * 1024
    return tmp_path / "reports", bad.name


REASON = "document nested too deeply (more than 100 levels)"


@pytest.mark.parametrize(
    ("args", "code", "expected"),
    [
        (["validate"], 1, "invalid  {name}: " + REASON),
        (["lessons", "q", "--domain", "technology"], 0, "  {name}: invalid: " + REASON),
        (["list"], 0, "1 invalid critique file(s) skipped; run `research-agent memory validate`"),
        (["stats"], 0, "1 invalid critique file(s) not counted; run `research-agent memory validate`"),
        (["prune", "--keep", "1", "--yes"], 0, "removed {name}"),
    ],
)
def test_a_deeply_nested_critique_is_named_by_every_memory_command(
    tmp_path: Path, deep_meta: tuple[Path, str], args: list[str], code: int, expected: str
) -> None:
    reports, name = deep_meta
    proc = cli(tmp_path, "memory", "--reports-dir", str(reports), *args)
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)
    assert expected.format(name=name) in proc.stdout.splitlines()


def test_list_json_gives_the_reason(tmp_path: Path, deep_meta: tuple[Path, str]) -> None:
    reports, name = deep_meta
    proc = cli(tmp_path, "memory", "--reports-dir", str(reports), "list", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["invalid"] == [{"file": name, "reason": REASON}]


def test_critique_of_a_deeply_nested_run_record_is_one_line(tmp_path: Path) -> None:
    record = make_record(tmp_path)
    record.write_text("id: " + DEEP)
    proc = cli(tmp_path, "critique", "--run", str(record), env=NO_MODEL)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert one_line(proc.stderr) == f"error: run record {record}: {REASON}"


def test_a_run_skips_a_deeply_nested_critique(tmp_path: Path, deep_meta, corpus, server) -> None:
    reports, name = deep_meta
    proc = cli(tmp_path, "run", QUERY, "--quick", "--corpus", str(corpus), "--reports-dir", str(reports),
               base_url=server.base_url)
    assert proc.returncode == 0, (proc.returncode, proc.stderr)
    record = yaml.safe_load(next((reports / "meta").glob("run-*.yaml")).read_text())
    assert {"file": name, "reason": f"invalid: {REASON}"} in record["lessons"]["excluded"]


def test_deeply_nested_front_matter_and_rules_are_one_line_errors(tmp_path: Path) -> None:
    report = tmp_path / "report.md"
    report.write_text("---\nquery: " + "[" * 5000 + "\n---\n# Title\n\nText.\n")
    proc = cli(tmp_path, "review", str(report))
    assert proc.returncode == 2, proc.stderr
    assert one_line(proc.stderr) == "error: front matter nested too deeply (more than 100 levels)"
    rules = tmp_path / "rules.yaml"
    rules.write_text("rules: " + "[" * 5000)
    report.write_text("# Title\n\nText.\n")
    proc = cli(tmp_path, "review", str(report), "--rules", str(rules))
    assert proc.returncode == 2, proc.stderr
    assert one_line(proc.stderr) == f"error: rules file {rules}: not valid YAML ({REASON})"


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ("x = " + "[" * 5000, "nested too deeply"),
        ("model" + ".a" * 5000 + " = 1", "nested too deeply"),
        ("max_sources = 1e400", "setting max_sources: inf is not a finite number"),
        ("lesson_ttl_days = 1e308", "lesson_ttl_days must be above 0 to 36500, not 1e+308"),
        ("run_timeout = nan", "setting run_timeout: nan is not a finite number"),
        ("max_plans = 2.5", "setting max_plans: 2.5 is not a whole number"),
        ("model = {a = 1}", "setting model: expected text"),
    ],
)
def test_a_bad_config_file_is_one_line_and_exit_2(tmp_path: Path, config: str, message: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(config + "\n")
    proc = cli(tmp_path, "memory", "list", env={"RESEARCH_AGENT_CONFIG": str(path)})
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert message in one_line(proc.stdout + proc.stderr)


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "1e400"])
def test_a_timeout_that_is_not_a_number_is_refused(tmp_path: Path, corpus, value: str) -> None:
    proc = cli(tmp_path, "run", "why q?", "--corpus", str(corpus), "--timeout", value, env=NO_MODEL)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "run_timeout" in one_line(proc.stderr)


def test_every_numeric_setting_has_a_range() -> None:
    numeric = {f.name for f in fields(Settings) if str(f.type).split(" ")[0] in ("int", "float")}
    assert numeric == set(NUMBER_RANGES)


@pytest.mark.parametrize("name", sorted(NUMBER_RANGES))
@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf"), 1e300, -1e300, True])
def test_every_numeric_setting_must_be_finite_and_in_range(tmp_path: Path, name: str, value: object) -> None:
    with pytest.raises(ConfigError, match=name) as caught:
        load_settings({name: value}, env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("name", sorted(NUMBER_RANGES))
def test_every_numeric_setting_accepts_its_own_default(tmp_path: Path, name: str) -> None:
    settings = load_settings({}, env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    value = getattr(settings, name)
    if value is not None:
        assert getattr(load_settings({name: str(value)}, env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")}),
                       name) == value


@pytest.mark.parametrize(
    ("name", "text", "why"),
    [
        ("deep.json", "[" * 60_000, "nested too deeply"),
        ("deep.toml", "x = " + "[" * 60_000, "nested too deeply"),
        ("dotted.toml", "m" + ".a" * 5000 + " = 1", "nested too deeply"),
        ("nan.toml", "m = {input = nan, output = 1}", "non-negative number for 'input'"),
        ("inf.json", '{"m": {"input": 1, "output": 1e400}}', "non-negative number for 'output'"),
    ],
)
def test_a_bad_price_table_is_a_config_error(tmp_path: Path, name: str, text: str, why: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ConfigError, match=f"price table {path}") as caught:
        PriceTable.load(path)
    assert why in str(caught.value) and "\n" not in str(caught.value)


# --- symlinks that lead out of their folder ----------------------------------------------------


def test_a_context_file_linked_to_outside_its_folder_is_refused(tmp_path: Path, corpus) -> None:
    link = tmp_path / "research_context.md"
    link.symlink_to("/etc/passwd")
    with pytest.raises(InputError, match="leads outside"):
        load_context(link)
    proc = cli(tmp_path, "run", "why q?", "--corpus", str(corpus), env=NO_MODEL)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert one_line(proc.stderr) == f"error: context file research_context.md: leads outside {tmp_path}"
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "mine.md").write_text("We sell heat pumps in Norway.")
    link.unlink()
    link.symlink_to(tmp_path / "notes" / "mine.md")  # a link inside the folder is fine
    assert "heat pumps in Norway" in load_context(link)


def test_a_rules_file_linked_to_outside_its_folder_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside.yaml"
    outside.write_text("rules: []\n")
    (tmp_path / "project").mkdir()
    link = tmp_path / "project" / "rules.yaml"
    link.symlink_to(outside)
    with pytest.raises(InputError, match="leads outside"):
        load_rules(link)


def test_runs_and_critiques_refuse_a_meta_folder_leading_outside(tmp_path: Path, corpus) -> None:
    record = make_record(tmp_path)
    reports = tmp_path / "reports"
    (reports / "meta").rename(tmp_path / "elsewhere")
    (reports / "meta").symlink_to(tmp_path / "elsewhere")
    proc = cli(tmp_path, "critique", "--run", str(record), env=NO_MODEL)
    assert proc.returncode == 2 and "leads outside" in one_line(proc.stderr), proc.stderr
    proc = cli(tmp_path, "run", "why q?", "--corpus", str(corpus), "--reports-dir", str(reports), env=NO_MODEL)
    assert proc.returncode == 2 and "leads outside" in one_line(proc.stderr), proc.stderr
    assert not list((tmp_path / "elsewhere").glob(f"critique-{RUN_ID}*"))
