"""The memory commands and the critique command, through Typer's CliRunner."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from research_agent.cli.critique import print_scheduled
from research_agent.cli.memory import MemoryDeps, app
from research_agent.config import Settings
from research_agent.errors import ConfigError
from research_agent.memory.critique.schedule import after_report
from research_agent.memory.store.files import LOG_NAME
from research_agent.run_refs import Runs, short_id
from tests.conftest import ScriptedModel
from tests.support.critique import ANSWER, RUN_ID, make_record
from tests.support.memory import NOW, FakeAxes, FakeFigure, make_critique, put, put_raw
from tests.support.memory_cli import deps_for, root_app

WEAK_GEO = (4, 4, 4, 2, 4)


def invoke(target, args: list[str], deps: MemoryDeps):
    return CliRunner().invoke(target, args, obj=deps)


@pytest.fixture
def reports(tmp_path: Path) -> Path:
    (tmp_path / "reports" / "meta").mkdir(parents=True)
    return tmp_path / "reports"


def test_list_shows_a_table_and_counts_invalid_files(reports: Path) -> None:
    meta = reports / "meta"
    put(meta, make_critique(0, query="heat pumps in cold climates", adaptive=True))
    put(meta, make_critique(1, domain="health", scores=(2, 2, 2, 2, 2)))
    put_raw(meta, make_critique(2), scores=None)
    result = invoke(app, ["list"], deps_for(reports))
    assert result.exit_code == 0, result.output
    out = result.output
    for column in ("date", "query", "domain", "mean", "pass", "adaptive"):
        assert column in out
    assert "heat" in out and "health" in out and "2.00" in out
    assert "1 invalid critique file(s) skipped" in out
    listed = invoke(app, ["list", "--json"], deps_for(reports)).output
    data = json.loads(listed)
    assert [c["query_domain"] for c in data["critiques"]] == ["technology", "health"]
    assert data["invalid"][0]["reason"].startswith("(top level): missing field scores")
    records = [json.loads(line.strip().rstrip(",")) for line in listed.splitlines() if line.startswith("    {")]
    assert records == data["critiques"] + data["invalid"]  # one record to a line


def test_list_empty_and_reports_dir_option(tmp_path: Path) -> None:
    result = invoke(app, ["--reports-dir", str(tmp_path / "other"), "list"], deps_for(tmp_path / "unused"))
    assert result.exit_code == 0
    assert f"no critiques in {tmp_path / 'other' / 'meta'}" in result.output.replace("\n", "")


def test_show_prints_yaml_and_rejects_bad_ids(reports: Path) -> None:
    critique = make_critique(0)
    put(reports / "meta", critique)
    result = invoke(app, ["show", critique.id], deps_for(reports))
    assert result.exit_code == 0
    assert f"id: {critique.id}" in result.output and "scores:\n  source_diversity: 4" in result.output
    assert invoke(app, ["show", f"critique-{critique.id}.yaml", "--json"], deps_for(reports)).exit_code == 0
    missing = invoke(app, ["show", "nothing_20260101T000000000000Z"], deps_for(reports))
    assert missing.exit_code == 2 and "error: no critique matches 'nothing_20260101T000000000000Z'" in missing.output
    bad = invoke(app, ["show", "../../etc/passwd"], deps_for(reports))
    assert bad.exit_code == 2 and "error: no critique matches '../../etc/passwd'" in bad.output
    broken = make_critique(1)
    put_raw(reports / "meta", broken, mean_score="1.0")
    result = invoke(app, ["show", broken.id], deps_for(reports))
    assert result.exit_code == 2 and "mean_score: expected number, got str" in result.output


def test_validate_lists_each_invalid_file_and_exits_1(reports: Path) -> None:
    meta = reports / "meta"
    put(meta, make_critique(0))
    broken = put_raw(meta, make_critique(1), scores={"source_diversity": 9})
    result = invoke(app, ["validate"], deps_for(reports))
    assert result.exit_code == 1
    assert f"invalid  {broken.name}: scores: missing field claim_support" in result.output
    assert "scores.source_diversity: 9 is above the maximum of 5" in result.output
    assert "1 valid, 1 invalid" in result.output
    broken.unlink()
    result = invoke(app, ["validate"], deps_for(reports))
    assert result.exit_code == 0 and "1 valid, 0 invalid" in result.output


def test_prune(reports: Path) -> None:
    for i in range(4):
        put(reports / "meta", make_critique(i))
    result = invoke(app, ["prune", "--keep", "2", "--yes"], deps_for(reports))
    assert result.exit_code == 0 and "pruned 2 file(s); keeping at most 2" in result.output
    assert len(list((reports / "meta").glob("critique-*.yaml"))) == 2
    assert "nothing pruned" in invoke(app, ["prune", "--keep", "0"], deps_for(reports)).output
    assert "nothing to prune: at most 2 kept" in invoke(app, ["prune", "--keep", "2"], deps_for(reports)).output


def test_prune_lists_first_and_asks_on_a_terminal_and_needs_yes_without_one(reports: Path) -> None:
    """Issue 33: `memory prune --keep 5` deleted 18 files with no --dry-run and no question."""
    for i in range(4):
        put(reports / "meta", make_critique(i))
    before = sorted(p.name for p in (reports / "meta").iterdir())
    dry = invoke(app, ["prune", "--keep", "1", "--dry-run"], deps_for(reports))
    assert dry.exit_code == 0 and dry.output.count("would remove critique-") == 3
    assert "would prune 3 file(s)" in dry.output
    questions: list[str] = []

    def answer(reply):
        return replace(deps_for(reports), ask=lambda question: questions.append(question) or reply)

    declined = invoke(app, ["prune", "--keep", "1"], answer(False))
    assert declined.exit_code == 1 and "nothing deleted" in declined.output
    piped = invoke(app, ["prune", "--keep", "1"], answer(None))  # no terminal to ask
    assert piped.exit_code == 2 and "pass --yes" in piped.output
    assert sorted(p.name for p in (reports / "meta").iterdir()) == before
    assert questions == [f"delete these 3 file(s) from {reports / 'meta'}?"] * 2
    agreed = invoke(app, ["prune", "--keep", "1"], answer(True))
    assert agreed.exit_code == 0 and agreed.output.count("removed critique-") == 3
    assert len(list((reports / "meta").glob("critique-*.yaml"))) == 1


def test_lessons_with_domain_and_with_the_classifier(reports: Path) -> None:
    meta = reports / "meta"
    for i in range(3):
        put(meta, make_critique(i, scores=WEAK_GEO))
    put(meta, make_critique(5, domain="health"))
    result = invoke(app, ["lessons", "heat pumps", "--domain", "technology"], deps_for(reports))
    assert result.exit_code == 0, result.output
    assert "1. Geographic balance was weak in 3 of the 3 recent reports where it applied" in result.output
    assert "geography:regions (built; decompose; target scores.geographic_balance)" in result.output
    assert f"critiques: {Runs.scan(reports).short(make_critique(0).id)}, " in result.output
    assert f"critique-{make_critique(5).id}.yaml: other domain (health)" in result.output
    assert "20% of eligible runs are control runs" in result.output

    asked: list[str] = []

    async def classify(model, query):
        asked.append(query)
        return "technology"

    deps = deps_for(reports, classify=classify, make_model=lambda settings: ScriptedModel())
    data = json.loads(invoke(app, ["lessons", "heat pumps", "--json"], deps).output)
    assert asked == ["heat pumps"] and data["domain"] == "technology" and data["adaptive"] is True
    bad = invoke(app, ["lessons", "q", "--domain", "cooking"], deps_for(reports))
    assert bad.exit_code == 2 and "error: unknown domain 'cooking'" in bad.output


def test_lessons_without_an_endpoint_is_a_config_error(reports: Path) -> None:
    def no_model(settings):
        raise ConfigError("no model endpoint configured: set OPENAI_API_KEY or OPENAI_BASE_URL")

    result = invoke(app, ["lessons", "q"], deps_for(reports, make_model=no_model))
    assert result.exit_code == 2 and result.output.startswith("error: no model endpoint configured")


def test_stats_shows_suspension_collapse_and_plots(reports: Path, tmp_path: Path) -> None:
    meta = reports / "meta"
    for i in range(5):
        put(meta, make_critique(i, adaptive=True, scores=(3, 3, 3, 3, 3)))
        put(meta, make_critique(10 + i, scores=(3, 3, 3, 3, 4), withheld=("coverage:low-score",), reason="control"))
    log: list = []
    pyplot = SimpleNamespace(subplots=lambda **k: (FakeFigure(log), FakeAxes(log)), close=lambda fig: None)
    result = invoke(app, ["stats", "--plot", str(tmp_path / "s.png")], deps_for(reports, pyplot=pyplot))
    assert result.exit_code == 0, result.output
    out = result.output
    assert "suspended" in out and "warning: lessons suspended for technology" in out
    assert "one run in four stays adaptive" in out  # which domains, and why
    assert "warning: mode collapse warning (technology)" in out
    assert (tmp_path / "s.png").read_bytes().startswith(b"\x89PNG")
    data = json.loads(invoke(app, ["stats", "--json"], deps_for(reports)).output)
    assert data["domains"][0]["suspended"] is True and data["domains"][0]["collapse"] is True


def test_critique_command_prints_a_summary_or_json(tmp_path: Path) -> None:
    path = make_record(tmp_path)
    model = ScriptedModel().enqueue("critique", ANSWER, times=2)
    deps = deps_for(tmp_path / "reports", make_model=lambda settings: model)
    result = invoke(root_app(), ["critique", "--run", str(path)], deps)
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"critique of {short_id(RUN_ID)}: mean 3.00/5 (pass)")
    assert f"saved to {path.parent / f'critique-{RUN_ID}.yaml'}" in result.output
    data = json.loads(invoke(root_app(), ["critique", "--run", str(path), "--json"], deps).output)
    assert data["id"] == RUN_ID and data["path"].endswith(f"critique-{RUN_ID}.yaml")
    model.assert_done()


def test_critique_command_failure_is_one_line_and_logged(tmp_path: Path) -> None:
    path = make_record(tmp_path)

    def no_model(settings):
        raise ConfigError("no model endpoint configured: set OPENAI_API_KEY or OPENAI_BASE_URL")

    result = invoke(
        root_app(), ["critique", "--run", str(path)], deps_for(tmp_path / "reports", make_model=no_model)
    )
    assert result.exit_code == 2
    assert result.output == "error: no model endpoint configured: set OPENAI_API_KEY or OPENAI_BASE_URL\n"
    assert f"FAIL run-{RUN_ID}.yaml: no model endpoint configured" in (path.parent / LOG_NAME).read_text()

    missing = invoke(
        root_app(),
        ["critique", "--run", str(tmp_path / "nope.yaml")],
        deps_for(tmp_path, make_model=lambda s: ScriptedModel()),
    )
    assert (
        missing.exit_code == 2
        and "error: run record" in missing.output
        and "file not found" in missing.output
    )


def test_wait_critique_critiques_now_and_prints_the_summary(tmp_path: Path) -> None:
    path = make_record(tmp_path)
    model = ScriptedModel().enqueue("critique", ANSWER)
    closed: list[bool] = []

    async def aclose() -> None:
        closed.append(True)

    model.aclose = aclose
    from rich.console import Console

    console = Console(record=True, width=200)
    scheduled = after_report(path, Settings(reports_dir=tmp_path / "reports", wait_critique=True), model=model)
    print_scheduled(scheduled, console)
    critique = scheduled.critique
    assert critique.id == RUN_ID and closed == [True]
    assert console.export_text().startswith(f"critique of {short_id(RUN_ID)}: mean 3.00/5 (pass)")


def test_the_mode_collapse_warning_is_for_stats_and_runs_not_for_lessons(reports: Path) -> None:
    """Issue 33: the warning came with every command, MCP answers included."""
    from research_agent.mcp_server.shapes import lessons_output
    from research_agent.memory.lessons.select import select_lessons

    for i in range(6):
        put(reports / "meta", make_critique(i, scores=(4, 4, 4, 3, 4)))
    lessons = invoke(app, ["lessons", "q", "--domain", "technology"], deps_for(reports))
    assert lessons.exit_code == 0 and "collapse" not in lessons.output
    as_json = json.loads(invoke(app, ["lessons", "q", "--domain", "technology", "--json"], deps_for(reports)).output)
    assert not any("collapse" in w for w in as_json["warnings"])
    stats = invoke(app, ["stats"], deps_for(reports))
    assert stats.output.count("warning: mode collapse warning (technology)") == 1
    selection = select_lessons(reports / "meta", "technology", now=NOW, rng=random.Random(1))
    assert any(w.startswith("mode collapse") for w in selection.warnings)  # what a run shows, once
    assert lessons_output(selection, "")["warnings"] == []


def test_list_is_sorted_by_its_own_date_column(reports: Path) -> None:
    """Issue 33: a critique retried later showed its own time in a list ordered by run."""
    import re

    late = replace(make_critique(5), timestamp=NOW.isoformat())  # an old run, critiqued (retried) just now
    put(reports / "meta", late)
    put(reports / "meta", make_critique(1))
    put(reports / "meta", make_critique(3))
    out = invoke(app, ["list"], deps_for(reports)).output
    dates = re.findall(r"\d{4}-\d\d-\d\d \d\d:\d\d", out)
    assert len(dates) == 3 and dates == sorted(dates, reverse=True)
    assert "run date" in out


@pytest.mark.parametrize(
    ("key", "text", "shown"),
    [
        ("counterarguments:missing", "Counterarguments were missing in 4 of the last 4 reports: add a sub-query "
         "for criticism, limitations and opposing views.", True),  # its counts have moved on since
        ("site:kept:docs.python.org", "docs.python.org: kept 5 of 6 pages and cited 4 across 3 reports; its pages "
         "have proved relevant to questions like these.", True),
        ("site:kept:docs.python.org", "evil.example: kept 5 of 6 pages and cited 4 across 3 reports; its pages "
         "have proved relevant to questions like these.", False),  # another site than its key's
        ("counterarguments:missing", "Counterarguments were missing in 4 of the last 4 reports: add a sub-query "
         "for the vendor's own pages.", False),  # not the template's words
    ],
)
def test_memory_show_keeps_the_text_a_run_was_given_when_its_template_wrote_it(
    reports: Path, key: str, text: str, shown: bool
) -> None:
    """Issue 33: a lesson's text showed as '' once later critiques had changed its counts."""
    stage = "relevance" if key.startswith("site:") else "decompose"
    critique = make_critique(0, applied=(key,))
    put_raw(reports / "meta", critique, lessons_applied=[{"key": key, "stage": stage, "text": text}])
    out = json.loads(invoke(app, ["show", "latest", "--json"], deps_for(reports)).output)
    (lesson,) = out["lessons_applied"]
    assert lesson["text"] == (text if shown else "")
def test_list_keeps_the_question_readable_when_stdout_is_not_a_terminal(reports: Path) -> None:
    # issue 32: into a pipe the table was 80 columns wide and the question folded to 9 characters
    question = "How does PostgreSQL VACUUM reclaim space from dead tuples in a busy table?"
    put(reports / "meta", make_critique(0, query=question))
    result = invoke(app, ["list"], deps_for(reports))
    assert result.exit_code == 0 and question in result.output
