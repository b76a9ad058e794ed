"""Few calls on a one-slot server: relevance scores several sources a call (issue 19, point 6)."""

from __future__ import annotations

from research_agent.config import MODES, Settings
from research_agent.errors import InvalidModelOutput
from research_agent.sources import Source
from research_agent.stages.relevance import MAX_BATCH, plan_batches, score_sources
from tests.support.answers import relevance_blocks, scored_each

STANDARD = MODES["standard"]
SOME_TEXT = " ".join(f"Vacuum reclaims the space of dead tuples, step {i}." for i in range(200))


def sources(count: int) -> list[Source]:
    return [Source(f"/docs/{n}.md", f"Doc {n}", f"/docs/{n}.md", "/docs", SOME_TEXT, "local") for n in range(count)]


def test_the_default_budget_gives_a_standard_run_twelve_sources_in_one_call() -> None:
    budget = Settings().relevance_batch_tokens
    batches = plan_batches([STANDARD.relevance_tokens] * STANDARD.sources_scored, budget, slots=1)
    assert batches == [list(range(12))]


def test_with_more_slots_the_sources_spread_over_calls_that_run_side_by_side() -> None:
    assert plan_batches([150] * 12, 800, slots=16) == [[i] for i in range(12)]
    assert [len(b) for b in plan_batches([150] * 12, 800, slots=4)] == [3, 3, 3, 3]
    assert [len(b) for b in plan_batches([10] * (2 * MAX_BATCH + 4), 10_000, slots=1)] == [MAX_BATCH, MAX_BATCH, 4]
    assert plan_batches([900, 10, 10], 800, slots=1) == [[0], [1, 2]]  # a big source still gets its call


async def test_twelve_sources_take_at_most_three_calls_at_concurrency_one(scripted_model) -> None:
    scripted_model.enqueue("relevance", scored_each({"score": 4, "reason": "on topic"}), times=2)  # ~113 tokens each
    scored = await score_sources(scripted_model, "How does vacuum work?", sources(12),
                                 token_budget=STANDARD.relevance_tokens, batch_tokens=800, slots=1)  # fmt: skip
    calls = scripted_model.calls("relevance")
    assert len(calls) <= 3 and sum(len(relevance_blocks(c.user)) for c in calls) == 12
    assert [s.score for s in scored] == [4] * 12 and [s.source.key for s in scored] == [s.key for s in sources(12)]


async def test_a_batch_missing_two_sources_is_asked_again_for_those_two_only(scripted_model) -> None:
    def leaves_out_two(request):
        answer = scored_each({"score": 5, "reason": "central"})(request)
        kept = [e for e in answer["scores"] if e["id"] not in (2, 4)]
        return {"scores": kept + [{"id": 9, "score": 5, "reason": "no such id"}, {**kept[0], "score": 1}]}

    scripted_model.enqueue("relevance", leaves_out_two)
    scripted_model.enqueue("relevance", scored_each({"score": 3, "reason": "asked again"}))
    notes: list[str] = []
    scored = await score_sources(scripted_model, "How does vacuum work?", sources(5), token_budget=100,
                                 batch_tokens=800, slots=1, notify=notes.append)  # fmt: skip
    first, again = scripted_model.calls("relevance")
    assert len(relevance_blocks(first.user)) == 5
    assert [text.split("\n", 1)[0] for _, text in relevance_blocks(again.user)] == [
        "[1] Doc 1", "[2] Doc 3"]  # fmt: skip
    assert [(s.score, s.reason) for s in scored] == [
        (5, "central"), (3, "asked again"), (5, "central"), (3, "asked again"), (5, "central")]  # fmt: skip
    assert notes == ["the model's relevance answers held 1 score(s) for sources it was not asked about and "
                     "1 second score(s) for the same source; those were ignored"]  # fmt: skip


async def test_a_source_still_missing_after_the_second_ask_is_unscored_not_guessed(scripted_model) -> None:
    scripted_model.enqueue("relevance", lambda request: {"scores": [{"id": 1, "score": 4, "reason": "on vacuum"}]})
    scripted_model.enqueue("relevance", lambda request: {"scores": [{"id": 2, "score": 4, "reason": "not in it"}]})
    scored = await score_sources(scripted_model, "q", sources(2), token_budget=100, slots=1)
    assert [(s.score, s.reason) for s in scored] == [(4, "on vacuum"), (None, "the model gave no score for it")]


