"""The prompt tokens of a standard run (issues 13, 46): at most 9,500 here, in 4 calls, the writer's evidence kept.

Tokens are counted as the issue counts them: ``len(json.dumps(messages)) // 4`` per chat
call, summed over a standard run with no replan and no critique, through the real client
and the fake OpenAI-compatible server answering with the research responder.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from research_agent.config import MODES, Settings
from research_agent.llm import OpenAIChatModel
from research_agent.llm.prices import PriceTable
from research_agent.memory.lessons.select import LessonSelection
from research_agent.pipeline import research
from research_agent.search.local import LocalSearchProvider
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.prose_corpus import PROSE_QUESTION, write_prose_corpus
from tests.support.research_responder import ResearchResponder

TOKEN_GOAL = 9_500  # issue 46: 8,938 on this corpus (13,036 in 15 calls before); 10,948 on bench_pipeline's


class Counting:
    """The research responder, counting each stage's prompt tokens and keeping the messages."""

    def __init__(self) -> None:
        self.responder = ResearchResponder(viability=80)
        self.tokens: dict[str, int] = defaultdict(int)
        self.messages: dict[str, list[list[dict[str, Any]]]] = defaultdict(list)

    def __call__(self, body: dict[str, Any], stage: str) -> str:
        self.tokens[stage] += len(json.dumps(body["messages"])) // 4
        self.messages[stage].append(body["messages"])
        return self.responder(body, stage)


async def standard_run(tmp_path: Path) -> tuple[Counting, Any]:
    corpus = write_prose_corpus(tmp_path / "corpus")
    mode = MODES["standard"]
    provider = LocalSearchProvider([corpus], tmp_path / "cache", token_budget=mode.source_tokens)
    provider.prepare()
    settings = Settings(
        mode=mode, reports_dir=tmp_path / "reports", cache_dir=tmp_path / "cache", context_path=None,
        corpus_dirs=(corpus,), model="gpt-4o-mini",
    )  # fmt: skip
    counting = Counting()
    with FakeOpenAIServer(counting) as server:
        model = OpenAIChatModel(model="gpt-4o-mini", api_key="test", base_url=server.base_url, prices=PriceTable())
        result = await research(
            PROSE_QUESTION, settings=settings, model=model, providers=[provider],
            lessons=lambda domain: LessonSelection.none(domain),
        )  # fmt: skip
        await model.aclose()
    return counting, result


def writer_source_tokens(messages: list[dict[str, Any]]) -> int:
    user = messages[-1]["content"]
    return len(json.dumps(user.partition("\nSources:\n")[2])) // 4


async def test_a_standard_run_sends_few_prompt_tokens_in_four_calls(tmp_path):
    counting, result = await standard_run(tmp_path)
    assert len(result.sources) == 12 and result.gate_decision == "full_report"
    assert [i.decision for i in result.iterations] == ["proceed"]  # no replan, no revision
    assert sum(counting.tokens.values()) <= TOKEN_GOAL, dict(counting.tokens)
    # relevance scores the 12 sources in one call; the claim list rides in the skeptic's
    assert {stage: len(calls) for stage, calls in counting.messages.items()} == {
        "decompose": 1, "relevance": 1, "draft": 1, "skeptic": 1}  # fmt: skip


async def test_the_writer_reads_every_kept_source_whole(tmp_path):
    # The savings come from relevance and the skeptic, never from what the writer reads:
    # each kept source reaches the draft call with all the text the mode's budget allows.
    counting, result = await standard_run(tmp_path)
    (draft,) = counting.messages["draft"]
    user = draft[-1]["content"]
    kept = [s for s in result.sources if s.score is not None and s.score >= MODES["standard"].keep_score]
    assert len(kept) == 12
    assert writer_source_tokens(draft) >= 12 * MODES["standard"].source_tokens * 3 // 4
    assert user.count("<<<DATA source ") == 12

