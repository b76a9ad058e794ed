"""Classify a query into the fixed domain taxonomy (the key lessons are shared under)."""

from __future__ import annotations

from .. import prompts
from ..domains import DOMAINS, normalize_domain
from ..llm import ChatModel, ChatRequest
from ._schema import enum, obj

__all__ = ["classify_domain", "SCHEMA"]

SCHEMA = obj(domain=enum(*DOMAINS))


async def classify_domain(model: ChatModel, query: str) -> str:
    """Return one of :data:`research_agent.domains.DOMAINS` for ``query``."""
    prompt = prompts.render("classify", query=query)
    response = await model.complete(
        ChatRequest(stage="classify", system=prompt.system, user=prompt.user, schema=SCHEMA, temperature=0.0, tier="fast")
    )
    return normalize_domain(response.data.get("domain"))
