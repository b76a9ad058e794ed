"""The honest small things of issue 23 (point 6): "Sources Examined" lists every source or says how
many more the run record has, the most relevant first; and a reason is never prefixed twice."""

from __future__ import annotations

from research_agent.errors import InvalidModelOutput
from research_agent.sources import SearchHit
from tests.support.answers import relevance_blocks
from tests.support.pipeline import record_of, run
from tests.support.research_responder import ResearchResponder
from tests.support.responder_model import ResponderModel

BEST = "doc39"


class ManyDocs:
    """A provider that finds 40 short documents, some for each query."""

    name = "local"

    def __init__(self, folder) -> None:
        self.hits = []
        for i in range(40):
            path = folder / f"doc{i:02d}.md"
            text = f"Note {i} on gardening and the weather in spring, unrelated to databases."
            path.write_text(text, encoding="utf-8")
            self.hits.append(SearchHit(title=f"doc{i:02d}", location=str(path), snippet=text, provider="local", text=text))

    async def search(self, query: str, *, max_results: int) -> list[SearchHit]:
        self.calls = getattr(self, "calls", 0) + 1  # alternate ends, so that the queries find all 40
        return self.hits[:max_results] if self.calls % 2 else self.hits[-max_results:]


class OneRelevant(ResearchResponder):
    """Every source scores 1 but the last one found, which scores 4; one source cannot be scored
    (its batch leaves it out, and asked about it alone the model fails)."""

    def _relevance(self, system: str, user: str) -> dict:
        blocks = [(n, block.split("\n", 1)[0].rsplit(" ", 1)[-1]) for n, block in relevance_blocks(user)]  # titles
        if [n for n, title in blocks if title != "doc00"] == []:
            raise InvalidModelOutput("the relevance stage got invalid output from model m after 3 attempts: x")
        return {"scores": [{"id": n, "score": 4 if title == BEST else 1, "reason": "scripted"}
                           for n, title in blocks if title != "doc00"]}  # fmt: skip


async def test_sources_examined_ends_with_how_many_more_and_shows_the_best_first(tmp_path) -> None:
    model = ResponderModel(OneRelevant())
    result = await run(tmp_path, model, provider=ManyDocs(tmp_path), max_sources=40, retry=False)

    assert result.gate_decision == "no_new_findings"
    examined = result.report_markdown.split("## Sources Examined\n", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in examined.splitlines() if line.startswith("- ")]
    assert len(lines) == 31 and lines[-1] == "- and 10 more (see the run record)"
    assert lines[0].startswith(f"- {BEST} ") and "(relevance 4/5: scripted)" in lines[0]
    assert len(record_of(result)["sources"]) == 40  # the run record has them all


async def test_an_unscored_sources_reason_is_not_prefixed_twice(tmp_path) -> None:
    model = ResponderModel(OneRelevant())
    result = await run(tmp_path, model, provider=ManyDocs(tmp_path), max_sources=10, retry=False)

    unscored = [s for s in record_of(result)["sources"] if s["status"] == "unscored"]
    assert [s["reason"] for s in unscored] == [
        "the relevance stage got invalid output from model m after 3 attempts: x"
    ]
    assert "unscored: unscored" not in result.report_markdown
    assert "(unscored: the relevance stage got invalid output" in result.report_markdown
    assert not any("(unscored:" in w for w in result.warnings)
