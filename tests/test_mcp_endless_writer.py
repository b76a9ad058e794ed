"""Over MCP, a model server that ignores its limits holds no other client (issue 31 point 1).

Two clients of one in-process server share its event loop. The first runs research against a
writer that streams 20,000 short sections; the model's skeptic call is held (an event, no sleeps)
after the draft was cut at its section limit, planned for the claim check and rendered. While it is
held, a second client initializes and lists the tools; then the run finishes with a draft of at
most the section limit. How long the loop is held at most is measured in bench/bench_hostile_writer.py.
"""

from __future__ import annotations

from pathlib import Path

import anyio
from mcp import Client

from research_agent.mcp_server.server import build_server
from research_agent.service import ServiceOptions
from research_agent.stages.writing.draft_text import DraftLimits
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.mcp import HANG_GUARD, HoldingResponder
from tests.support.pipeline import QUERY
from tests.support.research_responder import ResearchResponder


class Endless(ResearchResponder):
    """A writer (draft and revise) that ignores its limits: 20,000 sections of one sentence."""

    def _draft(self, system: str, user: str) -> str:
        return "".join(f"## Part {n}\n\nPlain VACUUM marks space in part {n} as reusable [1].\n\n" for n in range(20_000))

    _revise = _draft


async def test_another_client_is_served_while_a_run_with_an_endless_writer_is_in_progress(
    tmp_path: Path, corpus: Path
) -> None:
    responder = HoldingResponder(Endless(), "skeptic")
    results = []
    with FakeOpenAIServer(responder) as llm:
        settings = {"base_url": llm.base_url, "api_key": "x", "model": "fake-model", "critique": False,
                    "reports_dir": tmp_path / "reports", "cache_dir": tmp_path / "cache", "context_path": None}  # fmt: skip
        server = build_server(ServiceOptions(overrides=settings, allow_dirs=(corpus.resolve(),)))
        try:
            with anyio.fail_after(HANG_GUARD * 2):
                async with Client(server) as first, anyio.create_task_group() as group:

                    async def run() -> None:
                        results.append(await first.call_tool("research", {"question": QUERY, "corpus": [str(corpus)]}))

                    group.start_soon(run)
                    await anyio.to_thread.run_sync(responder.wait_arrivals, 1)  # the bounded draft is with the skeptic
                    async with Client(server) as second:  # initializes while the run is in progress
                        tools = {tool.name for tool in (await second.list_tools()).tools}
                    assert results == [], "the run was still in progress while the second client was served"
                    responder.release.set()
        finally:
            responder.release.set()
            server.service.close()
        drafts = [r for r in llm.requests if r.stage == "draft"]
    assert "research" in tools and not results[0].is_error, results[0].content[0].text
    report = results[0].structured_content["report_markdown"]
    assert 0 < report.count("\n## Part ") <= DraftLimits.for_target(1200).sections
    # each stream was closed at the limit (the client went away: 499); the draft written beside
    # relevance may be set aside once and written again from the kept sources, never more
    assert 1 <= len(drafts) <= 2 and all(r.status == 499 for r in drafts)
