"""The one layer between the stages and an endpoint: every answer read, checked and asked again.

A :class:`~research_agent.llm.protocol.ChatEndpoint` only sends a request and returns the answer
as it came. :class:`CheckedModel` turns that into the :class:`~research_agent.llm.protocol.ChatModel`
every stage calls: each answer has its control characters taken out, its reasoning stripped,
its JSON found and validated against the schema without its upper bounds, then cut to them, then
read by the request's ``check`` (:func:`~research_agent.llm.structured.interpret`). An answer that
fails is asked again with the error shown to the model (:func:`~research_agent.llm.structured.repair_messages`),
up to :data:`~research_agent.llm.protocol.STRUCTURED_ATTEMPTS` answers in all; what the attempts
spent is added up, and an error raised carries it. The real client and the tests' scripted model
both sit under it, so they cannot differ in how an answer is read.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Literal

from ..errors import InvalidModelOutput, LLMError
from ..text.controls import strip_controls
from .budget import ContextBudget
from .protocol import (
    STRUCTURED_ATTEMPTS,
    ChatEndpoint,
    ChatModel,
    ChatRequest,
    ChatResponse,
    RawResponse,
    TokenCallback,
    Turn,
)
from .structured import InvalidAnswer, interpret, plain_schema, repair_messages, strip_think
from .usage import Usage

__all__ = ["CheckedModel", "cleaned_data", "read_streamed"]

log = logging.getLogger(__name__)


class CheckedModel(ChatModel):
    """A ChatModel over ``endpoint``: answers read and validated, re-asked with their error,
    usage added up over the attempts (see the module docstring). It streams when the endpoint
    does (:attr:`~research_agent.llm.protocol.ChatEndpoint.streams`), else answers whole; its
    context window and closing are the endpoint's."""

    def __init__(self, endpoint: ChatEndpoint) -> None:
        self.endpoint = endpoint

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """Up to STRUCTURED_ATTEMPTS answers; each one asked again shows the model what was wrong."""
        schema = plain_schema(request.schema) if request.schema is not None else None
        spent, reason, model = Usage(), "", ""
        repair: Sequence[Turn] = ()
        for attempt in range(STRUCTURED_ATTEMPTS):
            if attempt:
                spent = spent + Usage(retries=1)
            raw = await self._send(request, repair, spent)
            spent, model = spent + raw.usage, raw.model
            content, dropped = strip_controls(raw.content)  # model text is text: nothing reads it before this
            answer = replace(raw, content=content) if dropped else raw
            try:
                data, text, notes = interpret(answer, schema, request.check)
            except InvalidAnswer as exc:
                reason = str(exc)
                log.info("stage %s: invalid answer %d from %s (%s)", request.stage, attempt + 1, model, reason)
                repair = repair_messages(answer, reason, schema is not None)
                continue
            data, more = cleaned_data(data)
            dropped += more
            for note in notes:
                log.info("stage %s: %s", request.stage, note)
            return ChatResponse(data=data, text=text, model=model, usage=spent, notes=notes, controls_dropped=dropped)
        error = InvalidModelOutput(
            f"the {request.stage} stage got invalid output from model {model} "
            f"after {STRUCTURED_ATTEMPTS} attempts: {reason}",
            stage=request.stage,
            model=model,
        )
        error.usage = spent
        raise error

    async def _send(self, request: ChatRequest, repair: Sequence[Turn], spent: Usage) -> RawResponse:
        """One answer from the endpoint; an LLMError raised carries what the earlier attempts spent too."""
        try:
            return await self.endpoint.send(request, repair)
        except LLMError as exc:
            if not spent.empty:
                exc.usage = spent + (exc.usage or Usage())
            raise

    async def stream(self, request: ChatRequest, on_tokens: TokenCallback | None = None) -> ChatResponse:
        """A plain-text answer as it arrives when the endpoint streams, else :meth:`complete`'s."""
        if not self.endpoint.streams:
            return await self.complete(request)
        return read_streamed(await self.endpoint.send_streamed(request, on_tokens))

    async def context_budget(self, tier: Literal["main", "fast"] = "main") -> ContextBudget | None:
        """The context window of the ``tier``'s model, as the endpoint knows it (None: unknown)."""
        return await self.endpoint.context_budget(tier)

    async def aclose(self) -> None:
        """Close the endpoint."""
        await self.endpoint.aclose()


def read_streamed(raw: RawResponse) -> ChatResponse:
    """The ChatResponse of a streamed answer: controls and reasoning left out, quirks named."""
    content, dropped = strip_controls(raw.content)
    quirks = set(raw.quirks)
    if "<think>" in content.lower() or "</think>" in content.lower():
        quirks.add("think")
    return ChatResponse(data=None, text=strip_think(content), model=raw.model, usage=raw.usage, notes=raw.notes,
                        finish_reason=raw.finish_reason, quirks=tuple(sorted(quirks)), controls_dropped=dropped)  # fmt: skip


def cleaned_data(data: Any) -> tuple[Any, int]:
    """Parsed JSON ``data`` with controls taken out of every string in it (JSON escapes such as
    ``\\u001b`` decode into the very characters taken out of the raw text), and how many
    characters went. Walked without recursion; lists and objects are changed in place."""
    if isinstance(data, str):
        return strip_controls(data)
    dropped = 0
    stack = [data]
    while stack:
        node = stack.pop()
        keys = range(len(node)) if isinstance(node, list) else list(node) if isinstance(node, dict) else ()
        for key in keys:
            value = node[key]
            if isinstance(value, str):
                node[key], count = strip_controls(value)
                dropped += count
            elif isinstance(value, list | dict):
                stack.append(value)
    return data, dropped
