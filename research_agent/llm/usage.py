"""Tokens, calls and cost per stage, counted for every call that returned usage.

A :class:`Usage` adds up; its ``cost_usd`` is None when the price of a model it
covers is unknown, and stays None in any sum (an unknown price is never $0).
:class:`UsageRecorder` wraps any ChatModel: it adds up the usage of answers, and of
failed calls too (an :class:`~research_agent.errors.LLMError` carries the usage spent
before it was raised), collects the notes answers carry (bounds cut locally), names
each kind of server quirk once, knows how long the oldest call in flight has been
waiting, and whether any answer at all could be read (a run with none is an endpoint
failure, not a run that found nothing).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import InvalidModelOutput
from ..text.controls import one_line

if TYPE_CHECKING:
    from .budget import ContextBudget
    from .protocol import ChatModel, ChatRequest, ChatResponse, TokenCallback

__all__ = ["Usage", "UsageRecorder", "usage_of", "usage_record", "total_cost", "QUIRKS"]

log = logging.getLogger(__name__)

# Server behaviour a streamed answer may show (``ChatResponse.quirks``), named once per run
# (on the progress line and in the run record's warnings) by :class:`UsageRecorder`.
QUIRKS = {
    "no_finish": "the model server ended a stream without a finish reason: the answer may be cut short",
    "ignored_stream": "the model server ignored stream=true and sent each answer whole: no token progress is shown",
    "think": "the model streamed <think> reasoning before its answer: the reasoning was left out",
    "empty_stream": "the model server ended a stream with no event: the request was sent again without streaming",
}


@dataclass(frozen=True)
class Usage:
    """What calls to a model cost. ``calls`` counts every answer received (valid or
    not); ``retries`` counts transient retries plus repair attempts; ``cost_usd`` is
    None when a price is unknown."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    retries: int = 0
    cost_usd: float | None = 0.0

    def __add__(self, other: Usage) -> Usage:
        cost = None if self.cost_usd is None or other.cost_usd is None else self.cost_usd + other.cost_usd
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.calls + other.calls,
            self.retries + other.retries,
            cost,
        )

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def empty(self) -> bool:
        """Nothing was spent: no answer, no retry."""
        return not (self.calls or self.retries or self.tokens)

    def as_dict(self) -> dict[str, Any]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "calls": self.calls,
            "retries": self.retries,
            "cost_usd": None if self.cost_usd is None else round(self.cost_usd, 6),
        }


def usage_of(exc: BaseException) -> Usage | None:
    """The usage a failed call spent before ``exc`` was raised, if it says."""
    spent = getattr(exc, "usage", None)
    return spent if isinstance(spent, Usage) else None


def usage_record(by_stage: dict[str, Usage]) -> dict[str, dict[str, Any]]:
    """The run record's ``usage`` block: ``{stage: {prompt_tokens, ..., cost_usd}}``."""
    return {stage: usage.as_dict() for stage, usage in by_stage.items()}


def total_cost(by_stage: dict[str, Usage]) -> float | None:
    """The summed cost; None when any stage's price is unknown."""
    total: float | None = 0.0
    for usage in by_stage.values():
        total = None if total is None or usage.cost_usd is None else total + usage.cost_usd
    return total


class UsageRecorder:
    """Wraps a ChatModel and adds up usage per stage, failed calls included.

    ``on_note`` receives each note an answer carries, e.g. ``"relevance answer /scores/0/reason:
    cut from 350 to 300 characters"``; ``on_quirk`` receives the message of each kind of
    server quirk (:data:`QUIRKS`) the first time it is seen.
    ``clock`` (monotonic seconds) times the calls in flight for :meth:`waited`. It is a ChatModel
    itself, forwarding each of the wrapped model's abilities. Safe under asyncio
    concurrency: the bookkeeping never awaits.
    """

    def __init__(
        self,
        inner: ChatModel,
        *,
        on_note: Callable[[str], None] | None = None,
        on_quirk: Callable[[str], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.inner = inner
        self.by_stage: dict[str, Usage] = {}
        self.models: set[str] = set()
        self.notes: list[str] = []
        self.answers_read = 0  # answers that could be read (valid or not)
        self.controls_dropped = 0  # control characters taken out of answers before they were read
        self.last_failure = ""  # the last error of a call that read no answer
        self._quirks: set[str] = set()
        self._on_note = on_note
        self._on_quirk = on_quirk
        self._clock = clock
        self._in_flight: dict[object, float] = {}

    async def complete(self, request: ChatRequest) -> ChatResponse:
        return await self._tracked(request, self.inner.complete(request))

    async def stream(self, request: ChatRequest, on_tokens: TokenCallback | None = None) -> ChatResponse:
        """The wrapped model's stream (a model that cannot stream answers whole)."""
        return await self._tracked(request, self.inner.stream(request, on_tokens))

    async def context_budget(self) -> ContextBudget | None:
        """The wrapped model's context window, when it knows one."""
        return await self.inner.context_budget()

    async def aclose(self) -> None:
        """Nothing: the wrapped model is closed by whoever made it."""

    async def _tracked(self, request: ChatRequest, call: Awaitable[ChatResponse]) -> ChatResponse:
        if request.retry:  # a stage asked again for an answer it could not use
            self._add(request.stage, Usage(retries=1))
        token = object()
        self._in_flight[token] = self._clock()
        try:
            response = await call
        except Exception as exc:
            self._failed(request, exc)
            raise
        finally:
            del self._in_flight[token]
        self._add(request.stage, response.usage)
        if response.text or response.data is not None:
            self.answers_read += 1
        self.controls_dropped += response.controls_dropped
        if response.model:
            self.models.add(response.model)
        for note in response.notes:
            self._note(f"{request.stage} answer {note}")
        for quirk in response.quirks:
            self._quirk(quirk)
        return response

    def _failed(self, request: ChatRequest, exc: Exception) -> None:
        spent = usage_of(exc)
        if spent is not None and not spent.empty:
            self._add(request.stage, spent)
        if isinstance(exc, InvalidModelOutput):
            self.answers_read += 1  # answers came, and were read; they did not validate
        else:
            self.last_failure = one_line(exc)

    def _quirk(self, kind: str) -> None:
        if kind in self._quirks:
            return
        self._quirks.add(kind)
        if self._on_quirk is not None:
            self._on_quirk(QUIRKS.get(kind, kind))

    def _add(self, stage: str, usage: Usage) -> None:
        self.by_stage[stage] = self.by_stage.get(stage, Usage()) + usage

    def _note(self, text: str) -> None:
        self.notes.append(text)
        if self._on_note is not None:
            self._on_note(text)

    def waited(self) -> float:
        """Seconds the oldest call in flight has been waiting; 0.0 when none is."""
        if not self._in_flight:
            return 0.0
        return max(0.0, self._clock() - min(self._in_flight.values()))

    @property
    def total(self) -> Usage:
        total = Usage()
        for usage in self.by_stage.values():
            total = total + usage
        return total

    @property
    def cost_usd(self) -> float | None:
        return total_cost(self.by_stage)

    def as_record(self) -> dict[str, dict[str, Any]]:
        """The ``usage`` block of a run record (or a critique): one entry per stage."""
        return usage_record(self.by_stage)
