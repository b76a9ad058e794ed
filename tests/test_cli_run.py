"""The installed CLI, end to end, against an OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from urllib.parse import unquote

import pytest
import yaml

from research_agent.run.indexing import FIRST_INDEX_NOTE_FILES
from tests.support.cli import cli
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.pipeline import QUERY, citations, source_entries
from tests.support.research_responder import ResearchResponder


def test_run_over_a_corpus_writes_a_report_whose_citations_resolve_to_corpus_files(tmp_path, corpus, server):
    reports = tmp_path / "reports"
    proc = cli(tmp_path, "run", QUERY, "--corpus", str(corpus), "--reports-dir", str(reports), "--no-critique",
               base_url=server.base_url)
    assert proc.returncode == 0, proc.stderr
    report_path = Path(proc.stdout.strip())
    assert report_path.parent == reports and report_path.suffix == ".md"
    report = report_path.read_text(encoding="utf-8")
    entries = source_entries(report)
    assert citations(report) == set(entries)
    for entry in entries.values():
        location = entry.split(" — ")[-1]
        assert location.startswith("<file:///") and location.endswith(">"), "every local source is a link"
        path = Path(unquote(location[len("<file://") : -1]))
        assert path.parent == corpus.resolve() and path.is_file()
    record = yaml.safe_load((reports / "meta" / f"run-{report_path.stem}.yaml").read_text())
    assert record["gate_decision"] == "full_report"
    assert record["corpus"][0]["skipped"] == {"binary": 1}, "the binary file is skipped and counted"
    assert "skipped 1 binary" not in proc.stderr, "the skip counts are `corpus index`'s and -v's, not every run's"
    stages = {r.stage for r in server.requests}
    assert stages == {"decompose", "relevance", "draft", "skeptic"}, "four rounds: the first plan names the domain"
    assert "sources found" in proc.stderr or "relevance" in proc.stderr


def test_the_first_run_over_a_folder_says_it_indexes_it_and_how_to_do_that_before(tmp_path, corpus, server):
    """Issue 33: the first `run --corpus` read every file with nothing said about it."""
    for n in range(FIRST_INDEX_NOTE_FILES):
        (corpus / f"note-{n}.md").write_text(f"# Note {n}\n\nVACUUM note number {n} about dead tuples.\n")
    files = len(list(corpus.iterdir()))
    args = ["run", QUERY, "--corpus", str(corpus), "--reports-dir", str(tmp_path / "r"), "--no-critique", "--quick"]
    first = cli(tmp_path, *args, base_url=server.base_url)
    assert first.returncode == 0, first.stderr
    note = f"! indexing {files} file(s) in {corpus.resolve()} for the first time"
    (said,) = [line for line in first.stderr.splitlines() if line.startswith("! indexing")]
    assert said.startswith(note) and said.endswith(f"use: research-agent corpus index {corpus.resolve()}")
    assert f"… index: corpus: 25/{files} files read" in first.stderr and f"50/{files} files read" in first.stderr
    again = cli(tmp_path, "-v", *args, base_url=server.base_url)
    assert again.returncode == 0, again.stderr
    assert "! indexing" not in again.stderr and "skipped 1 binary" in again.stderr  # the skip count, with -v


def test_a_small_folder_indexed_the_first_time_needs_no_note(tmp_path, corpus, server):
    args = ["run", QUERY, "--corpus", str(corpus), "--reports-dir", str(tmp_path / "r"), "--no-critique", "--quick"]
    first = cli(tmp_path, *args, base_url=server.base_url)
    assert first.returncode == 0 and "! indexing" not in first.stderr and "… index: corpus:" in first.stderr


def test_run_json_prints_one_object_with_what_the_run_did(tmp_path, corpus, server):
    output = tmp_path / "copy.md"
    proc = cli(tmp_path, "run", QUERY, "--corpus", str(corpus), "--reports-dir", str(tmp_path / "r"), "--json",
               "--quick", "--output", str(output), base_url=server.base_url)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["mode"] == "quick" and data["gate_decision"] in {"full_report", "short_report"}
    assert data["sources"] and all({"id", "title", "location", "score"} <= set(s) for s in data["sources"])
    assert set(data["usage"]) >= {"decompose", "relevance", "draft"} and "classify" not in data["usage"]
    assert "relevance" in data["timings"] and data["domain"] == "technology"
    assert output.read_text() == Path(data["report_path"]).read_text()


@pytest.mark.parametrize(
    ("args", "env", "code", "message"),
    [
        (["run", "   "], {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}, 2, "query is empty"),
        (["run", "x" * 2001], {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}, 2, "limit is 2000"),
        (["run", "?"], {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}, 2, "error: the question '?' is too short"),
        (["run", "ok"], {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}, 2, "is too short to research"),
        (["run", "q??"], {}, 2, "OPENAI_API_KEY"),
        (["run", "q??", "--corpus", "/nonexistent/folder"], {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}, 2,
         "does not exist"),
        (["run", "q??", "--quick", "--deep"], {}, 2, "choose one of"),
        (["run", "q??", "--min-viability", "300"], {}, 2, "min_viability"),
    ],
)
def test_bad_input_is_one_line_and_non_zero(tmp_path, args, env, code, message):
    proc = cli(tmp_path, *args, env=env)
    assert proc.returncode == code, proc.stderr
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) <= 3
    assert not (tmp_path / "reports").exists()


def test_unreachable_endpoint_and_unknown_model_fail_cleanly(tmp_path, corpus):
    config = tmp_path / "config.toml"
    config.write_text("llm_max_retries = 0\n")
    proc = cli(tmp_path, "run", QUERY, "--corpus", str(corpus), base_url="http://127.0.0.1:9/v1",
               env={"RESEARCH_AGENT_CONFIG": str(config)})
    assert proc.returncode == 3 and "cannot reach" in proc.stderr and "Traceback" not in proc.stderr
    with FakeOpenAIServer(ResearchResponder(), models=["other-model"]) as srv:
        proc = cli(tmp_path, "run", QUERY, "--corpus", str(corpus), "--model", "nope", base_url=srv.base_url)
    assert proc.returncode == 3 and "not found" in proc.stderr
    assert not list((tmp_path / "reports").glob("*.md")) if (tmp_path / "reports").exists() else True


def test_an_endpoint_that_keeps_answering_invalid_json_to_decompose_searches_for_the_question(tmp_path, corpus):
    from tests.support.fake_openai_server import Faults

    with FakeOpenAIServer(ResearchResponder(), faults=Faults(always={"decompose": "badschema"})) as srv:
        proc = cli(tmp_path, "run", QUERY, "--corpus", str(corpus), "--json", "--no-critique",
                   base_url=srv.base_url)
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"decompose stage got invalid output from model .* after 3 attempts: .*; "
                     r"searching for the question itself", proc.stderr), proc.stderr
    data = json.loads(proc.stdout)
    assert (tmp_path / data["report_path"]).is_file() and data["warnings"][0].startswith("the decompose stage")


def test_a_local_model_costs_unknown_not_zero_on_the_done_line_and_in_json(tmp_path, corpus, server):
    args = ("run", QUERY, "--corpus", str(corpus), "--no-critique", "--model", "llama3.2:1b")
    proc = cli(tmp_path, *args, base_url=server.base_url)
    assert proc.returncode == 0, proc.stderr
    done = [line for line in proc.stderr.splitlines() if line.startswith("done (")]
    assert len(done) == 1 and done[0].endswith(" tokens, cost unknown") and "$" not in done[0], proc.stderr
    proc = cli(tmp_path, *args, "--json", base_url=server.base_url)
    data = json.loads(proc.stdout)
    assert data["cost_usd"] is None and all(u["cost_usd"] is None for u in data["usage"].values())
    proc = cli(tmp_path, "run", QUERY, "--corpus", str(corpus), "--no-critique", base_url=server.base_url)
    assert re.search(r"tokens, ~\$0\.\d{4}$", proc.stderr.strip().splitlines()[-1]), proc.stderr  # a priced model


def test_llm_timeout_flag_bounds_each_call_and_a_timeout_is_retried_once(tmp_path, corpus):
    from tests.support.fake_openai_server import Faults

    asked: list[str] = []
    responder = ResearchResponder()

    def counting(body: dict, stage: str) -> str:  # a stalled answer is recorded only when it ends
        asked.append(stage)
        return responder(body, stage)

    with FakeOpenAIServer(counting, faults=Faults(always={"*": "stall"}, stall_seconds=30)) as srv:
        proc = cli(tmp_path, "run", QUERY, "--corpus", str(corpus), "--no-critique", "--llm-timeout", "1",
                   base_url=srv.base_url)
    assert proc.returncode == 3, proc.stderr
    # A stage that times out degrades (the plan is the question itself); a run in which no answer
    # at all could be read is the endpoint's failure: exit 3, one error line, no report.
    assert "! model call for stage decompose timed out after 1s (2 attempts); searching for the question" in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert errors == ["error: no answer of the model endpoint could be read in this run: "
                      "model call for stage relevance timed out after 1s (2 attempts)"], proc.stderr
    # the default llm_max_retries is 4: a timeout gets one retry. Relevance: the batch, then its
    # sources again in two smaller batches, each asked twice; the draft written beside it, stopped
    # with it (the order is when each stalled answer ended, so only the counts are compared)
    assert Counter(asked) == {"decompose": 2, "relevance": 6, "draft": 1}
    assert not list((tmp_path / "reports").glob("*.md"))


def test_help_explains_itself(tmp_path):
    proc = cli(tmp_path, "run", "--help")
    assert proc.returncode == 0
    for flag in ("--corpus", "--quick", "--json", "--max-sources", "--no-retry", "--context"):
        assert flag in proc.stdout


def test_a_bad_rules_file_fails_before_any_work(tmp_path, corpus, server):
    rules = tmp_path / "rules.yaml"
    rules.write_text("rules:\n  - name: broken\n    pattern: '(unclosed'\n    reason: r\n    fix: f\n")
    proc = cli(tmp_path, "run", QUERY, "--corpus", str(corpus), "--rules", str(rules), base_url=server.base_url)
    assert proc.returncode == 2 and "broken" in proc.stderr and "Traceback" not in proc.stderr
    assert server.requests == []