async def test_a_snippet_only_source_is_capped_in_a_batch_too(scripted_model) -> None:
    snippet = Source("https://x.org/a", "A", "https://x.org/a", "x.org", "short", "ddgs", snippet_only=True)
    scripted_model.enqueue("relevance", scored_each({"score": 5, "reason": "great"}))
    (scored,) = await score_sources(scripted_model, "q", [snippet], token_budget=100, slots=1)
    assert (scored.score, scored.reason) == (3, "great (capped: snippet only)")
    assert "[1] A (search snippet only)" in scripted_model.calls("relevance")[0].user


async def test_the_stray_ids_note_says_only_what_happened(scripted_model) -> None:
    """Issue 33: "named 12 source id(s) outside their batch and repeated 0" meant nothing to a user."""

    def strays(request):
        answer = scored_each({"score": 4, "reason": "on topic"})(request)
        return {"scores": answer["scores"] + [{"id": 7 + n, "score": 5, "reason": "no such id"} for n in range(4)]}

    scripted_model.enqueue("relevance", strays)
    notes: list[str] = []
    await score_sources(scripted_model, "How does vacuum work?", sources(3), token_budget=100,
                        batch_tokens=800, slots=1, notify=notes.append)  # fmt: skip
    assert notes == [
        "the model's relevance answers held 4 score(s) for sources it was not asked about; those were ignored"
    ]
# --- unscored sources get one more chance (issue 32, point 8) ---------------------------------------


async def test_a_batch_whose_call_failed_is_asked_again_once_in_halves(scripted_model) -> None:
    from research_agent.errors import LLMTimeout

    scripted_model.enqueue("relevance", LLMTimeout("model call for stage relevance timed out after 180s"))
    scripted_model.enqueue("relevance", scored_each({"score": 4, "reason": "half"}))
    scripted_model.enqueue("relevance", InvalidModelOutput("the relevance answer had no scores", stage="relevance"))
    notes: list[str] = []
    scored = await score_sources(scripted_model, "How does vacuum work?", sources(6), token_budget=100,
                                 batch_tokens=800, slots=1, notify=notes.append)  # fmt: skip
    first, *again = scripted_model.calls("relevance")
    assert len(relevance_blocks(first.user)) == 6 and [len(relevance_blocks(c.user)) for c in again] == [3, 3]
    assert [s.score for s in scored] == [4, 4, 4, None, None, None]
    assert notes == ["3 source(s) could not be scored and are left out (the relevance answer had no scores); "
                     "6 source(s) left without a score had been asked again in smaller batches first"]  # fmt: skip


async def test_sources_scored_on_the_second_ask_need_no_warning_and_one_source_is_not_asked_twice(
    scripted_model,
) -> None:
    from research_agent.errors import LLMTimeout, LLMUnavailable

    stray = {"scores": [{"id": 9, "score": 5, "reason": "no such source"}]}  # valid, but scores none of them
    scripted_model.enqueue("relevance", stray)
    scripted_model.enqueue("relevance", scored_each({"score": 2, "reason": "again"}), times=2)
    notes: list[str] = []
    scored = await score_sources(scripted_model, "q", sources(4), token_budget=100, slots=1, notify=notes.append)
    assert [s.score for s in scored] == [2] * 4
    assert notes == ["the model's relevance answers held 1 score(s) for sources it was not asked about; those were ignored"]
    assert [len(relevance_blocks(c.user)) for c in scripted_model.calls("relevance")] == [4, 2, 2]

    for failure in (LLMTimeout("timed out"), LLMUnavailable("connection refused")):
        model = type(scripted_model)().enqueue("relevance", failure)
        (alone,) = await score_sources(model, "q", sources(1), token_budget=100, slots=1)
        assert alone.score is None and len(model.calls("relevance")) == 1
    model = type(scripted_model)().enqueue("relevance", LLMUnavailable("connection refused"))
    assert [s.score for s in await score_sources(model, "q", sources(3), token_budget=100, slots=1)] == [None] * 3
    assert len(model.calls("relevance")) == 1, "an endpoint that cannot answer is not asked again"
