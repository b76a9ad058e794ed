"""Break the question into focused search queries, and (on a run's first plan) name its domain.

Naming the domain here spares the run a model round of its own: the lessons of every
domain that has some are listed in this call's prompt, grouped by domain, and the
pipeline keeps only the chosen domain's (:mod:`research_agent.memory.lessons.offer`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import prompts
from ..domains import DEFAULT_DOMAIN, DOMAINS, normalize_domain
from ..llm import ChatModel, ChatRequest
from ..text.controls import one_line
from ._fallback import Notify, or_fallback
from ._schema import array, enum, obj, string
from ._sub_queries import DroppedQuery, Screened, answer_problem, list_words, prompt_runs, screen

__all__ = ["Plan", "decompose", "schema_for"]

# A bound on the answer: a grammar-constrained local server can otherwise generate whitespace
# until its context is full. Generous, so a reasoning model's thinking still fits.
MAX_ANSWER_TOKENS = 2000


@dataclass(frozen=True)
class Plan:
    """The sub-queries of one plan, in the order the model gave them, the domain it
    named (empty when it was not asked), and the sub-queries dropped as debris.
    ``fell_back``: the model gave no usable sub-query, so the plan searches the question itself.
    ``by_person``: "" for the model's plan; ``given`` when a person gave it (no model call),
    ``edited`` when a person changed the model's (:mod:`research_agent.plans.steering`)."""

    number: int
    sub_queries: tuple[str, ...]
    guidance: str = ""
    domain: str = ""
    dropped: tuple[DroppedQuery, ...] = ()
    fell_back: bool = False
    by_person: str = ""


def schema_for(count: int, *, pick_domain: bool = False) -> dict:
    sub_queries = array(string(200), min_items=1, max_items=count + 2)
    return (
        obj(domain=enum(*DOMAINS), sub_queries=sub_queries) if pick_domain else obj(sub_queries=sub_queries)
    )


async def decompose(
    model: ChatModel,
    query: str,
    *,
    count: int,
    number: int = 1,
    context_block: str = "",
    lessons_block: str = "",
    guidance: str = "",
    pick_domain: bool = False,
    notify: Notify | None = None,
) -> Plan:
    """Ask for ``count`` sub-queries; duplicates and debris are dropped, the list is capped at ``count``.

    ``guidance`` carries what an earlier plan lacked (replanning); ``lessons_block``
    carries lessons from past critiques. Both are already sanitized text. With
    ``pick_domain`` the model also names the question's domain from the fixed taxonomy.
    A sub-query that is no search query (:mod:`._sub_queries`) is dropped and kept in
    ``Plan.dropped``; an answer of which fewer than half survive is asked again with the
    reason, within the model's attempts. When the model's answers cannot be read or
    used, the plan is the question itself and the domain is ``other`` (announced
    through ``notify``).
    """
    prompt = _prompt(query, count, context_block, lessons_block, guidance, pick_domain)
    listed = list_words(prompts.fragment("domains"), query) if pick_domain else frozenset()
    # the template's own words, its replan framing included: not the context, lessons or guidance, which
    # a sub-query may well follow word for word
    framing = _prompt(query, count, "", "", " ", pick_domain)
    echoes = prompt_runs(f"{framing.system}\n{framing.user}", query)
    checked: list[Screened] = []  # every answer the model layer checked, the last one last

    def check(data: dict) -> str | None:
        checked.append(screen(_distinct(data.get("sub_queries") or []), listed, echoes))
        return answer_problem(checked[-1])

    request = ChatRequest(
        stage="decompose", system=prompt.system, user=prompt.user,
        schema=schema_for(count, pick_domain=pick_domain), temperature=0.3, max_tokens=MAX_ANSWER_TOKENS,
        check=check,
    )  # fmt: skip

    async def ask() -> dict:
        return (await model.complete(request)).data

    fallback = "searching for the question itself" + (
        f", the domain is {DEFAULT_DOMAIN!r}" if pick_domain else ""
    )
    answered: dict[str, Any] = await or_fallback(ask(), dict, outcome=fallback, notify=notify)
    screened = screen(_distinct(answered.get("sub_queries") or []), listed, echoes)
    if screened.usable:
        domain = normalize_domain(answered.get("domain")) if pick_domain else ""
        return Plan(number, screened.kept[:count], guidance=guidance, domain=domain, dropped=screened.dropped)
    if answered and notify is not None:  # a model that does not honour ChatRequest.check
        notify(f"the decompose stage got no usable sub-queries: {answer_problem(screened)}; {fallback}")
    dropped = screened.dropped or (checked[-1].dropped if checked else ())
    domain = DEFAULT_DOMAIN if pick_domain else ""
    return Plan(number, (query[:200],), guidance=guidance, domain=domain, dropped=dropped, fell_back=True)


def _prompt(query: str, count: int, context_block: str, lessons_block: str, guidance: str, pick_domain: bool) -> prompts.Prompt:
    return prompts.render(
        "decompose",
        query=query,
        count=count,
        context=f"\n{context_block}\n" if context_block else "",
        domain=f"\n{prompts.fragment('decompose_domain', domains=prompts.fragment('domains'))}\n"
        if pick_domain
        else "",
        lessons=f"\n{lessons_block}\n" if lessons_block else "",
        guidance=f"\nThe previous plan fell short. {guidance}\nPlan different queries that fix this.\n"
        if guidance
        else "",
    )


def _distinct(answered: list) -> list[str]:
    """The answered queries, whitespace tidied, cut to 200 characters, without repeats."""
    seen: set[str] = set()
    queries: list[str] = []
    for raw in answered:
        text = one_line(raw)[:200]
        if text and text.lower() not in seen:
            seen.add(text.lower())
            queries.append(text)
    return queries
