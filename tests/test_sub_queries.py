"""Sub-queries are validated (issue 23, point 1): schema fragments never reach a search provider,
real queries with brackets do, an answer mostly of debris is asked again with the reason, and the
run record names what was dropped."""

from __future__ import annotations

import json

import pytest

from research_agent.stages._sub_queries import screen
from research_agent.stages.decompose import decompose
from tests.support.debris import ISSUE_DEBRIS, OTHER_DEBRIS, REAL_QUERIES, Debris
from tests.support.llm import Endpoint, completion, make_model
from tests.support.pipeline import QUERY, DocsProvider, queue, record_of, run
from tests.support.research_responder import ResearchResponder

BOTH = pytest.mark.parametrize("debris", [ISSUE_DEBRIS, OTHER_DEBRIS], ids=lambda d: d.name)


@BOTH
def test_every_fragment_is_dropped_with_a_reason(debris: Debris) -> None:
    screened = screen(debris.sub_queries)
    assert screened.kept == () and [d.query for d in screened.dropped] == list(debris.sub_queries)
    assert all(d.reason for d in screened.dropped)


def test_brackets_alone_are_no_reason() -> None:
    assert screen(REAL_QUERIES).kept == REAL_QUERIES


def _plan(*queries: str) -> dict:
    return {"domain": "technology", "sub_queries": list(queries)}


@BOTH
async def test_no_fragment_reaches_a_search_provider_and_list_int_does(tmp_path, scripted_model, debris: Debris) -> None:
    fragments = debris.sub_queries[:2]
    answer = _plan("list[int]", fragments[0], "PostgreSQL VACUUM dead tuples", fragments[1])
    queue(scripted_model, ResearchResponder(), decompose=[answer])
    provider = DocsProvider(tmp_path)
    result = await run(tmp_path, scripted_model, provider=provider)

    assert set(provider.calls) == {"list[int]", "PostgreSQL VACUUM dead tuples"}
    record = record_of(result)
    assert record["sub_queries"] == ["list[int]", "PostgreSQL VACUUM dead tuples"]
    assert [(d["plan"], d["query"]) for d in record["dropped_sub_queries"]] == [(1, q) for q in fragments]
    assert all(d["reason"] for d in record["dropped_sub_queries"])
    assert len(scripted_model.calls("decompose")) == 1  # half survived: the answer is used


async def test_an_answer_mostly_of_debris_is_asked_again_and_the_better_answer_used(tmp_path, scripted_model) -> None:
    bad = _plan(*ISSUE_DEBRIS.sub_queries[:3], "PostgreSQL VACUUM dead tuples")  # 1 of 4 survives
    good = _plan("PostgreSQL VACUUM dead tuples", "autovacuum thresholds tuning")
    queue(scripted_model, ResearchResponder(), decompose=[bad, good])
    provider = DocsProvider(tmp_path)
    result = await run(tmp_path, scripted_model, provider=provider)

    assert set(provider.calls) == {"PostgreSQL VACUUM dead tuples", "autovacuum thresholds tuning"}
    assert record_of(result)["dropped_sub_queries"] == []
    assert record_of(result)["usage"]["decompose"]["calls"] == 2


async def test_three_answers_of_debris_degrade_to_the_question_itself(tmp_path, scripted_model) -> None:
    bad = _plan(*OTHER_DEBRIS.sub_queries[:6])  # the schema's bound for a standard plan
    queue(scripted_model, ResearchResponder(), decompose=[bad, bad, bad])
    provider = DocsProvider(tmp_path)
    result = await run(tmp_path, scripted_model, provider=provider)

    assert provider.calls == [QUERY] and result.domain == "other"
    record = record_of(result)
    assert [d["query"] for d in record["dropped_sub_queries"]] == list(OTHER_DEBRIS.sub_queries[:6])
    assert any("only 0 of 6 sub-queries are search queries" in w for w in record["warnings"])


async def test_the_model_is_told_why_its_answer_was_refused() -> None:
    fragments = list(ISSUE_DEBRIS.sub_queries)
    endpoint = Endpoint(
        completion(json.dumps({"sub_queries": fragments})),
        completion(json.dumps({"sub_queries": ["PostgreSQL VACUUM dead tuples", "autovacuum tuning", "] } {"]})),
    )
    model, _ = make_model(endpoint)
    plan = await decompose(model, QUERY, count=4)
    await model.aclose()

    assert plan.sub_queries == ("PostgreSQL VACUUM dead tuples", "autovacuum tuning")
    assert [d.query for d in plan.dropped] == ["] } {"]
    repair = endpoint.bodies[1]["messages"][-1]["content"]
    assert repair.startswith("Your previous answer was invalid: only 0 of 6 sub-queries are search queries")
    assert "'] } {' (mostly punctuation); 'type=' (no word of 3 or more letters besides schema vocabulary and addresses)" in repair
