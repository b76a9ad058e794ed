"""The workbench people keep open (issue 44 point 4), in-process: a report downloaded three ways and
deleted with its run's files after a confirmation, the only allowed folder ticked, the writer's text
streamed to a run's page (pieces gathered, not a line per 100 tokens), a quick run without claim
counts beside "not checked", and the settings page."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from research_agent.service.events import EventLog, RunEvent
from research_agent.web.pages import COUNTS_EVERY, _fewer_counts
from tests.support.pipeline import QUERY
from tests.support.web import HANG_GUARD, docs_corpus, held_in_draft, in_process, options_for, sse_events

corpus = docs_corpus  # the fixture
RUN = "vacuum-notes_20260101T000000000000Z"
OTHER = "other-notes_20260102T000000000000Z"


def _files_of(reports: Path, run_id: str) -> list[str]:
    names = [f"{run_id}.md", f"{run_id}.html", f"meta/run-{run_id}.yaml", f"meta/passages-{run_id}.json",
             f"meta/critique-{run_id}.yaml", f"meta/failed-critique-{run_id}.yaml", f"meta/journal-{run_id}.json",
             f"meta/checkpoints/{run_id}/draft-0123-1.json"]  # fmt: skip
    for name in names:
        (reports / name).parent.mkdir(parents=True, exist_ok=True)
        (reports / name).write_text(f"{name}\n", encoding="utf-8")
    return names


def _left(reports: Path) -> list[str]:
    return sorted(p.relative_to(reports).as_posix() for p in reports.rglob("*") if p.is_file())


async def test_a_report_is_deleted_with_its_run_files_only_once_confirmed_from_this_machine(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    mine, others = _files_of(reports, RUN), _files_of(reports, OTHER)
    options = options_for(tmp_path)
    async with in_process(options, client_ip="192.0.2.7") as far:
        from_afar = await far.client.get(f"/reports/{RUN}/delete")
        posted_from_afar = await far.client.post(f"/reports/{RUN}/delete", data={"csrf": await far.csrf(), "confirm": "1"})
    async with in_process(options) as web:
        asked = await web.client.get(f"/reports/{RUN}/delete")
        no_token = await web.client.post(f"/reports/{RUN}/delete", data={"confirm": "1"})
        unconfirmed = await web.client.post(f"/reports/{RUN}/delete", data={"csrf": await web.csrf()})
        kept = _left(reports)
        by_path = await web.client.post("/reports/..%2Fmeta%2Frun/delete", data={"csrf": await web.csrf(), "confirm": "1"})
        deleted = await web.client.post(f"/reports/{RUN}/delete", data={"csrf": await web.csrf(), "confirm": "1"})
        listed = await web.client.get(deleted.headers["location"])
        gone = await web.client.get(f"/reports/{RUN}")
    assert from_afar.status_code == 403 and posted_from_afar.status_code == 403
    assert asked.status_code == 200 and "Delete this report?" in asked.text
    assert all(f"<code>{name}</code>" in asked.text for name in mine if "checkpoints" not in name) and OTHER not in asked.text
    assert no_token.status_code == 403 and unconfirmed.status_code == 303 and kept == sorted(mine + others)
    assert by_path.status_code in (400, 404), "refused before any file is looked at"
    assert deleted.status_code == 303 and deleted.headers["location"].startswith("/reports?deleted=")
    assert "Deleted the report of run" in listed.text and gone.status_code == 404
    assert _left(reports) == sorted(others), "every file of the run went, no other, and nothing hidden is left"


async def test_a_delete_that_cannot_be_whole_moves_nothing(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    _files_of(reports, RUN)
    (reports / "meta" / f"passages-{RUN}.json").unlink()
    (reports / "meta" / f"passages-{RUN}.json").mkdir()  # not a file a run writes
    before = _left(reports)
    async with in_process(options_for(tmp_path)) as web:
        refused = await web.client.post(f"/reports/{RUN}/delete", data={"csrf": await web.csrf(), "confirm": "1"})
    assert refused.status_code == 400 and "a directory" in refused.text and "nothing deleted" in refused.text
    assert _left(reports) == before


async def test_meta_leading_out_of_the_reports_folder_is_refused(tmp_path: Path) -> None:
    reports, elsewhere = tmp_path / "reports", tmp_path / "elsewhere"
    _files_of(elsewhere, RUN)
    reports.mkdir()
    (reports / f"{RUN}.md").write_text("# a report\n", encoding="utf-8")
    (reports / "meta").symlink_to(elsewhere / "meta")
    async with in_process(options_for(tmp_path)) as web:
        refused = await web.client.post(f"/reports/{RUN}/delete", data={"csrf": await web.csrf(), "confirm": "1"})
    assert refused.status_code == 400 and "leads outside" in refused.text
    assert (reports / f"{RUN}.md").is_file() and (elsewhere / "meta" / f"run-{RUN}.yaml").is_file()


async def test_the_only_allowed_folder_is_ticked_on_a_fresh_form_and_kept_as_sent_on_a_refused_one(
    tmp_path: Path, corpus: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    box = '<input type="checkbox" name="corpus" value="0" checked>'
    async with in_process(options_for(tmp_path, allow_dirs=(corpus,))) as one:
        fresh = (await one.client.get("/")).text
        refused = await one.client.post("/runs", data={"csrf": await one.csrf(), "question": "x"})  # too short
        batch_form = (await one.client.get("/batches")).text
    async with in_process(options_for(tmp_path, allow_dirs=(corpus, other))) as two:
        two_folders = (await two.client.get("/")).text
    assert box in fresh and "The only allowed folder is ticked" in fresh and box in batch_form
    assert refused.status_code == 400 and box not in refused.text, "the form as it was sent: unticked"
    assert 'name="corpus" value="0" checked' not in two_folders and 'value="1" checked' not in two_folders


async def test_the_writer_text_streams_to_the_page_and_a_quick_run_counts_no_claims(
    tmp_path: Path, corpus: Path
) -> None:
    async with held_in_draft(tmp_path, corpus, critique=False) as held:
        web = held.web
        answer = await web.client.post("/runs", data={"csrf": await web.csrf(), "question": QUERY,
                                                      "corpus": "0", "mode": "quick"})  # fmt: skip
        (job,) = web.bench.board.newest()
        await asyncio.to_thread(held.responder.wait_arrivals, 1)  # the writer was asked
        following = asyncio.ensure_future(web.client.get(f"{answer.headers['location']}/events"))
        held.responder.release.set()
        await asyncio.wait_for(job.task, HANG_GUARD)
        events = sse_events((await asyncio.wait_for(following, HANG_GUARD)).text)
        page = (await web.client.get(answer.headers["location"])).text
    texts = [data for kind, data in events if kind == "text"]
    assert texts and texts[0]["new"] and all(data["stage"] == "draft" for data in texts)
    start = max(i for i, data in enumerate(texts) if data["new"])
    draft = "".join(data["message"] for data in texts[start:])
    assert draft.startswith(f"# {QUERY.rstrip('?')}") and "## Summary" in draft and "What the sources say" in draft
    counts = [data["counts"] for kind, data in events if kind == "counts"][-1]
    assert "claims_cited" in counts and not any(k in counts for k in ("claims_checked", "claims_supported"))
    assert '<dd data-count="claims_checked">–</dd>' in page and "Not checked:" in page
    timeline = re.search(r'<ol class="timeline" id="timeline">(.*?)</ol>', page, re.S).group(1)
    assert "tokens" not in timeline, "no line per hundred tokens: the rate is in its own cell"


async def test_pieces_of_text_go_out_together_at_most_every_half_second_of_the_run() -> None:
    def piece(text: str, at: float, start: int) -> RunEvent:
        return RunEvent("text", text, "draft", 6.0, {"at": start}, at=at)

    async def given(*events: RunEvent):
        for event in events:
            yield event

    step = COUNTS_EVERY / 4
    pieces = [piece("a", 100.0, 0)] + [piece(c, 100.0 + (i + 1) * step, i + 1) for i, c in enumerate("bcdefg")]
    sent = [e async for e in _fewer_counts(given(*pieces, piece("X", 102.0, 0), RunEvent("stage", "skeptic", at=103)))]
    assert [(e.kind, e.message, e.counts.get("at")) for e in sent] == [
        ("text", "a", 0), ("text", "bcde", 1), ("text", "X", 0), ("stage", "skeptic", None),
    ]  # pieces held back go out together; a new answer replaces what is held of the old one

    log = EventLog(asyncio.get_running_loop())
    log.stage("draft", "3 sources")
    log.streamed_text("Heat ", new=True)
    log.streamed_text("pumps")
    await asyncio.sleep(0)  # the calls reach the loop's thread in order
    late = log.follow(text=True)
    plain = log.follow()
    log.streamed_text(" move heat.")
    log.end("done")
    late_events = [(e.kind, e.message) async for e in late]
    assert late_events == [("stage", "draft: 3 sources"), ("text", "Heat pumps"), ("text", " move heat."), ("end", "done")]
    assert [e.kind async for e in plain] == ["stage", "end"] and log.draft == "", "the text only for those who ask"
