"""`research-agent mcp` end to end: the SDK's own client over stdio against the server process,
the model faked by the OpenAI-compatible test server, a corpus of files in tmp_path."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import pytest
import yaml
from mcp.shared.exceptions import MCPError

from research_agent.run_refs import short_id
from tests.support.cli import cli
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.mcp import HANG_GUARD, HoldingResponder, mcp_client, server_env, text_of
from tests.support.memory import make_critique, put
from tests.support.pipeline import QUERY
from tests.support.research_responder import ResearchResponder
from tests.support.review_reports import long_body, report

TOOLS = {"research", "research_plan", "research_batch", "review_report", "memory_lessons", "memory_list", "memory_show", "memory_effects", "memory_proposals"}
# The corpus is indexed while the first model call runs, so "index" only has to come before "search".
STAGES_IN_ORDER = ["decompose", "search", "relevance", "draft", "skeptic", "write"]


async def test_the_server_lists_its_tools_with_schemas_and_its_resource_templates(tmp_path: Path) -> None:
    async with mcp_client(tmp_path) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        templates = (await client.list_resource_templates()).resource_templates
    assert set(tools) == TOOLS
    research = tools["research"]
    assert set(research.input_schema["properties"]) == {"question", "mode", "corpus", "search", "max_sources", "plan"}
    assert research.input_schema["required"] == ["question"]
    assert research.input_schema["properties"]["mode"]["enum"] == ["quick", "standard", "deep"]
    assert {"report_markdown", "report_path", "gate_decision", "sources", "lessons_applied", "usage",
            "cost_usd"} <= set(research.output_schema["properties"])
    assert "call to the fast model" in " ".join(tools["memory_lessons"].description.split())
    assert research.annotations.read_only_hint is False and tools["memory_list"].annotations.read_only_hint
    assert {(t.uri_template, t.mime_type) for t in templates} == {
        ("report://{run_id}", "text/markdown"), ("report://{run_id}?format=html", "text/html"),
        ("critique://{run_id}", "application/yaml"), ("runs://journal{?status}", "application/json"),
    }


async def test_research_over_a_corpus_reports_each_stage_and_returns_the_report(tmp_path: Path, corpus: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("wait_critique = true\n")  # the critique runs before the call returns, as with the CLI flag
    messages: list[str] = []
    numbers: list[float] = []
    totals: set[float | None] = set()
    wrote = anyio.Event()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        numbers.append(progress)
        totals.add(total)
        messages.append(message or "")
        if (message or "") == "done":
            wrote.set()

    with FakeOpenAIServer(ResearchResponder()) as server:
        async with mcp_client(tmp_path, "--allow-dir", str(corpus), "--reports-dir", str(tmp_path / "reports"),
                              base_url=server.base_url, env={"RESEARCH_AGENT_CONFIG": str(config)}) as client:
            result = await client.call_tool("research", {"question": QUERY, "corpus": [str(corpus)]},
                                            progress_callback=on_progress)
            assert not result.is_error, text_of(result)
            data = result.structured_content
            report_resource = await client.read_resource(f"report://{data['short_id']}")
            html_resource = await client.read_resource("report://latest?format=html")
            critique_resource = await client.read_resource("critique://latest")
            journal_resource = await client.read_resource("runs://journal")
            done_only = await client.read_resource("runs://journal?status=done")
            with anyio.fail_after(HANG_GUARD):
                await wrote.wait()  # progress callbacks run in tasks of their own

    assert data["gate_decision"] == "full_report" and data["mode"] == "standard"
    report_path = Path(data["report_path"])
    assert report_path.parent == tmp_path / "reports"
    assert report_path.read_text(encoding="utf-8") == data["report_markdown"]
    assert Path(data["run_record_path"]).is_file()
    assert data["sources"] and all(set(s) == {"n", "title", "location"} for s in data["sources"])
    assert {Path(s["location"]).parent for s in data["sources"]} == {corpus.resolve()}
    assert data["cost_usd"] is None, "the fake model has no price: unknown, never 0"
    assert data["total_tokens"] > 0 and {"decompose", "draft"} <= set(data["usage"])
    assert data["lessons_applied"] == [] and data["adaptive"] is False
    assert data["critique"]["state"] == "done" and Path(data["critique"]["path"]).is_file()
    assert report_resource.contents[0].text == data["report_markdown"]
    (page,) = html_resource.contents
    assert page.mime_type == "text/html" and page.text.startswith("<!DOCTYPE html>")
    assert 'id="src-1"' in page.text and 'href="#src-1"' in page.text and 'role="tooltip"' in page.text
    critique = yaml.safe_load(critique_resource.contents[0].text)
    assert critique["id"] == data["id"] and critique["query"] == QUERY
    [entry] = json.loads(journal_resource.contents[0].text)  # the run journal: this run, from the MCP front end
    assert entry["id"] == data["id"] and entry["status"] == "done" and entry["front_end"] == "mcp"
    assert entry["report"] == data["report_path"] and json.loads(done_only.contents[0].text) == [entry]
    stages = [m.split(":")[0] for m in messages if not m.startswith("note")]
    first = [stages.index(stage) for stage in STAGES_IN_ORDER]
    assert first == sorted(first), stages
    assert stages.index("index") < stages.index("search"), stages
    assert numbers == sorted(numbers) and len(set(numbers)) == len(numbers), "progress only grows"
    assert len(totals) == 1 and None not in totals and numbers[-1] == totals.pop(), "a total, reached when done"
    text = text_of(result)
    assert text.startswith(f"Report {data['short_id']} written to {data['report_path']} (full_report, ")
    assert f"report://{data['id']}" in text and "{" not in text, "a short summary, not the JSON again"
    assert len(text) < 600
    # the skip counts are `corpus index`'s (and -v's), not every answer's (issue 33)
    assert "index: corpus" in " ".join(messages) and "skipped 1 binary" not in " ".join(messages)


async def test_corpus_folders_outside_allow_dir_are_refused_even_through_a_symlink(tmp_path: Path, corpus: Path) -> None:
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    (allowed / "notes").mkdir()
    (allowed / "escape").symlink_to(corpus, target_is_directory=True)
    refused = [str(corpus), str(allowed / "escape"), str(allowed / "notes" / ".." / ".." / "corpus")]
    with FakeOpenAIServer(ResearchResponder()) as server:
        async with mcp_client(tmp_path, "--allow-dir", str(allowed), base_url=server.base_url) as client:
            results = [await client.call_tool("research", {"question": QUERY, "corpus": [folder]})
                       for folder in refused]
            alive = await client.call_tool("memory_list", {})
        assert server.requests == [], "refused before any model call"
    for folder, result in zip(refused, results, strict=True):
        assert result.is_error
        assert text_of(result) == (
            f"error: corpus folder {folder!r} refused: it is not below an allowed folder ({allowed.resolve()}); "
            "start the server with --allow-dir to allow one"
        )
    assert not alive.is_error and alive.structured_content == {"critiques": [], "failed": [], "invalid": []}
    assert not (tmp_path / "reports").exists()


async def test_a_server_without_allow_dir_reads_no_folder(tmp_path: Path, corpus: Path) -> None:
    async with mcp_client(tmp_path, base_url="http://127.0.0.1:9/v1") as client:
        result = await client.call_tool("research", {"question": QUERY, "corpus": [str(corpus)]})
    assert result.is_error and "this server reads no folders" in text_of(result)


async def test_cancelling_a_call_mid_run_stops_the_run_and_leaves_only_its_journal(tmp_path: Path, corpus: Path) -> None:
    reports = tmp_path / "reports"
    responder = HoldingResponder(ResearchResponder(), "draft")
    with FakeOpenAIServer(responder) as server:
        try:
            async with mcp_client(tmp_path, "--allow-dir", str(corpus), "--reports-dir", str(reports),
                                  "--no-critique", base_url=server.base_url) as client:
                async with anyio.create_task_group() as calls:
                    calls.start_soon(client.call_tool, "research", {"question": QUERY, "corpus": [str(corpus)]})
                    await anyio.to_thread.run_sync(responder.wait_arrivals, 1)  # the run is in its draft
                    calls.cancel_scope.cancel()  # the client sends notifications/cancelled
                # The server reads its messages in order: once this answers, it has taken the
                # cancellation in. Only then is the held draft answered (a run still going would
                # go on to its skeptic); released any earlier, the answer could beat the cancellation.
                alive = await client.call_tool("review_report", {"markdown": report(long_body(400))})
                responder.release.set()
            # the client has closed the server's stdin and the server has exited: its files are final
        finally:
            responder.release.set()
        stages = [r.stage for r in server.requests]
    assert not alive.is_error and alive.structured_content["verdict"] == "approved"
    assert "skeptic" not in stages, "the run did not go on after the caller cancelled"
    leftovers = sorted(p.relative_to(reports).as_posix() for p in reports.rglob("*") if p.is_file())
    [journal] = [p for p in leftovers if not p.startswith("meta/checkpoints/")]  # no report, no record
    entry = json.loads((reports / journal).read_text(encoding="utf-8"))
    assert entry["status"] == "cancelled" and entry["front_end"] == "mcp" and entry["report"] == ""
    assert "Traceback" not in (tmp_path / "server-stderr.log").read_text()


async def test_review_report_approves_a_good_report_and_rejects_a_bad_one(tmp_path: Path) -> None:
    allowed = tmp_path / "docs"
    allowed.mkdir()
    good = allowed / "good.md"
    good.write_text(report(long_body(400)), encoding="utf-8")  # a third of the target: a length warning only
    bad = report(long_body(400) + "\n## Extra\nSales rose 40%.\n")
    outside = tmp_path / "outside.md"
    outside.write_text(bad, encoding="utf-8")
    async with mcp_client(tmp_path, "--allow-dir", str(allowed)) as client:
        approved = await client.call_tool("review_report", {"path": str(good)})
        rejected = await client.call_tool("review_report", {"markdown": bad})
        refused = await client.call_tool("review_report", {"path": str(outside)})
        both = await client.call_tool("review_report", {"path": str(good), "markdown": bad})
    assert approved.structured_content["verdict"] == "approved" and approved.structured_content["critical"] == 0
    data = rejected.structured_content
    assert data["verdict"] == "rejected" and data["approved"] is False and data["critical"] == 1
    assert [i["type"] for i in data["issues"]] == ["unsupported_claim", "length"]
    assert data["issues"][0]["matched"] == "Sales rose 40%"
    assert refused.is_error and "only files in the reports folder" in text_of(refused)
    assert both.is_error and text_of(both) == "error: give the report either as path or as markdown (exactly one of them)"


async def test_a_further_caller_is_told_busy_at_once_while_max_runs_are_running(tmp_path: Path, corpus: Path) -> None:
    responder = HoldingResponder(ResearchResponder(), "decompose")
    arguments = {"question": QUERY, "corpus": [str(corpus)], "mode": "quick"}
    with FakeOpenAIServer(responder) as server:
        try:
            async with mcp_client(tmp_path, "--allow-dir", str(corpus), "--max-runs", "2",
                                  base_url=server.base_url) as client:
                finished = []

                async def run() -> None:
                    finished.append(await client.call_tool("research", arguments))

                async with anyio.create_task_group() as calls:
                    calls.start_soon(run)
                    calls.start_soon(run)
                    await anyio.to_thread.run_sync(responder.wait_arrivals, 2)  # both runs hold a slot
                    busy = await client.call_tool("research", arguments)
                    responder.release.set()
        finally:
            responder.release.set()
    assert busy.is_error
    assert text_of(busy) == (
        "error: busy: 2 research run(s) already in progress, the most this server takes (--max-runs 2); "
        "try again when one has finished"
    )
    assert [r.is_error for r in finished] == [False, False]
    assert {r.structured_content["critique"]["state"] for r in finished} == {"skipped"}  # quick mode


async def test_errors_are_the_cli_s_one_line_messages_and_the_server_stays_up(tmp_path: Path, corpus: Path) -> None:
    async with mcp_client(tmp_path, "--allow-dir", str(corpus)) as client:  # no endpoint configured
        no_endpoint = await client.call_tool("research", {"question": QUERY, "corpus": [str(corpus)]})
        bad_mode = await client.call_tool("research", {"question": QUERY, "mode": "thorough"})
        too_many = await client.call_tool("research", {"question": QUERY, "max_sources": 5000})
        empty = await client.call_tool("memory_lessons", {"question": "  ", "domain": "technology"})
        wrong_type = await client.call_tool("research", {"question": 5, "max_sources": "many"})
        missing = await client.call_tool("memory_show", {})
        alive = await client.call_tool("memory_list", {})
    cli_line = cli(tmp_path, "run", QUERY, "--corpus", str(corpus)).stderr.strip()
    assert no_endpoint.is_error and text_of(no_endpoint) == cli_line
    assert "OPENAI_API_KEY" in cli_line
    assert text_of(bad_mode) == "error: unknown mode 'thorough': choose one of quick, standard, deep"
    assert text_of(too_many) == "error: max_sources must be from 1 to 200, not 5000"
    assert text_of(empty) == "error: the query is empty: give a question to research"
    assert wrong_type.is_error and text_of(wrong_type) == (
        "error: invalid arguments for research: question: Input should be a valid string; "
        "max_sources: Input should be a valid integer, unable to parse string as an integer"
    )
    assert missing.is_error and text_of(missing) == "error: invalid arguments for memory_show: id: Field required"
    assert not alive.is_error
    assert "Traceback" not in (tmp_path / "server-stderr.log").read_text()


async def test_memory_tools_and_resources_read_what_the_cli_wrote(tmp_path: Path) -> None:
    meta = tmp_path / "reports" / "meta"
    now = datetime.now(UTC)
    weak_geography = (4, 4, 4, 2, 4)
    tech = [make_critique(n, scores=weak_geography, when=now - timedelta(hours=n + 1)) for n in range(3)]
    health = make_critique(5, domain="health", when=now - timedelta(hours=6))
    tried = [  # two runs given the geography lesson, two baseline runs that held it back
        make_critique(n, when=now - timedelta(hours=n + 1), applied=("geography:regions",) if n < 12 else (),
                      withheld=("geography:regions",) if n >= 12 else ())
        for n in range(10, 14)
    ]  # fmt: skip
    for critique in (*tech, health, *tried):
        put(meta, critique)
    with FakeOpenAIServer(ResearchResponder(domain="technology")) as server:
        async with mcp_client(tmp_path, base_url=server.base_url) as client:
            given = await client.call_tool("memory_lessons", {"question": "heat pumps", "domain": "technology"})
            classified = await client.call_tool("memory_lessons", {"question": "heat pumps"})
            listed = await client.call_tool("memory_list", {})
            only_health = await client.call_tool("memory_list", {"domain": "health", "limit": 5})
            shown = await client.call_tool("memory_show", {"id": f"critique-{tech[0].id}.yaml"})
            by_short = await client.call_tool("memory_show", {"id": short_id(tech[1].id)[:5]})
            by_latest = await client.call_tool("memory_show", {"id": "latest~1"})
            ambiguous = await client.call_tool("memory_show", {"id": "question-number-1"})
            resources = (await client.list_resources()).resources
            by_prefix = await client.read_resource(f"critique://{short_id(tech[1].id)}")
            effects = await client.call_tool("memory_effects", {"domain": "technology"})
            no_domain = await client.call_tool("memory_effects", {"domain": "astrology"})
            not_an_id = await client.call_tool("memory_show", {"id": "../../etc/passwd"})
            critique_yaml = await client.read_resource(f"critique://{tech[1].id}")
            with pytest.raises(MCPError, match="no critique matches"):
                await client.read_resource("critique://nothing-here_20260101T000000000000Z")
            with pytest.raises(MCPError, match="no report matches"):
                await client.read_resource(f"report://{tech[0].id}")
        assert [r.stage for r in server.requests] == ["classify"], "only memory_lessons without a domain asks"
    lessons = given.structured_content
    assert lessons["domain"] == "technology" and lessons["adaptive"] is True
    geography = lessons["applied"][0]
    assert (geography["key"], geography["stage"]) == ("geography:regions", "decompose")
    assert geography["text"].startswith("Geographic balance was weak in 3 of the")
    assert set(geography["critique_ids"]) == {c.id for c in tech}
    assert {"file": f"critique-{health.id}.yaml", "reason": "other domain (health)"} in lessons["excluded"]
    assert lessons["note"] == (
        "20% of eligible runs are control runs and get no lessons; "
        "each lesson is withheld from 50% of the other runs for its trial (10% once it is helpful)"
    )
    assert classified.structured_content == lessons
    assert [c["id"] for c in listed.structured_content["critiques"]] == [c.id for c in (*tech, health, *tried)]
    (effect,) = effects.structured_content["effects"]
    assert (effect["key"], effect["domain"], effect["status"]) == ("geography:regions", "technology", "measuring")
    assert (effect["applied_runs"], effect["baseline_runs"]) == (2, 2)
    assert set(effect) == {"key", "stage", "target", "text", "domain", "applied_runs", "baseline_runs",
                           "mean_with", "mean_without", "delta", "interval", "method", "paired_questions",
                           "confounded_with", "status", "score", "decided_on", "decided_after", "decided_at",
                           "trial_runs", "more_runs", "reinstated", "fact_recall", "critic_tracking"}  # fmt: skip
    assert effect["score"]["target"] == "mean_score" and effect["decided_after"] is None
    assert no_domain.is_error and "astrology" in text_of(no_domain)
    assert [c["id"] for c in only_health.structured_content["critiques"]] == [health.id]
    assert shown.structured_content["critique"] == tech[0].as_dict()
    assert not_an_id.is_error and text_of(not_an_id).startswith("error: no critique matches '../../etc/passwd'")
    assert yaml.safe_load(critique_yaml.contents[0].text) == tech[1].as_dict()
    assert yaml.safe_load(by_prefix.contents[0].text) == tech[1].as_dict()
    assert by_short.structured_content["critique"]["id"] == tech[1].id == by_latest.structured_content["critique"]["id"]
    assert by_short.structured_content["short_id"] == short_id(tech[1].id)
    assert text_of(by_short).startswith(f"critique of {short_id(tech[1].id)} (question number 1): mean 3.60/5 (pass)")
    assert ambiguous.is_error and "'question-number-1' is ambiguous: it names 5 critiques" in text_of(ambiguous)
    newest_first = [c.id for c in sorted((*tech, health, *tried), key=lambda c: c.id.rsplit("_")[-1], reverse=True)]
    assert [str(r.uri) for r in resources] == [f"critique://{i}" for i in newest_first]
    assert resources[0].name == f"critique {short_id(newest_first[0])}" and resources[0].mime_type == "application/yaml"
    listed_text = text_of(listed)
    assert listed_text.startswith("8 critique(s), newest first:") and short_id(tech[0].id) in listed_text
    assert "{" not in listed_text
    assert [c["short_id"] for c in listed.structured_content["critiques"]][:1] == [short_id(tech[0].id)]


def test_without_the_mcp_extra_the_command_says_how_to_install_it(tmp_path: Path) -> None:
    without_sdk = (  # a Python where `import mcp` fails, as without the extra
        "import sys; sys.modules['mcp'] = None; from research_agent.cli import main; "
        "sys.argv = ['research-agent', 'mcp']; main()"
    )
    proc = subprocess.run([sys.executable, "-c", without_sdk], capture_output=True, text=True,
                          env=server_env(tmp_path, None), cwd=tmp_path, timeout=HANG_GUARD)
    assert proc.returncode == 2
    assert proc.stderr == "error: the MCP server needs the mcp extra: pip install 'cited-research-agent[mcp]'\n"
    assert proc.stdout == ""


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--host", "0.0.0.0"], "error: --host needs --http PORT"),
        (["--allow-dir", "/nonexistent/folder"], "error: --allow-dir /nonexistent/folder: not a folder"),
        (["--timeout", "nan"], "error: setting run_timeout: nan is not a finite number"),
    ],
)
def test_bad_server_options_stop_it_before_it_starts_with_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    proc = cli(tmp_path, "mcp", *args)
    assert proc.returncode == 2 and proc.stderr.startswith(message), proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and proc.stdout == ""
