"""A ChatModel that answers every call from a responder, for runs whose call count is not scripted.

Like ScriptedModel (tests/conftest.py) it validates each answer against the request's
schema and records every request, but it never runs dry: a learning A/B makes many runs.
``before(request)`` runs first on each call; tests hang their events on it (set an
interrupt, raise an error) so that what happens mid-run is decided by the calls made,
never by timing. ``cost_usd=None`` answers like an endpoint whose price is unknown.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jsonschema

from research_agent.errors import InvalidModelOutput
from research_agent.llm import ChatRequest, ChatResponse, Usage
from research_agent.llm.schema_bounds import answer_schema, clamp

__all__ = ["ResponderModel", "on_call"]


class ResponderModel:
    """Answers with ``responder.answer(stage, system, user)``; see the module docstring."""

    def __init__(
        self,
        responder: Any,
        *,
        before: Callable[[ChatRequest], None] | None = None,
        cost_usd: float | None = 0.0,
    ) -> None:
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
        data = self.responder.answer(request.stage, request.system, request.user)
        notes: tuple[str, ...] = ()
        if request.schema is not None:
            jsonschema.validate(data, answer_schema(dict(request.schema)))
            data, notes = clamp(data, request.schema)
            problem = request.check(data) if request.check is not None else None
            if problem:  # a responder answers the same every time: no attempt would do better
                raise InvalidModelOutput(f"the {request.stage} stage got an unusable answer: {problem}")
        usage = Usage(
            prompt_tokens=(len(request.system) + len(request.user)) // 4,
            completion_tokens=50,
            calls=1,
            cost_usd=self.cost_usd,
        )
        if request.schema is None:  # the writer: markdown
            return ChatResponse(data=None, text=str(data), model="scripted", usage=usage)
        return ChatResponse(data=data, text="", model="scripted", usage=usage, notes=notes)


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
