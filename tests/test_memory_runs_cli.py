"""Naming runs in the memory commands, and failed critiques made visible and retried."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from research_agent.cli.memory import app
from research_agent.config import Settings
from research_agent.errors import ConfigError, LLMError
from research_agent.memory.critique.schedule import after_report, critique_now
from research_agent.memory.store.failures import failure_path, load_failures, record_failure
from research_agent.run_refs import Runs, short_id
from tests.conftest import ScriptedModel
from tests.support.critique import ANSWER, RUN_ID, make_record
from tests.support.memory import NOW, make_critique, put
from tests.support.memory_cli import deps_for, root_app


def invoke(target, args: list[str], deps):
    return CliRunner().invoke(target, args, obj=deps)


@pytest.fixture
def reports(tmp_path: Path) -> Path:
    (tmp_path / "reports" / "meta").mkdir(parents=True)
    return tmp_path / "reports"


def test_list_shows_short_ids_not_seventy_characters(reports: Path) -> None:
    critiques = [make_critique(n, query=f"how does pathlib handle case {n}") for n in range(3)]
    for critique in critiques:
        put(reports / "meta", critique)
    result = invoke(app, ["list"], deps_for(reports))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    for critique in critiques:
        short = short_id(critique.id)
        assert len(short) == 7 and any(line.startswith(f"│ {short} │") for line in lines), result.output
        assert critique.id not in result.output
    assert max(len(line) for line in lines) <= 120
    data = json.loads(invoke(app, ["list", "--json"], deps_for(reports)).output)
    assert [c["short_id"] for c in data["critiques"]] == [short_id(c.id) for c in critiques]


@pytest.mark.parametrize("ref", ["short", "prefix5", "slug", "latest", "latest~0", "full", "file"])
def test_show_accepts_every_way_of_naming_a_critique(reports: Path, ref: str) -> None:
    newest, older = make_critique(0, query="pathlib paths"), make_critique(1, query="asyncio tasks")
    put(reports / "meta", newest)
    put(reports / "meta", older)
    given = {"short": short_id(newest.id), "prefix5": short_id(newest.id)[:5], "slug": "pathlib",
             "latest": "latest", "latest~0": "latest~0", "full": newest.id,
             "file": f"reports/meta/critique-{newest.id}.yaml"}[ref]  # fmt: skip
    result = invoke(app, ["show", given], deps_for(reports))
    assert result.exit_code == 0, result.output
    assert f"id: {newest.id}" in result.output and f"(short id {short_id(newest.id)})" in result.output
    older_shown = invoke(app, ["show", "latest~1", "--json"], deps_for(reports))
    assert json.loads(older_shown.output)["id"] == older.id


def test_an_ambiguous_prefix_is_an_error_listing_the_candidates(reports: Path) -> None:
    first, second = make_critique(0, query="pathlib one"), make_critique(1, query="pathlib two")
    put(reports / "meta", first)
    put(reports / "meta", second)
    result = invoke(app, ["show", "pathlib"], deps_for(reports))
    assert result.exit_code == 2
    assert result.output.startswith("error: 'pathlib' is ambiguous: it names 2 critiques: ")
    assert f"{short_id(first.id)} ({first.id})" in result.output and second.id in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_reports_dir_goes_before_or_after_the_memory_subcommand(reports: Path, tmp_path: Path) -> None:
    put(reports / "meta", make_critique(0))
    elsewhere = deps_for(tmp_path / "unused")
    for args in (["--reports-dir", str(reports), "list", "--json"], ["list", "--json", "--reports-dir", str(reports)]):
        result = invoke(app, args, elsewhere)
        assert result.exit_code == 0, result.output
        assert len(json.loads(result.output)["critiques"]) == 1
    for command in (["show", "latest"], ["validate"], ["prune", "--yes"], ["stats"], ["effects"], ["retry", "--all"],
                    ["lessons", "q", "--domain", "technology"]):  # fmt: skip
        result = invoke(app, [*command, "--reports-dir", str(reports)], elsewhere)
        assert result.exit_code == 0, (command, result.output)


def test_a_failed_background_critique_leaves_a_record_that_list_shows_and_retry_completes(tmp_path: Path) -> None:
    record = make_record(tmp_path)
    reports, meta = tmp_path / "reports", tmp_path / "reports" / "meta"

    def down(settings: Settings):
        raise LLMError("cannot reach the model endpoint http://127.0.0.1:9/v1")

    with pytest.raises(LLMError):  # what the detached worker runs
        critique_now(record, Settings(reports_dir=reports), make_model=down, now=NOW)
    [failed] = load_failures(meta)
    assert failed.run_id == RUN_ID and "cannot reach the model endpoint" in failed.reason
    assert failed.failed_at.startswith("2026-11-22T12:00")

    listed = invoke(app, ["list"], deps_for(reports))
    assert listed.exit_code == 0
    assert "failed critiques" in listed.output and short_id(RUN_ID) in listed.output
    assert "cannot reach" in listed.output, "the reason is shown"
    data = json.loads(invoke(app, ["list", "--json"], deps_for(reports)).output)
    assert data["failed"][0]["id"] == RUN_ID and data["failed"][0]["short_id"] == short_id(RUN_ID)

    model = ScriptedModel().enqueue("critique", ANSWER)
    retried = invoke(app, ["retry", short_id(RUN_ID)], deps_for(reports, make_model=lambda s: model))
    assert retried.exit_code == 0, retried.output
    assert f"critique of {short_id(RUN_ID)}: mean 3.00/5 (pass)" in retried.output
    assert not failure_path(meta, RUN_ID).exists() and (meta / f"critique-{RUN_ID}.yaml").is_file()
    assert "failed critiques" not in invoke(app, ["list"], deps_for(reports)).output
    model.assert_done()


def test_critique_run_also_clears_the_failure_and_retry_names_what_it_cannot_do(tmp_path: Path) -> None:
    record = make_record(tmp_path)
    reports, meta = tmp_path / "reports", tmp_path / "reports" / "meta"
    record_failure(meta, RUN_ID, "the endpoint timed out", now=NOW)
    nothing = invoke(app, ["retry", "nomatch"], deps_for(reports))
    assert nothing.exit_code == 2 and "no failed critique matches 'nomatch'" in nothing.output
    assert invoke(app, ["retry"], deps_for(reports)).exit_code == 2
    model = ScriptedModel().enqueue("critique", ANSWER)
    done = invoke(root_app(), ["critique", "--run", "latest", "--reports-dir", str(reports)],
                  deps_for(tmp_path / "unused", make_model=lambda s: model))  # fmt: skip
    assert done.exit_code == 0, done.output
    assert load_failures(meta) == [] and record.is_file()


def test_a_critique_that_could_not_even_start_is_recorded_too(tmp_path: Path) -> None:
    record = make_record(tmp_path)

    def cannot_spawn(*args, **kwargs) -> int:
        raise OSError("fork failed")

    scheduled = after_report(record, Settings(reports_dir=tmp_path / "reports"), spawn=cannot_spawn)
    assert scheduled.state == "not_started"
    [failed] = load_failures(tmp_path / "reports" / "meta")
    assert failed.run_id == RUN_ID and "fork failed" in failed.reason


def test_critique_run_on_a_report_or_a_missing_file_says_what_to_pass(tmp_path: Path) -> None:
    make_record(tmp_path)
    reports = tmp_path / "reports"
    deps = deps_for(reports, make_model=lambda s: ScriptedModel())
    report = invoke(root_app(), ["critique", "--run", str(reports / f"{RUN_ID}.md")], deps)
    assert report.exit_code == 2
    assert report.output == (
        f"error: {reports / f'{RUN_ID}.md'} is a report: pass its run record (reports/meta/run-<id>.yaml), "
        f"or its id: research-agent critique --run {Runs.scan(reports).short(RUN_ID)}\n"
    )
    missing = tmp_path / "nope" / "run-x.yaml"
    gone = invoke(root_app(), ["critique", "--run", str(missing)], deps)
    assert gone.exit_code == 2 and gone.output == f"error: run record {missing}: file not found\n"
    by_short = invoke(root_app(), ["critique", "--run", "zzzzzzz"], deps)
    assert by_short.exit_code == 2 and "no run record matches 'zzzzzzz'" in by_short.output


def test_a_config_error_before_the_model_is_recorded_as_a_failure(tmp_path: Path) -> None:
    record = make_record(tmp_path)

    def no_endpoint(settings: Settings):
        raise ConfigError("no model endpoint configured")

    with pytest.raises(ConfigError):
        critique_now(record, Settings(reports_dir=tmp_path / "reports"), make_model=no_endpoint)
    assert [f.reason for f in load_failures(tmp_path / "reports" / "meta")] == ["no model endpoint configured"]
