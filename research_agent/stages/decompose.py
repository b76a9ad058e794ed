"""Break the question into focused search queries."""

from __future__ import annotations

from dataclasses import dataclass

from .. import prompts
from ..llm import ChatModel, ChatRequest
from ._fallback import Notify, or_fallback
from ._schema import array, obj, string

__all__ = ["Plan", "decompose", "schema_for"]

# A bound on the answer: a grammar-constrained local server can otherwise generate whitespace
# until its context is full. Generous, so a reasoning model's thinking still fits.
MAX_ANSWER_TOKENS = 2000


@dataclass(frozen=True)
class Plan:
    """The sub-queries of one plan, in the order the model gave them."""

    number: int
    sub_queries: tuple[str, ...]
    guidance: str = ""


def schema_for(count: int) -> dict:
    return obj(sub_queries=array(string(200), min_items=1, max_items=count + 2))


async def decompose(
    model: ChatModel,
    query: str,
    *,
    count: int,
    number: int = 1,
    context_block: str = "",
    lessons_block: str = "",
    guidance: str = "",
    notify: Notify | None = None,
) -> Plan:
    """Ask for ``count`` sub-queries; duplicates are dropped and the list is capped at ``count``.

    ``guidance`` carries what an earlier plan lacked (replanning); ``lessons_block``
    carries lessons from past critiques. Both are already sanitized text. When the
    model's answers cannot be read, the plan is the question itself (announced through
    ``notify``).
    """
    prompt = prompts.render(
        "decompose",
        query=query,
        count=count,
        context=f"\n{context_block}\n" if context_block else "",
        lessons=f"\n{lessons_block}\n" if lessons_block else "",
        guidance=f"\nThe previous plan fell short. {guidance}\nPlan different queries that fix this.\n"
        if guidance
        else "",
    )
    request = ChatRequest(
        stage="decompose", system=prompt.system, user=prompt.user, schema=schema_for(count), temperature=0.3,
        max_tokens=MAX_ANSWER_TOKENS,
    )

    async def ask() -> list:
        return (await model.complete(request)).data["sub_queries"]

    answered = await or_fallback(ask(), list, outcome="searching for the question itself", notify=notify)
    seen: set[str] = set()
    queries: list[str] = []
    for raw in answered:
        text = " ".join(str(raw).split())[:200]
        if text and text.lower() not in seen:
            seen.add(text.lower())
            queries.append(text)
    if not queries:
        queries = [query[:200]]
    return Plan(number=number, sub_queries=tuple(queries[:count]), guidance=guidance)
