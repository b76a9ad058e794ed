"""Classify a query into the fixed domain taxonomy (the key lessons are shared under).

A run names its domain in its first decompose call; this stage serves the callers that
need a domain without planning (``memory lessons QUESTION``, the MCP ``memory_lessons`` tool)."""

from __future__ import annotations

from .. import prompts
from ..domains import DEFAULT_DOMAIN, DOMAINS, normalize_domain
from ..llm import ChatModel, ChatRequest
from ._fallback import Notify, or_fallback
from ._schema import enum, obj

__all__ = ["classify_domain", "SCHEMA"]

# A bound on the answer: a grammar-constrained local server can otherwise generate whitespace
# until its context is full. Generous, so a reasoning model's thinking still fits.
MAX_ANSWER_TOKENS = 800

SCHEMA = obj(domain=enum(*DOMAINS))


async def classify_domain(model: ChatModel, query: str, *, notify: Notify | None = None) -> str:
    """Return one of :data:`research_agent.domains.DOMAINS` for ``query``; ``other`` when
    the model's answers could not be read (announced through ``notify``)."""
    prompt = prompts.render("classify", query=query, domains=prompts.fragment("domains"))
    request = ChatRequest(
        stage="classify", system=prompt.system, user=prompt.user, schema=SCHEMA, temperature=0.0, tier="fast",
        max_tokens=MAX_ANSWER_TOKENS,
    )

    async def ask() -> str:
        return normalize_domain((await model.complete(request)).data.get("domain"))

    return await or_fallback(
        ask(), lambda: DEFAULT_DOMAIN, outcome=f"the domain is '{DEFAULT_DOMAIN}'", notify=notify
    )
