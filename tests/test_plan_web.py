"""The workbench's plan review in-process (issue 44, point 3): the pause after the plan, the form's
CSRF token and loopback check (on the ask form's box too), an empty plan refused with the person's text
kept, and the edit searched and recorded as a person's plan."""

from __future__ import annotations

import asyncio
from pathlib import Path

import yaml

from research_agent.web.plans.waiting import EMPTY
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.pipeline import QUERY
from tests.support.research_responder import ResearchResponder
from tests.support.web import HANG_GUARD, in_process, options_for

MINE = ["postgresql vacuum dead tuples", "autovacuum daemon thresholds"]


async def _paused(job) -> None:
    async for event in job.log.follow():
        if event.kind == "stage" and event.stage == "plan review":
            return
    raise AssertionError("the run ended without pausing for its plan")


async def test_the_run_waits_for_its_plan_and_searches_what_the_person_left(tmp_path: Path, corpus: Path) -> None:
    with FakeOpenAIServer(ResearchResponder()) as server:
        options = options_for(tmp_path, base_url=server.base_url, allow_dirs=(corpus,), critique=False)
        async with in_process(options) as web:
            csrf = await web.csrf()
            asked = await web.client.post("/runs", data={"csrf": csrf, "question": QUERY, "corpus": "0",
                                                         "review_plan": "1"})  # fmt: skip
            (job,) = web.bench.board.newest()
            await asyncio.wait_for(_paused(job), HANG_GUARD)
            waiting = await web.client.get(asked.headers["location"])
            no_token = await web.client.post(f"/runs/{job.key}/plan", data={"sub_queries": "\n".join(MINE)})
            empty = await web.client.post(f"/runs/{job.key}/plan", data={"csrf": csrf, "sub_queries": "\n \n"})
            refused = await web.client.get(empty.headers["location"])
            stages_so_far = [r.stage for r in server.requests]
            went_on = await web.client.post(f"/runs/{job.key}/plan", data={"csrf": csrf, "sub_queries": "\n".join(MINE)})
            await asyncio.wait_for(job.task, HANG_GUARD)
            done = await web.client.get(asked.headers["location"])
            again = await web.client.post(f"/runs/{job.key}/plan", data={"csrf": csrf, "sub_queries": "x y z"})
    assert waiting.status_code == 200 and 'id="plan-form"' in waiting.text and 'data-review="pending"' in waiting.text
    assert all(query in waiting.text for query in job.review.shown.sub_queries)
    assert 'http-equiv="refresh"' not in waiting.text, "no reload while a person types"
    assert no_token.status_code == 403 and stages_so_far == ["decompose"]
    assert empty.status_code == 303 and EMPTY in refused.text and 'id="plan-form"' in refused.text
    assert went_on.status_code == 303 and job.outcome == "done"
    assert 'id="plan-edited"' in done.text and 'id="plan-form"' not in done.text
    assert again.status_code == 303 and job.review.problem == "this run is not waiting for its plan any more"
    (path,) = (tmp_path / "reports" / "meta").glob("run-*.yaml")
    record = yaml.safe_load(path.read_text())
    assert record["plan_by_person"] is True and record["sub_queries"] == MINE


async def test_reviewing_a_plan_is_refused_from_another_machine(tmp_path: Path, corpus: Path) -> None:
    options = options_for(tmp_path, allow_dirs=(corpus,))
    async with in_process(options, client_ip="192.0.2.7") as far:
        csrf = await far.csrf()
        asked = await far.client.post("/runs", data={"csrf": csrf, "question": QUERY, "corpus": "0", "review_plan": "1"})
        answered = await far.client.post("/runs/0123456789abcdef/plan", data={"csrf": csrf, "sub_queries": "a b c"})
        assert far.bench.board.newest() == []
    assert asked.status_code == 403 and "only from this machine" in asked.text
    assert answered.status_code == 403 and "only from this machine" in answered.text
