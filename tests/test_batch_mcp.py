"""The MCP ``research_batch`` tool: many questions in one call, bounded by the server's --max-runs,
a progress notification as each question ends."""

from __future__ import annotations

import json
import os
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


async def test_hostile_question_lists_and_arguments_are_refused_in_one_line_before_any_model_call(
    tmp_path: Path, corpus: Path
) -> None:
    """Issue 45 point 8: the tool with what a hostile batch file holds, as its arguments."""
    calls = {
        "too many": {"questions": [f"Question number {n} about VACUUM?" for n in range(101)]},
        "escapes": {"questions": [QUESTIONS[0], "What is \x1b[31mred\x1b[0m in PostgreSQL?"]},
        "bidi": {"questions": ["Why does \u202eVACUUM\u202c reclaim space?"]},
        "huge": {"questions": ["Why " + "very " * 400_000 + "long?"]},
        "not text": {"questions": [QUESTIONS[0], {"question": QUESTIONS[1]}]},
        "none": {"questions": []},
        "mode": {"questions": [QUESTIONS[0]], "mode": "../../etc"},
        "sources": {"questions": [QUESTIONS[0]], "max_sources": 10**9},
        "search": {"questions": [QUESTIONS[0]], "search": ["bing"]},
        "outside": {"questions": [QUESTIONS[0]], "corpus": [str(corpus / ".." / "..")]},
    }
    with FakeOpenAIServer(ResearchResponder()) as server:
        async with mcp_client(tmp_path, "--allow-dir", str(corpus), base_url=server.base_url) as client:
            answers = {name: await client.call_tool("research_batch", arguments) for name, arguments in calls.items()}
        assert server.requests == []
    for name, answer in answers.items():
        said = text_of(answer)
        assert answer.is_error and len(said.splitlines()) == 1 and "Traceback" not in said, (name, said[:300])
    assert "more than 100 questions" in text_of(answers["too many"])
    assert "question 2: control characters in the question" in text_of(answers["escapes"])
    assert "question 1: control characters in the question" in text_of(answers["bidi"])
    assert "the limit is 2000" in text_of(answers["huge"]) and len(text_of(answers["huge"])) < 400
    assert "refused: it is not below an allowed folder" in text_of(answers["outside"])
    assert list(tmp_path.rglob("batch-*")) == [], "no state and no page of a refused batch"


async def test_a_corpus_holding_links_out_and_a_fifo_reads_neither(tmp_path: Path, corpus: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("# Keys\n\nSECRET-TOKEN-9c1d PostgreSQL VACUUM reclaims dead tuples.\n", encoding="utf-8")
    (corpus / "keys.md").symlink_to(secret)
    (corpus / "outside").symlink_to(tmp_path, target_is_directory=True)
    os.mkfifo(corpus / "pipe.md")
    seen: list[str] = []

    def recording(body: dict, stage: str) -> str:
        seen.append(json.dumps(body))
        return ResearchResponder()(body, stage)

    with FakeOpenAIServer(recording) as server:
        async with mcp_client(tmp_path, "--allow-dir", str(corpus), "--reports-dir", str(tmp_path / "reports"),
                              "--no-critique", base_url=server.base_url) as client:
            with anyio.fail_after(HANG_GUARD):
                done = await client.call_tool("research_batch", {"questions": [QUESTIONS[0]], "corpus": [str(corpus)],
                                                                 "parallel": 10**9})  # fmt: skip
    sent = "\n".join(seen)
    assert not done.is_error, text_of(done)
    assert done.structured_content["totals"]["done"] == 1
    assert "SECRET-TOKEN" not in sent and sent, "the linked file's text never reached the endpoint"
