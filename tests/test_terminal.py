"""Outside text never drives the terminal: rich markup and control sequences are shown, not obeyed.

Every printing path of the CLI gets the same hostile text: a closing tag with no opening
one (``[/red]`` crashed rich's printer), an opening tag (``[bold red]`` restyled what
followed), a ``[link=...]`` tag (an OSC-8 hyperlink on a terminal), raw ANSI colour
codes and a raw OSC-8 hyperlink. The output must show all of it literally, and carry no
escape character of its own making.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from research_agent.cli import app as main_app
from research_agent.cli import cache as cli_cache
from research_agent.cli import corpus as cli_corpus
from research_agent.cli.memory import app as memory_app
from research_agent.cli.review import app as review_app
from research_agent.cli.terminal import VisibleFormatter, dumps_json, markup, visible, visible_line
from tests.support.cli import CLI
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.memory import make_critique, put
from tests.support.memory_cli import deps_for
from tests.support.pipeline import QUERY, write_docs
from tests.support.reliability import cli_env, message_lines
from tests.support.research_responder import ResearchResponder

TAGS = "[/red] [bold red]boom[/bold red] [link=http://evil.test/]click[/link]"
ANSI = "\x1b[31mred\x1b[0m"
OSC8 = "\x1b]8;;http://evil.test/\x1b\\link\x1b]8;;\x1b\\"
HOSTILE = f"{TAGS} {OSC8} {ANSI}"
SHOWN_ANSI = "\\x1b[31mred\\x1b[0m"  # how the ANSI part must appear: visible, inert


def assert_shown_not_obeyed(output: str, *, tags: bool = True, controls: bool = True) -> None:
    assert "\x1b" not in output and "\x9b" not in output, repr(output)
    if tags:
        assert "[/red]" in output and "[bold red]boom[/bold red]" in output, output
        assert "[link=http://evil.test/]click[/link]" in output, output
    if controls:
        assert SHOWN_ANSI in output, output
    assert "Traceback" not in output and "MarkupError" not in output


# --------------------------------------------------------------------------- the helper


def test_visible_shows_every_control_character_and_keeps_the_text() -> None:
    assert visible("a\x1b[31mb\x07c\rd\x9be\u202ef\u2066g") == "a\\x1b[31mb\\x07c\\x0dd\\x9be\\u202ef\\u2066g"
    assert visible("line one\n\tline two, naïve café — ünïcode") == "line one\n\tline two, naïve café — ünïcode"
    assert visible_line("first\nsecond\x1b[0m  third") == "first second\\x1b[0m third"
    assert markup("[/red] [bold]x[/bold]\x1b") == "\\[/red] \\[bold]x\\[/bold]\\x1b"


def test_markup_renders_as_the_literal_text() -> None:
    from rich.console import Console

    console = Console(record=True, force_terminal=True, width=300)
    console.print(f"[red]error:[/red] {markup(HOSTILE)}")
    text = console.export_text()
    assert text.strip() == f"error: {TAGS} {visible(OSC8)} {SHOWN_ANSI}"
    assert "\x1b]8;" not in console.export_text(styles=True)  # no hyperlink was made


def test_json_stays_valid_and_equal_but_carries_no_raw_c1_or_bidi() -> None:
    data = {"title": "a\x9b31m b\u202e c\x1b[0m d naïve"}
    text = dumps_json(data)
    assert json.loads(text) == data
    assert "\x9b" not in text and "\u202e" not in text and "\x1b" not in text and "naïve" in text


def test_log_records_show_control_characters() -> None:
    record = logging.LogRecord("research_agent.fetch", logging.WARNING, __file__, 1, "fetch %s failed", (ANSI,), None)
    line = VisibleFormatter("%(levelname)s %(name)s: %(message)s").format(record)
    assert line == f"WARNING research_agent.fetch: fetch {SHOWN_ANSI} failed"


# --------------------------------------------------------------------------- run


class _Reject400(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = json.dumps({"error": {"message": HOSTILE, "type": "invalid_request_error"}}).encode()
        self.send_response(400)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        return None


@pytest.fixture
def rejecting_endpoint() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Reject400)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(30)


def run_cli(tmp_path: Path, base_url: str, *args: str) -> subprocess.CompletedProcess:
    env = cli_env(tmp_path / "home", base_url)
    return subprocess.run([str(CLI), *args], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)


def test_run_prints_an_endpoint_400_literally_and_exits_3(tmp_path: Path, rejecting_endpoint: str) -> None:
    corpus = write_docs(tmp_path / "corpus")
    proc = run_cli(tmp_path, rejecting_endpoint, "run", QUERY, "--corpus", str(corpus),
                   "--reports-dir", str(tmp_path / "reports"), "--no-critique")
    assert proc.returncode == 3, proc.stderr
    # decompose and relevance degrade, one warning each; then no answer was read at all: exit 3
    *warnings, line = message_lines(proc.stderr)
    assert len(warnings) == 2 and all(w.startswith("! ") and "HTTP 400" in w for w in warnings), proc.stderr
    assert line.startswith("error: no answer of the model endpoint could be read") and "HTTP 400" in line
    assert_shown_not_obeyed(proc.stderr)


def test_run_prints_a_model_answer_that_fails_validation_literally(tmp_path: Path) -> None:
    corpus = write_docs(tmp_path / "corpus")
    inner = ResearchResponder()

    def responder(body: dict, stage: str) -> str:
        return json.dumps(f"{TAGS} <- my answer") if stage == "skeptic" else inner(body, stage)

    with FakeOpenAIServer(responder) as server:
        proc = run_cli(tmp_path, server.base_url, "run", QUERY, "--corpus", str(corpus),
                       "--reports-dir", str(tmp_path / "reports"), "--no-critique")
    assert proc.returncode == 0, proc.stderr  # the skeptic degrades; its answer is quoted in the warning
    line, _done = message_lines(proc.stderr)
    assert line.startswith("! the skeptic stage got invalid output") and "<- my answer" in line, line
    assert_shown_not_obeyed(proc.stderr, controls=False)


def test_run_prints_a_bad_rule_name_literally(tmp_path: Path) -> None:
    corpus = write_docs(tmp_path / "corpus")
    rules = tmp_path / "rules.yaml"
    rules.write_text(yaml.safe_dump({"rules": [{"name": TAGS, "pattern": "x", "reason": "r", "fix": "f",
                                                "severity": "warning"}]}), encoding="utf-8")
    with FakeOpenAIServer(ResearchResponder()) as server:
        proc = run_cli(tmp_path, server.base_url, "run", QUERY, "--corpus", str(corpus), "--rules", str(rules),
                       "--reports-dir", str(tmp_path / "reports"), "--no-critique")
        assert server.requests == []
    assert proc.returncode == 2, proc.stderr
    (line,) = message_lines(proc.stderr)
    assert line.startswith(f"error: rules file {rules}: rule ")
    assert_shown_not_obeyed(proc.stderr, controls=False)


def test_run_progress_notes_show_a_hostile_folder_name(tmp_path: Path) -> None:
    corpus = write_docs(tmp_path / f"c [bold red]x {ANSI}")
    (corpus / "blob.txt").write_bytes(b"\x00\x01binary\x00" * 100)  # skipped: -v says so, naming the folder
    with FakeOpenAIServer(ResearchResponder()) as server:
        proc = run_cli(tmp_path, server.base_url, "run", QUERY, "--corpus", str(corpus),
                       "--reports-dir", str(tmp_path / "reports"), "--no-critique", "-v")
    assert proc.returncode == 0, proc.stderr
    assert f"… index: c [bold red]x {SHOWN_ANSI}: 5/5 files read" in proc.stderr
    notes = [line for line in proc.stderr.splitlines() if line.endswith("skipped 1 binary")]
    assert notes == [f"INFO research_agent.run.indexing: corpus {tmp_path}/c [bold red]x {SHOWN_ANSI}: "
                     "skipped 1 binary"], proc.stderr  # fmt: skip
    assert "\x1b" not in proc.stderr and "\x1b" not in proc.stdout


# --------------------------------------------------------------------------- review


def test_review_shows_hostile_report_text_and_file_names(tmp_path: Path) -> None:
    report = tmp_path / "report.md"
    report.write_text(f"# Report\n\n## Summary\n\nTODO {HOSTILE}\n", encoding="utf-8")
    rules = tmp_path / "rules.yaml"
    rules.write_text(yaml.safe_dump({"rules": [{"name": "todo", "pattern": "TODO.*", "reason": "r", "fix": "f",
                                                "severity": "critical"}]}), encoding="utf-8")
    result = CliRunner().invoke(review_app, [str(report), "--rules", str(rules)])
    assert result.exit_code == 1
    assert "\x1b" not in result.output and "[bold red]boom[/bold red]" in result.output

    broken = tmp_path / f"broken {ANSI}.md"
    broken.write_bytes(b"\xff\xfe not utf-8")
    result = CliRunner().invoke(review_app, [str(broken)])
    assert result.exit_code == 2
    assert result.output == f"error: report {tmp_path}/broken {SHOWN_ANSI}.md: not UTF-8 text\n"


# --------------------------------------------------------------------------- memory, critique


def test_memory_list_and_show_print_a_planted_query_literally(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    meta = reports / "meta"
    critique = make_critique(0, query=f"heat pumps {TAGS}")
    put(meta, critique)
    deps = deps_for(reports)
    listed = CliRunner().invoke(memory_app, ["list"], obj=deps, env={"FORCE_COLOR": "1", "COLUMNS": "400"})
    assert listed.exit_code == 0, listed.output
    assert "\x1b]8;" not in listed.output  # no hyperlink on a colour terminal either
    plain = CliRunner().invoke(memory_app, ["list"], obj=deps, env={"NO_COLOR": "1", "COLUMNS": "400"}).output
    assert "[bold red]boom[/bold red]" in plain and "[link=http://evil.test/]click[/link]" in plain
    shown = CliRunner().invoke(memory_app, ["show", critique.id], obj=deps)
    assert shown.exit_code == 0 and "[bold red]boom[/bold red]" in shown.output


def test_memory_validate_shows_a_hostile_file_name(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    meta = reports / "meta"
    put(meta, make_critique(0))
    (meta / f"critique-{ANSI}.yaml").write_text("x: 1\n", encoding="utf-8")
    result = CliRunner().invoke(memory_app, ["validate"], obj=deps_for(reports))
    assert result.exit_code == 1
    assert f"invalid  critique-{SHOWN_ANSI}.yaml: file name is not critique-<run id>.yaml" in result.output
    assert "\x1b" not in result.output


def test_the_critique_command_prints_the_model_s_words_literally(tmp_path: Path) -> None:
    from tests.conftest import ScriptedModel
    from tests.support.critique import ANSWER, make_record
    from tests.support.memory_cli import root_app

    record = make_record(tmp_path)
    answer = {**ANSWER, "weaknesses": [f"Sources are thin {TAGS} {ANSI}"]}
    model = ScriptedModel().enqueue("critique", answer)
    result = CliRunner().invoke(root_app(), ["critique", "--run", str(record)],
                                obj=deps_for(tmp_path / "reports", make_model=lambda settings: model))
    assert result.exit_code == 0, result.output
    assert "weakness: Sources are thin [/red] [bold red]boom[/bold red]" in result.output
    assert "\x1b" not in result.output


# --------------------------------------------------------------------------- corpus, cache, doctor


def test_corpus_search_and_index_show_hostile_titles_and_folders(tmp_path: Path) -> None:
    root = tmp_path / f"docs [bold red]x {ANSI}"
    root.mkdir()
    (root / "a.md").write_text(f"# Vacuum {HOSTILE}\n\nVACUUM reclaims storage held by dead tuples.\n",
                               encoding="utf-8")
    env = {"RESEARCH_AGENT_CACHE_DIR": str(tmp_path / "cache"), "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
           "COLUMNS": "400"}
    indexed = CliRunner().invoke(cli_corpus.app, ["index", str(root)], env=env)
    assert indexed.exit_code == 0, indexed.output
    assert "\x1b" not in indexed.output and "[bold red]x" in indexed.output and SHOWN_ANSI in indexed.output
    found = CliRunner().invoke(cli_corpus.app, ["search", "vacuum", "--corpus", str(root)], env=env)
    assert found.exit_code == 0, found.output
    assert_shown_not_obeyed(found.output, controls=False)
    data = CliRunner().invoke(cli_corpus.app, ["search", "vacuum", "--corpus", str(root), "--json"], env=env)
    assert "\x1b" not in data.output and json.loads(data.output)[0]["path"].startswith(str(root))
    missing = CliRunner().invoke(cli_corpus.app, ["index", str(tmp_path / f"gone {ANSI}")], env=env)
    assert missing.exit_code == 2 and "\x1b" not in missing.output and SHOWN_ANSI in missing.output


def test_cache_clear_shows_a_hostile_cache_folder(tmp_path: Path) -> None:
    cache = tmp_path / f"cache {ANSI}"
    env = {"RESEARCH_AGENT_CACHE_DIR": str(cache), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    result = CliRunner().invoke(cli_cache.app, ["clear"], env=env)
    assert result.exit_code == 0, result.output
    assert result.output == f"removed 0 cached web pages from {tmp_path}/cache {SHOWN_ANSI}/pages\n"


def test_doctor_shows_a_hostile_model_name_in_its_table(tmp_path: Path) -> None:
    with FakeOpenAIServer(ResearchResponder(), models=["llama3"]) as server:
        env = {**cli_env(tmp_path / "home", server.base_url), "RESEARCH_AGENT_MODEL": HOSTILE, "COLUMNS": "500"}
        env.pop("NO_COLOR")
        proc = subprocess.run([str(CLI), "doctor"], capture_output=True, text=True, env=env, cwd=tmp_path,
                              timeout=120)
    assert proc.returncode == 1, proc.stderr  # the model is not listed: a failed check, not a crash
    assert "does not serve" in proc.stdout and "it lists: llama3" in proc.stdout
    assert_shown_not_obeyed(proc.stdout + proc.stderr)


def test_the_main_app_routes_errors_through_the_one_line_printer(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
           "RESEARCH_AGENT_CACHE_DIR": str(tmp_path / "cache")}
    result = CliRunner().invoke(main_app, ["run", QUERY, "--corpus", str(tmp_path / f"nope {TAGS}"),
                                           "--reports-dir", str(tmp_path / "r")], env=env)
    assert result.exit_code == 2, result.output
    assert "[/red]" in result.output and "Traceback" not in result.output
    assert os.linesep.join(result.output.splitlines()).count("error:") == 1
