"""The model seam: what a stage asks (:class:`ChatRequest`), what it gets back
(:class:`ChatResponse`), and who answers (:class:`ChatModel`).

Streaming is an optional extension (:class:`StreamingChatModel`): a model with only
``complete()`` still serves every stage, the writer included, just without token
progress (:func:`stream_or_complete` picks). Tests pass a scripted ChatModel; the product
builds :class:`~research_agent.llm.client.openai_compat.OpenAIChatModel` from Settings.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from ..errors import StopStream
from .budget import ContextBudget
from .usage import Usage

__all__ = [
    "ChatRequest",
    "ChatResponse",
    "ChatModel",
    "StreamingChatModel",
    "TokenCallback",
    "StopStream",
    "stream_or_complete",
    "budget_of",
    "STRUCTURED_ATTEMPTS",
    "FINISHED",
    "BOUNDED",
]

STRUCTURED_ATTEMPTS = 3  # answers asked for per request; each retry shows the model its error
FINISHED = "stop"  # the finish reason of an answer that ended as the model meant it to
BOUNDED = "bounded"  # the finish reason of a stream its listener ended (StopStream): enough had come

# Hears a stream as it arrives: the count of tokens so far, and the text that just came. A call
# with (0, "") says a request was sent and nothing has come yet (the server reads the prompt).
TokenCallback = Callable[[int, str], None]


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
    retry: bool = False  # this request asks again for an answer that could not be used (counted as a retry)
    check: Callable[[Any], str | None] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class ChatResponse:
    """A validated answer. ``data`` is the parsed JSON (None for plain text).

    ``notes`` says what was changed locally, e.g. a field cut to its schema bound.
    ``finish_reason`` is ``stop`` for a whole answer; a streamed one may instead end
    ``length`` (the token limit), ``stalled`` (no token for the idle limit) or
    ``unfinished`` (the stream broke off), with ``text`` holding what arrived.
    ``quirks`` names server behaviour worth one warning per run (see
    :data:`research_agent.llm.usage.QUIRKS`). ``controls_dropped`` counts the control characters,
    escape sequences and bidi formatting taken out of the answer before it was read
    (:func:`research_agent.text.controls.strip_controls`).
    """

    data: Any
    text: str
    model: str
    usage: Usage = field(default_factory=Usage)
    notes: tuple[str, ...] = ()
    finish_reason: str = FINISHED
    quirks: tuple[str, ...] = ()
    controls_dropped: int = 0


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


@runtime_checkable
class StreamingChatModel(ChatModel, Protocol):
    """A ChatModel that can also stream a plain-text answer (``request.schema`` is None).

    ``stream`` never raises for an answer that was cut or stalled: it returns what arrived,
    with its ``finish_reason``. ``on_tokens(count, piece)`` hears the running token count and
    each piece of text as it arrives; a last call with an empty piece may correct the count
    to the endpoint's own.
    """

    async def stream(self, request: ChatRequest, on_tokens: TokenCallback | None = None) -> ChatResponse: ...


async def stream_or_complete(
    model: ChatModel, request: ChatRequest, on_tokens: TokenCallback | None = None
) -> ChatResponse:
    """``model.stream(request)`` when the model streams, else ``model.complete(request)``."""
    stream = getattr(model, "stream", None)
    if stream is None:
        return await model.complete(request)
    return await stream(request, on_tokens)


async def budget_of(model: ChatModel) -> ContextBudget | None:
    """The context window ``model`` knows it has (learned from its server or set), or None."""
    budget = getattr(model, "context_budget", None)
    if budget is None:
        return None
    return await budget()
