"""The workbench's batch pages in-process (issue 44 point 4): a batch started from pasted questions or
an uploaded file runs through the batch machinery (state file, page, critiques), its page follows
it, Cancel stops it with the running question pending again and Resume finishes it with exactly one
report a question; a bad file is refused whole before anything is written; a batch another process
holds, or one whose process died, is said as such."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import yaml

from research_agent.batch.start import lock_path
from research_agent.files.locks import exclusive_lock
from tests.support.batch import QUESTIONS
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.research_responder import ResearchResponder
from tests.support.web import HANG_GUARD, docs_corpus, held_in_draft, in_process, options_for, sse_events

corpus = docs_corpus  # the fixture


def _state(tmp_path: Path) -> tuple[str, dict]:
    [path] = sorted((tmp_path / "reports" / "meta").glob("batch-*.yaml"))
    return path.stem.removeprefix("batch-"), yaml.safe_load(path.read_text(encoding="utf-8"))


def _reports(tmp_path: Path) -> list[Path]:
    return sorted(p for p in (tmp_path / "reports").glob("*.md") if not p.name.startswith("batch-"))


async def _start(web, **fields: str) -> str:
    form = {"csrf": await web.csrf(), "mode": "quick", "corpus": "0", **fields}
    answer = await web.client.post("/batches", data=form)
    assert answer.status_code == 303, answer.text
    return answer.headers["location"]


async def test_pasted_questions_run_as_a_batch_and_its_page_follows_them_to_the_end(
    tmp_path: Path, corpus: Path
) -> None:
    pasted = "# VACUUM, three ways\n\n" + "\n".join(QUESTIONS[:3]) + "\n"
    with FakeOpenAIServer(ResearchResponder()) as server:
        async with in_process(options_for(tmp_path, base_url=server.base_url, allow_dirs=(corpus,))) as web:
            where = await _start(web, questions=pasted, parallel="2")
            ident = where.rsplit("/", 1)[1]
            job = web.bench.batches.get(ident)
            assert job is not None and job.parallel == 2
            following = asyncio.ensure_future(web.client.get(f"{where}/events"))  # follows until the end
            await asyncio.wait_for(job.task, HANG_GUARD)
            events = sse_events((await asyncio.wait_for(following, HANG_GUARD)).text)
            page = (await web.client.get(where)).text
            listed = (await web.client.get("/batches")).text
            replayed = sse_events((await web.client.get(f"{where}/events")).text)
    kinds = [kind for kind, _ in events]
    assert kinds[0] == "state" and kinds[-1] == "end" and events[-1][1]["outcome"] == "finished"
    finished = [data["row"] for kind, data in events if kind == "question" and data["row"]["state"] == "done"]
    assert sorted(row["line"] for row in finished) == [3, 4, 5]  # the comment and the blank line skipped
    assert all(row["report"] == f"/reports/{row['run_id']}" for row in finished)
    assert any(kind == "stage" and data["stage"].startswith("decompose") for kind, data in events)
    assert [kind for kind, _ in replayed] == ["state", "end"] and replayed[0][1]["counts"]["done"] == 3
    stored_id, state = _state(tmp_path)
    assert stored_id == ident and state["status"] == "finished" and state["file"] == ""
    assert [q["state"] for q in state["questions"]] == ["done"] * 3 and state["overrides"]["mode"] == "quick"
    assert len(_reports(tmp_path)) == 3 and (tmp_path / "reports" / f"batch-{ident}.md").is_file()
    assert "status-finished" in page and page.count('>report</a>') == 3 and "Resume" not in page
    assert 'data-events=' not in page, "a batch that ended has nothing to follow"
    assert f'href="/batches/{ident}"' in listed and "3 of 3" in listed


async def test_an_uploaded_file_is_refused_whole_and_nothing_is_written(tmp_path: Path, corpus: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    good = "question,mode\n" + "\n".join(f"{q},quick" for q in QUESTIONS[:2]) + "\n"
    cases = {
        "questions.csv": (good + f'"{QUESTIONS[2]}",deep\n"{QUESTIONS[3]}",sideways\n', "line 5: mode must be one of"),
        "rows.jsonl": (json.dumps({"question": QUESTIONS[0], "corpus": [str(outside)]}) + "\n",
                       "line 1: corpus folder"),
        "binary.txt": ("How does VACUUM work?\n\x00\x01\x02 binary\n", "binary data"),
    }  # fmt: skip
    async with in_process(options_for(tmp_path, allow_dirs=(corpus,))) as web:
        csrf = await web.csrf()
        answers = {
            name: await web.client.post("/batches", data={"csrf": csrf, "questions": ""},
                                        files={"file": (name, text.encode("utf-8"), "text/plain")})
            for name, (text, _) in cases.items()
        }  # fmt: skip
        both = await web.client.post("/batches", data={"csrf": csrf, "questions": QUESTIONS[0]},
                                     files={"file": ("q.txt", QUESTIONS[1].encode(), "text/plain")})  # fmt: skip
        none = await web.client.post("/batches", data={"csrf": csrf, "questions": "  \n# only a comment\n"})
        unsent = await web.client.post("/batches", data={"questions": QUESTIONS[0]},
                                       files={"file": ("q.txt", b"", "text/plain")})  # fmt: skip
        too_big = await web.client.post("/batches", data={"csrf": csrf},
                                        files={"file": ("q.txt", b"How? " * 1_000_000, "text/plain")})  # fmt: skip
    for name, (_, why) in cases.items():
        assert answers[name].status_code == 400 and why in answers[name].text, (name, answers[name].text[-600:])
        assert "(choose the file again)" in answers[name].text
    assert "outside" not in answers["rows.jsonl"].text or "refused" in answers["rows.jsonl"].text
    assert both.status_code == 400 and "not both" in both.text and QUESTIONS[0] in both.text  # the paste kept
    assert none.status_code == 400 and "no questions" in none.text
    assert unsent.status_code == 403 and too_big.status_code == 413
    assert not (tmp_path / "reports").exists(), "nothing written"


async def test_cancel_stops_the_running_question_and_resume_finishes_with_one_report_each(
    tmp_path: Path, corpus: Path
) -> None:
    async with held_in_draft(tmp_path, corpus, max_runs=1) as held:
        web, responder = held.web, held.responder
        where = await _start(web, questions="\n".join(QUESTIONS[:2]))
        ident = where.rsplit("/", 1)[1]
        await asyncio.to_thread(responder.wait_arrivals, 1)  # the first question is in its draft
        running = (await web.client.get(where)).text
        busy = await web.client.post("/runs", data={"csrf": await web.csrf(), "question": "One more?"})
        cancelled = await web.client.post(f"{where}/cancel", data={"csrf": await web.csrf()})
        stopped = (await web.client.get(where)).text
        _, state = _state(tmp_path)
        listed = (await web.client.get("/batches")).text
        responder.stage = "(none held)"
        responder.release.set()
        resumed = await web.client.post(f"{where}/resume", data={"csrf": await web.csrf()})
        job = web.bench.batches.get(ident)
        await asyncio.wait_for(job.task, HANG_GUARD)
        done = (await web.client.get(where)).text
        again = await web.client.post(f"{where}/resume", data={"csrf": await web.csrf()})
    assert f'action="{where}/cancel"' in running and "status-running" in running
    assert busy.status_code == 503, "the batch holds the server's one run slot"
    assert cancelled.status_code == 303 and "status-stopped" in stopped and f'action="{where}/resume"' in stopped
    assert state["status"] == "stopped" and [q["state"] for q in state["questions"]] == ["pending", "pending"]
    assert [q["attempts"] for q in state["questions"]] == [0, 0], "a cancel is not the question's fault"
    assert "status-stopped" in listed
    assert resumed.status_code == 303 and job.outcome == "finished"
    _, state = _state(tmp_path)
    assert [q["state"] for q in state["questions"]] == ["done", "done"]
    assert len(_reports(tmp_path)) == 2, "each question has exactly one report"
    assert "status-finished" in done and "Resume" not in done
    assert again.status_code == 400 and "nothing to do" in again.text


async def test_a_batch_held_by_another_process_or_left_by_a_dead_one_is_said_as_such(
    tmp_path: Path, corpus: Path
) -> None:
    with FakeOpenAIServer(ResearchResponder()) as server:
        async with in_process(options_for(tmp_path, base_url=server.base_url, allow_dirs=(corpus,))) as web:
            where = await _start(web, questions=QUESTIONS[0])
            ident = where.rsplit("/", 1)[1]
            await asyncio.wait_for(web.bench.batches.get(ident).task, HANG_GUARD)
        meta = tmp_path / "reports" / "meta"
        path = meta / f"batch-{ident}.yaml"
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        data["status"] = "running"  # as a process killed mid-batch leaves it
        data["questions"][0]["state"] = "running"
        path.write_text(yaml.safe_dump(data), encoding="utf-8")
        async with in_process(options_for(tmp_path, base_url=server.base_url, allow_dirs=(corpus,))) as web:
            dead = (await web.client.get(where)).text
            dead_list = (await web.client.get("/batches")).text
            with exclusive_lock(lock_path(meta, ident), wait=False):  # another process runs it now
                held = (await web.client.get(where)).text
                held_list = (await web.client.get("/batches")).text
                refused = await web.client.post(f"{where}/resume", data={"csrf": await web.csrf()})
            not_an_id = await web.client.get("/batches/..%2F..%2Fetc%2Fpasswd")
            unknown = await web.client.get("/batches/nothing-20260101T000000000000Z")
    assert "status-interrupted" in dead and f'action="{where}/resume"' in dead and "status-interrupted" in dead_list
    assert "Another process runs this batch now" in held and "/resume" not in held and "status-running" in held_list
    assert refused.status_code == 400 and "is running in another process" in refused.text
    assert not_an_id.status_code in (400, 404) and unknown.status_code == 404
