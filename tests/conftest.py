"""Shared fixtures. The scripted model lives here, like simonw/llm's mock model."""

from __future__ import annotations

import copy
from collections import defaultdict, deque
from collections.abc import Callable
from typing import Any

import jsonschema
import pytest

from research_agent.llm import ChatRequest, ChatResponse, Usage

Answer = Any  # a dict/list/str, an Exception to raise, or a callable(request) -> one of those


class ScriptedModel:
    """A ChatModel that answers from per-stage queues and fails loudly.

    ``enqueue(stage, answer, times=1)`` adds answers for a stage. A call for a stage
    with nothing queued raises AssertionError; ``assert_done()`` raises if anything
    queued was never asked for. Answers are validated against the request's schema
    like the real implementation does, so a script cannot drift from the prompts.
    """

    def __init__(self, *, validate: bool = True) -> None:
        self.queues: dict[str, deque[Answer]] = defaultdict(deque)
        self.requests: list[ChatRequest] = []
        self.validate = validate

    def enqueue(self, stage: str, answer: Answer, times: int = 1) -> ScriptedModel:
        for _ in range(times):
            self.queues[stage].append(answer)
        return self

    def calls(self, stage: str) -> list[ChatRequest]:
        return [r for r in self.requests if r.stage == stage]

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        queue = self.queues.get(request.stage)
        if not queue:
            raise AssertionError(f"unexpected call for stage {request.stage!r} (nothing scripted)")
        answer = queue.popleft()
        if callable(answer) and not isinstance(answer, type):
            answer = answer(request)
        if isinstance(answer, BaseException):
            raise answer
        data = copy.deepcopy(answer)
        if request.schema is not None and self.validate:
            jsonschema.validate(data, request.schema)
        text = data if isinstance(data, str) else ""
        usage = Usage(prompt_tokens=(len(request.system) + len(request.user)) // 4, completion_tokens=50, calls=1)
        return ChatResponse(data=None if request.schema is None else data, text=text, model="scripted", usage=usage)

    def assert_done(self) -> None:
        left = {stage: len(q) for stage, q in self.queues.items() if q}
        if left:
            raise AssertionError(f"scripted answers never asked for: {left}")


@pytest.fixture
def scripted_model() -> ScriptedModel:
    model = ScriptedModel()
    yield model
    model.assert_done()


def answer_by(fn: Callable[[ChatRequest], Answer]) -> Callable[[ChatRequest], Answer]:
    """Mark a function as a content-dependent answer (for readability in tests)."""
    return fn
