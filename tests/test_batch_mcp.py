"""The MCP ``research_batch`` tool: many questions in one call, bounded by the server's --max-runs,
a progress notification as each question ends."""

from __future__ import annotations

from pathlib import Path

import anyio

from tests.support.batch import QUESTIONS
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.mcp import HANG_GUARD, HoldingResponder, mcp_client, text_of
from tests.support.research_responder import ResearchResponder


async def test_a_batch_takes_the_free_run_slots_reports_each_question_and_writes_its_page(
    tmp_path: Path, corpus: Path
) -> None:
    responder = HoldingResponder(ResearchResponder(), "decompose")
    messages: list[tuple[float, float | None, str]] = []
    ended = anyio.Event()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        messages.append((progress, total, message or ""))
        if progress == 3:
            ended.set()

    with FakeOpenAIServer(responder) as server:
        try:
            async with mcp_client(tmp_path, "--allow-dir", str(corpus), "--max-runs", "2",
                                  "--reports-dir", str(tmp_path / "reports"), base_url=server.base_url) as client:
                results = []

                async def batch() -> None:
                    arguments = {"questions": list(QUESTIONS[:3]), "corpus": [str(corpus)]}
                    results.append(await client.call_tool("research_batch", arguments, progress_callback=on_progress))

                async with anyio.create_task_group() as calls:
                    calls.start_soon(batch)
                    await anyio.to_thread.run_sync(responder.wait_arrivals, 2)  # two questions at once: both slots
                    busy = await client.call_tool("research", {"question": QUERY_ELSE, "corpus": [str(corpus)]})
                    responder.release.set()
                with anyio.fail_after(HANG_GUARD):
                    await ended.wait()  # progress callbacks run in tasks of their own
        finally:
            responder.release.set()
    assert busy.is_error and "busy: 2 research run(s) already in progress" in text_of(busy)
    (result,) = results
    assert not result.is_error, text_of(result)
    data = result.structured_content
    assert data["status"] == "finished" and data["totals"]["done"] == 3 and data["totals"]["failed"] == 0
    assert [q["question"] for q in data["questions"]] == list(QUESTIONS[:3])
    assert all(Path(q["report_path"]).is_file() and q["review"] in ("approved", "rejected") for q in data["questions"])
    assert Path(data["page_path"]).is_file() and Path(data["state_path"]).is_file()
    assert [(n, total) for n, total, _ in messages] == [(1, 3), (2, 3), (3, 3)]
    assert all(" done (" in message for _, _, message in messages)
    assert text_of(result).startswith(f"Batch {data['id']} finished: 3 done, 0 failed, 0 not run, of 3.")


async def test_a_batch_of_bad_questions_is_refused_before_any_model_call(tmp_path: Path, corpus: Path) -> None:
    with FakeOpenAIServer(ResearchResponder()) as server:
        async with mcp_client(tmp_path, "--allow-dir", str(corpus), base_url=server.base_url) as client:
            twice = await client.call_tool("research_batch", {"questions": [QUESTIONS[0], QUESTIONS[0].upper()]})
            outside = await client.call_tool("research_batch", {"questions": [QUESTIONS[0]], "corpus": [str(tmp_path)]})
        assert server.requests == []
    assert twice.is_error and text_of(twice) == "error: questions: question 2: the same question as question 1"
    assert outside.is_error and "refused: it is not below an allowed folder" in text_of(outside)


QUERY_ELSE = "How does PostgreSQL decide when autovacuum runs?"
