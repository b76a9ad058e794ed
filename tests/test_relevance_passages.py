"""Relevance reads a source's passages that best match its sub-queries, not its whole text (issue 13)."""

from __future__ import annotations

from research_agent.sources import Source
from research_agent.stages.relevance import relevance_excerpt, score_sources
from research_agent.text.passages import estimate_tokens
from tests.support.answers import scored_each

FILLER = ("The {topic} chapter describes {topic} at length for the patient reader, one detail after another. ") * 4


def page(*topics: str) -> str:
    return "\n\n".join(FILLER.format(topic=topic).strip() for topic in topics)


LONG_PAGE = page("history", "licensing", "vacuum reclaims dead tuples", "installation", "glossary", "contributors")


def source(text: str, sub_queries: tuple[str, ...]) -> Source:
    return Source(
        key="https://example.org/manual", title="The manual", location="https://example.org/manual",
        site="example.org", text=text, provider="ddgs", sub_queries=sub_queries,
    )  # fmt: skip


def test_the_excerpt_is_the_passage_that_matches_the_sub_query_within_the_budget():
    excerpt = relevance_excerpt(source(LONG_PAGE, ("vacuum dead tuples",)), "How is space reclaimed?", token_budget=150)
    assert "vacuum reclaims dead tuples chapter" in excerpt
    for other in ("history", "licensing", "installation", "glossary", "contributors"):
        assert other not in excerpt
    assert estimate_tokens(excerpt) <= 150 < estimate_tokens(LONG_PAGE)


def test_without_sub_queries_the_question_picks_the_passage():
    excerpt = relevance_excerpt(source(LONG_PAGE, ()), "Who are the contributors?", token_budget=150)
    assert "contributors" in excerpt and "vacuum" not in excerpt


async def test_relevance_is_sent_the_best_passages_not_the_whole_page(scripted_model):
    scripted_model.enqueue("relevance", scored_each({"score": 5, "reason": "on point"}))
    (scored,) = await score_sources(
        scripted_model, "How does VACUUM reclaim space?", [source(LONG_PAGE, ("vacuum dead tuples",))],
        token_budget=150,
    )  # fmt: skip
    assert scored.score == 5
    prompt = scripted_model.calls("relevance")[0].user
    assert "vacuum reclaims dead tuples chapter" in prompt
    assert "licensing" not in prompt and "glossary" not in prompt
    assert "[1] The manual" in prompt and "source 1: https://example.org/manual" in prompt
