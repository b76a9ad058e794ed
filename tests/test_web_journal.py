"""The run journal in the workbench: a run's page at /runs/<run id> outlives the server; after a
restart an interrupted run shows as such, with a Resume button that continues it from its
checkpoints (no model call for what it had); /runs lists the journal."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path

from research_agent.files.state import secret_key
from research_agent.journal.entries import JournalEntry, write_entry
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.pipeline import QUERY
from tests.support.research_responder import ResearchResponder
from tests.support.web import HANG_GUARD, docs_corpus, held_in_draft, in_process, options_for

corpus = docs_corpus  # the fixture


async def test_a_run_cut_by_a_restart_shows_interrupted_and_resumes_from_its_checkpoints(
    tmp_path: Path, corpus: Path
) -> None:
    async with held_in_draft(tmp_path, corpus, critique=False, llm_concurrency=1) as held:
        web = held.web
        answer = await web.client.post("/runs", data={"csrf": await web.csrf(), "question": QUERY, "corpus": "0"})
        where = answer.headers["location"]
        await asyncio.to_thread(held.responder.wait_arrivals, 1)  # the run is in its draft: the server stops
    run_id = where.removeprefix("/runs/")
    entry_file = tmp_path / "reports" / "meta" / f"journal-{run_id}.json"
    entry = json.loads(entry_file.read_text(encoding="utf-8"))
    assert entry["status"] == "cancelled" and entry["front_end"] == "web"  # the server cancelled it as it stopped
    # What a server killed mid-run leaves: its entry still says running (signed, as the run wrote it),
    # and nobody holds its lock.
    killed = replace(JournalEntry.from_data(entry), status="running", finished="")
    write_entry(entry_file.parent, killed, secret_key(tmp_path / "state"))

    with FakeOpenAIServer(ResearchResponder()) as server:
        options = options_for(tmp_path, base_url=server.base_url, allow_dirs=(corpus,), critique=False,
                              llm_concurrency=1)  # fmt: skip
        async with in_process(options) as web:
            listed = await web.client.get("/runs")
            only = await web.client.get("/runs", params={"status": "done"})
            bad = await web.client.get("/runs", params={"status": "sleeping"})
            page = await web.client.get(where)
            resumed = await web.client.post(f"{where}/resume", data={"csrf": await web.csrf()})
            (job,) = web.bench.board.newest()
            await asyncio.wait_for(job.task, HANG_GUARD)
            done = await web.client.get(where)
            again = await web.client.post(f"{where}/resume", data={"csrf": await web.csrf()})
        stages = [r.stage for r in server.requests]
    assert listed.status_code == 200 and "status-interrupted" in listed.text and f'href="{where}"' in listed.text
    assert f'href="{where}"' not in only.text and bad.status_code == 400
    assert page.status_code == 200 and "status-interrupted" in page.text and f'action="{where}/resume"' in page.text
    assert resumed.status_code == 303 and resumed.headers["location"] == where, job.error
    assert job.outcome == "done" and job.run_id == run_id
    assert "status-done" in done.text and f'href="/reports/{run_id}"' in done.text
    assert "decompose" not in stages and "relevance" not in stages and "draft" in stages, stages
    assert json.loads(entry_file.read_text(encoding="utf-8"))["status"] == "done"
    assert again.status_code == 409 and "nothing to resume" in again.text
