"""The plan round trip over MCP (issue 44, points 3 and 5): ``research_plan`` plans and searches
nothing; ``research`` with the plan (edited) searches it with no decompose call and records that a
person gave it; a bad plan is the CLI's one-line error, before any model call."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.mcp import mcp_client, text_of
from tests.support.pipeline import QUERY
from tests.support.research_responder import ResearchResponder

MINE = ["postgresql vacuum dead tuples", "autovacuum daemon thresholds"]


async def test_research_plan_then_research_with_the_edited_plan(tmp_path: Path, corpus: Path) -> None:
    reports = tmp_path / "reports"
    with FakeOpenAIServer(ResearchResponder()) as server:
        async with mcp_client(tmp_path, "--allow-dir", str(corpus), "--reports-dir", str(reports),
                              base_url=server.base_url) as client:  # fmt: skip
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            planned = await client.call_tool("research_plan", {"question": QUERY, "mode": "quick"})
            assert not planned.is_error, text_of(planned)
            plan = planned.structured_content
            assert [r.stage for r in server.requests] == ["decompose"] and not list(reports.glob("*.md"))
            server.clear()
            edited = {**{k: plan[k] for k in ("question", "domain")}, "sub_queries": MINE}
            ran = await client.call_tool("research", {"question": QUERY, "mode": "quick", "corpus": [str(corpus)],
                                                      "plan": edited})  # fmt: skip
            assert not ran.is_error, text_of(ran)
            stages = {r.stage for r in server.requests}
            server.clear()
            bad = await client.call_tool("research", {"question": QUERY, "plan": {"sub_queries": ["type=object"]}})
            asked_after_bad = server.requests
    assert tools["research_plan"].annotations.read_only_hint
    assert set(tools["research_plan"].output_schema["properties"]) >= {"question", "domain", "sub_queries"}
    assert plan["question"] == QUERY and plan["domain"] == "technology" and 1 <= len(plan["sub_queries"]) <= 3
    assert text_of(planned).startswith(f"Plan (technology) for: {QUERY}")
    assert "decompose" not in stages and "draft" in stages
    record = yaml.safe_load(Path(ran.structured_content["run_record_path"]).read_text())
    assert record["plan_by_person"] is True and record["sub_queries"] == MINE
    assert bad.is_error and text_of(bad).startswith("error: the plan argument: sub-query 1 ('type=object')")
    assert "\n" not in text_of(bad) and asked_after_bad == []
