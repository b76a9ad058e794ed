"""The command line behaves alike everywhere: -v anywhere, one-line usage errors, help a person
reads, one JSON object for --json whatever happens, Ctrl-C on a line of its own."""

from __future__ import annotations

import io
import json
import re

import pytest
from rich.console import Console

from research_agent.cli.progress import RichProgress
from research_agent.cli.usage import hoist_verbose
from research_agent.run_refs import short_id
from tests.support.cli import cli
from tests.support.pipeline import QUERY

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def test_verbosity_flags_move_to_the_front_wherever_they_are() -> None:
    assert hoist_verbose(["run", "q", "-v"]) == ["-v", "run", "q"]
    assert hoist_verbose(["memory", "-vv", "list", "--json"]) == ["-vv", "memory", "list", "--json"]
    assert hoist_verbose(["run", "--", "-v"]) == ["run", "--", "-v"], "after -- it is the question"


@pytest.mark.parametrize("where", ["before", "after"])
def test_v_works_before_or_after_the_command_and_shows_our_debug_lines_not_the_libraries(
    tmp_path, corpus, server, where
) -> None:
    args = ["run", QUERY, "--corpus", str(corpus), "--no-critique", "--quick"]
    args = ["-v", *args] if where == "before" else [*args, "-v"]
    proc = cli(tmp_path, *args, base_url=server.base_url)
    assert proc.returncode == 0, proc.stderr
    ours = [line for line in proc.stderr.splitlines() if line.startswith("DEBUG research_agent")]
    theirs = [line for line in proc.stderr.splitlines() if line.startswith("DEBUG") and line not in ours]
    assert any("stage decompose took" in line for line in ours) and any("run " in line for line in ours), proc.stderr
    assert theirs == []


def test_vv_adds_the_libraries_debug_lines(tmp_path, corpus, server) -> None:
    proc = cli(tmp_path, "run", QUERY, "--corpus", str(corpus), "--no-critique", "--quick", "-vv",
               base_url=server.base_url)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert any(line.startswith("DEBUG research_agent") for line in lines)
    assert any(line.startswith(("DEBUG httpx", "DEBUG httpcore", "DEBUG openai")) for line in lines)


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["mem"], "error: No such command 'mem'. Did you mean 'memory'? (see: research-agent --help)"),
        (["run", QUERY, "--max-sources", "many"], "error: Invalid value for '--max-sources': "),
        (["run"], "error: Missing argument 'QUERY'. Ask a question, or try --sample (see: research-agent run --help)"),
        (["memory", "show"], "error: Missing argument 'ID' (see: research-agent memory show --help)"),
        (["run", QUERY, "--bogus"], "error: No such option: --bogus"),
    ],
)
def test_usage_errors_are_one_line_with_typer_s_suggestion(tmp_path, args, line) -> None:
    proc = cli(tmp_path, *args)
    assert proc.returncode == 2
    assert len(proc.stderr.splitlines()) == 1 and proc.stderr.startswith(line), proc.stderr
    assert proc.stdout == ""


def test_a_json_run_prints_one_object_on_stdout_when_it_fails(tmp_path, corpus) -> None:
    failures = {
        "bad input": (["run", "?", "--json"], 2),
        "no endpoint": (["run", QUERY, "--json", "--corpus", str(corpus)], 2),
        "usage": (["run", QUERY, "--json", "--max-sources", "many"], 2),
        "endpoint down": (["run", QUERY, "--json", "--corpus", str(corpus), "--llm-timeout", "5"], 3),
    }
    for name, (args, code) in failures.items():
        env = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"} if name in ("bad input", "usage", "endpoint down") else {}
        if name == "endpoint down":
            (tmp_path / "config.toml").write_text("llm_max_retries = 0\n")
            env["RESEARCH_AGENT_CONFIG"] = str(tmp_path / "config.toml")
        proc = cli(tmp_path, *args, env=env)
        assert proc.returncode == code, (name, proc.stderr)
        data = json.loads(proc.stdout)  # exactly one object: json.loads refuses anything after it
        assert set(data) == {"error", "exit_code"} and data["exit_code"] == code, name
        assert data["error"] and data["error"] in proc.stderr.replace("error: ", "", 1).strip(), (name, proc.stderr)


def test_a_json_run_that_succeeds_has_an_empty_warnings_list(tmp_path, corpus, server) -> None:
    proc = cli(tmp_path, "run", QUERY, "--corpus", str(corpus), "--json", "--quick", base_url=server.base_url)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["warnings"] == [] and "error" not in data
    assert data["short_id"] == short_id(data["id"]), "the id a person reads, beside the full one"
    proc = cli(tmp_path, "run", QUERY, "--corpus", str(corpus), "--quick", base_url=server.base_url)
    assert re.search(r"^done \([0-9a-f]{7}\): ", proc.stderr, re.M), proc.stderr


def test_help_shows_readable_metavars_and_the_defaults(tmp_path) -> None:
    proc = cli(tmp_path, "run", "--help", env={"COLUMNS": "200"})
    assert proc.returncode == 0
    text = proc.stdout
    assert not re.search(r"<(bool|str|int|float|path|list\[Path\])>", text), text
    assert re.search(r"--corpus DIR\s", text) and re.search(r"--timeout SECONDS\s", text)
    for option, default in (("--max-sources N", "quick 6, standard 12, deep 20"), ("--timeout SECONDS", "1800"),
                            ("--min-viability 0-100", "51"), ("--max-plans N", "3")):  # fmt: skip
        words = " ".join(text.replace("│", " ").split())  # run's options are drawn in panels
        described = words.split(option, 1)[1].split(" --", 1)[0]  # the option's own help
        assert f"[default: ({default})]" in described, described
    memory = cli(tmp_path, "memory", "--help", env={"COLUMNS": "200"}).stdout
    assert "memory stats --plot FILE" in memory and "retry" in memory
    assert "research-agent doctor" in cli(tmp_path, "--help", env={"COLUMNS": "200"}).stdout


def test_ctrl_c_prints_its_message_on_a_line_of_its_own_not_on_the_spinner() -> None:
    out = io.StringIO()
    progress = RichProgress(Console(file=out, force_terminal=True, width=80))
    progress.stage("draft", "6 sources")
    message = progress.interrupted()
    progress.console.print(message)
    assert progress.status is None, "the spinner is stopped before the message"
    last = ANSI.sub("", out.getvalue()).replace("\r", "\n").rstrip("\n").splitlines()[-1]
    assert last == "interrupted: stopped before writing anything"
    progress.stop()  # stopping twice is harmless
