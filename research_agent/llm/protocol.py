"""The model seam: what a stage asks (:class:`ChatRequest`), what it gets back
(:class:`ChatResponse`), and who answers (:class:`ChatModel`).

Tests pass a scripted ChatModel; the product builds
:class:`~research_agent.llm.openai_compat.OpenAIChatModel` from Settings.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from .usage import Usage

__all__ = ["ChatRequest", "ChatResponse", "ChatModel", "STRUCTURED_ATTEMPTS"]

STRUCTURED_ATTEMPTS = 3  # answers asked for per request; each retry shows the model its error


@dataclass(frozen=True)
class ChatRequest:
    """One call to a model.

    ``schema`` is the JSON Schema of the answer (its ``stage`` is used as the schema
    name); ``None`` asks for plain text. ``tier`` picks the main or the cheaper fast model.
    The schema's upper bounds (``maxLength``, ``maxItems``) are the real ones: an answer
    that passes them is cut to them (:func:`research_agent.llm.schema_bounds.clamp`), not refused.
    ``check`` reads an answer that fits the schema and says why it is still unusable
    (None: usable); such an answer is asked again with that reason, like an invalid one,
    within the same :data:`STRUCTURED_ATTEMPTS`.
    """

    stage: str
    system: str
    user: str
    schema: Mapping[str, Any] | None = None
    temperature: float = 0.2
    tier: Literal["main", "fast"] = "main"
    max_tokens: int | None = None
    check: Callable[[Any], str | None] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class ChatResponse:
    """A validated answer. ``data`` is the parsed JSON (None for plain text).

    ``notes`` says what was changed locally, e.g. a field cut to its schema bound.
    """

    data: Any
    text: str
    model: str
    usage: Usage = field(default_factory=Usage)
    notes: tuple[str, ...] = ()


@runtime_checkable
class ChatModel(Protocol):
    """Anything that can answer a ChatRequest.

    An answer's ``data`` satisfies the request's schema (upper bounds applied by cutting)
    and the request's ``check``.
    When no valid answer came after :data:`STRUCTURED_ATTEMPTS` attempts, raise
    :class:`~research_agent.errors.InvalidModelOutput`; any LLMError may carry the
    ``usage`` spent before it, which :class:`~research_agent.llm.usage.UsageRecorder`
    then counts.
    """

    async def complete(self, request: ChatRequest) -> ChatResponse: ...
