"""A ChatModel that answers every call from a responder, for runs whose call count is not scripted.

Like ScriptedModel (tests/conftest.py) its answers are served raw to the shared layer
(:class:`~research_agent.llm.checked.CheckedModel`), which validates them against the request's
schema, and it records every request; but it never runs dry: a learning A/B makes many runs.
``before(request)`` runs first on each call; tests hang their events on it (set an
interrupt, raise an error) so that what happens mid-run is decided by the calls made,
never by timing. ``cost_usd=None`` answers like an endpoint whose price is unknown.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from research_agent.llm import ChatEndpoint, ChatRequest, ChatResponse, CheckedModel, RawResponse, Usage
from research_agent.llm.protocol import Turn

__all__ = ["ResponderModel", "on_call"]


class _Responding(ChatEndpoint):
    def __init__(self, responder: Any, cost_usd: float | None) -> None:
        self.responder = responder
        self.cost_usd = cost_usd

    async def send(self, request: ChatRequest, repair: Sequence[Turn] = ()) -> RawResponse:
        data = self.responder.answer(request.stage, request.system, request.user)
        usage = Usage(
            prompt_tokens=(len(request.system) + len(request.user)) // 4,
            completion_tokens=50,
            calls=1,
            cost_usd=self.cost_usd,
        )
        content = str(data) if request.schema is None else json.dumps(data)  # the writer: markdown
        return RawResponse(content=content, model="scripted", usage=usage)


class ResponderModel(CheckedModel):
    """Answers with ``responder.answer(stage, system, user)``; see the module docstring."""

    def __init__(
        self,
        responder: Any,
        *,
        before: Callable[[ChatRequest], None] | None = None,
        cost_usd: float | None = 0.0,
    ) -> None:
        super().__init__(_Responding(responder, cost_usd))
        self.responder = responder
        self.before = before
        self.cost_usd = cost_usd
        self.requests: list[ChatRequest] = []

    def calls(self, stage: str) -> list[ChatRequest]:
        return [r for r in self.requests if r.stage == stage]

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        if self.before is not None:
            self.before(request)
        return await super().complete(request)


def on_call(stage: str, number: int, action: Callable[[], None]) -> Callable[[ChatRequest], None]:
    """A ``before`` hook that runs ``action`` on the ``number``-th call (1-based) of ``stage``."""
    seen = {"count": 0}

    def hook(request: ChatRequest) -> None:
        if request.stage != stage:
            return
        seen["count"] += 1
        if seen["count"] == number:
            action()

    return hook
