"""The model seam: what a stage asks (:class:`ChatRequest`), what it gets back
(:class:`ChatResponse`), who answers it (:class:`ChatModel`), and what an implementation provides
(:class:`ChatEndpoint`, which sends a request and returns the answer as it came, a :class:`RawResponse`).

An endpoint only sends: :class:`~research_agent.llm.checked.CheckedModel`, the one layer above it,
reads every answer (validation, bounds, the request's ``check``), asks again with the error and
adds up what the attempts spent. What a model can do beyond answering whole is declared, never
probed: every :class:`ChatModel` streams (one that cannot answers whole, without token progress),
says its context window (None when it does not know it) and closes; an endpoint says whether it
streams (:attr:`ChatEndpoint.streams`). Both protocols carry those defaults for a class that
subclasses them. Tests pass a scripted model; the product builds
:class:`~research_agent.llm.client.openai_compat.OpenAIChatModel` from Settings.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from ..errors import StopStream
from .budget import ContextBudget
from .usage import Usage

__all__ = [
    "ChatRequest",
    "ChatResponse",
    "RawResponse",
    "ChatModel",
    "ChatEndpoint",
    "Turn",
    "TokenCallback",
    "StopStream",
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

# One message of a conversation sent to a model: {"role": ..., "content": ...}. A request asked
# again carries the answer that could not be used and what was wrong with it as two more turns.
Turn = dict[str, str]


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


@dataclass(frozen=True)
class RawResponse:
    """One answer as an endpoint received it, not yet read: ``content`` (the text, reasoning and
    control characters still in it), how it ended (``finish_reason``: ``stop``; ``length`` at the
    token limit; ``missing`` when the endpoint sent no answer; a stream's own reasons), which
    ``model`` gave it, and ``usage``: what this answer cost (one call, its tokens, the transient
    retries it took). ``quirks`` and ``notes`` are as in :class:`ChatResponse`."""

    content: str
    model: str
    usage: Usage = field(default_factory=Usage)
    finish_reason: str = FINISHED
    quirks: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


class ChatModel(Protocol):
    """Anything that can answer a ChatRequest: what every stage calls.

    ``complete`` returns an answer whose ``data`` satisfies the request's schema (upper bounds
    applied by cutting) and its ``check``; when no valid answer came after
    :data:`STRUCTURED_ATTEMPTS` attempts it raises :class:`~research_agent.errors.InvalidModelOutput`.
    Any LLMError raised may carry the ``usage`` spent before it, which
    :class:`~research_agent.llm.usage.UsageRecorder` then counts. Build one with
    :class:`~research_agent.llm.checked.CheckedModel` over a :class:`ChatEndpoint` rather than by hand.

    ``stream`` answers a plain-text request (``request.schema`` is None) as it arrives:
    ``on_tokens(count, piece)`` hears the running token count and each piece of text; a last call
    with an empty piece may correct the count to the endpoint's own. It never raises for an answer
    that was cut or stalled: it returns what arrived, with its ``finish_reason``. By default it
    answers whole (:meth:`complete`), with no token progress. ``context_budget`` is the context
    window the model knows it has (by default None: unknown); ``aclose`` frees what it holds.
    """

    async def complete(self, request: ChatRequest) -> ChatResponse: ...

    async def stream(self, request: ChatRequest, on_tokens: TokenCallback | None = None) -> ChatResponse:
        return await self.complete(request)

    async def context_budget(self) -> ContextBudget | None:
        return None

    async def aclose(self) -> None:
        return None


class ChatEndpoint(Protocol):
    """What answers requests: sends one and returns the answer as it came (a :class:`RawResponse`).

    ``send`` asks once, with ``repair``: the turns that follow the request's own messages when it is
    asked again (the answer that could not be used, then what was wrong with it). It does nothing
    about what the answer says: reading, validating and asking again are
    :class:`~research_agent.llm.checked.CheckedModel`'s. An LLMError it raises may carry the
    ``usage`` this send spent. ``streams`` says whether ``send_streamed`` really streams (by default
    not: the layer above then asks whole); ``context_budget(tier)`` is the window of the ``tier``'s
    model (None: unknown).
    """

    streams: bool = False

    async def send(self, request: ChatRequest, repair: Sequence[Turn] = ()) -> RawResponse: ...

    async def send_streamed(self, request: ChatRequest, on_tokens: TokenCallback | None = None) -> RawResponse:
        return await self.send(request)

    async def context_budget(self, tier: Literal["main", "fast"] = "main") -> ContextBudget | None:
        return None

    async def aclose(self) -> None:
        return None
