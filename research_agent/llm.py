"""The model seam: one small protocol, and the OpenAI-compatible implementation.

Every stage talks to a :class:`ChatModel`. A call is a :class:`ChatRequest` naming
its stage, a system and a user message, and (almost always) the JSON Schema the answer
must satisfy; the answer is a :class:`ChatResponse` whose ``data`` already validated.

Tests pass a scripted ChatModel; the product builds :class:`OpenAIChatModel` from
Settings. :class:`UsageRecorder` wraps any ChatModel to count tokens per stage.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

__all__ = [
    "ChatRequest",
    "ChatResponse",
    "ChatModel",
    "Usage",
    "UsageRecorder",
]


@dataclass(frozen=True)
class ChatRequest:
    """One call to a model.

    ``schema`` is the JSON Schema of the answer (its ``stage`` is used as the schema
    name); ``None`` asks for plain text. ``tier`` picks the main or the cheaper fast model.
    """

    stage: str
    system: str
    user: str
    schema: Mapping[str, Any] | None = None
    temperature: float = 0.2
    tier: Literal["main", "fast"] = "main"
    max_tokens: int | None = None


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    retries: int = 0
    cost_usd: float = 0.0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.calls + other.calls,
            self.retries + other.retries,
            self.cost_usd + other.cost_usd,
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "calls": self.calls,
            "retries": self.retries,
            "cost_usd": round(self.cost_usd, 6),
        }


@dataclass(frozen=True)
class ChatResponse:
    """A validated answer. ``data`` is the parsed JSON (None for plain text)."""

    data: Any
    text: str
    model: str
    usage: Usage = field(default_factory=Usage)


@runtime_checkable
class ChatModel(Protocol):
    """Anything that can answer a ChatRequest."""

    async def complete(self, request: ChatRequest) -> ChatResponse: ...


class UsageRecorder:
    """Wraps a ChatModel and adds up usage per stage; safe under asyncio concurrency."""

    def __init__(self, inner: ChatModel) -> None:
        self.inner = inner
        self.by_stage: dict[str, Usage] = {}
        self.models: set[str] = set()
        self._lock = asyncio.Lock()

    async def complete(self, request: ChatRequest) -> ChatResponse:
        response = await self.inner.complete(request)
        async with self._lock:
            self.by_stage[request.stage] = self.by_stage.get(request.stage, Usage()) + response.usage
            if response.model:
                self.models.add(response.model)
        return response

    @property
    def total(self) -> Usage:
        total = Usage()
        for usage in self.by_stage.values():
            total = total + usage
        return total
