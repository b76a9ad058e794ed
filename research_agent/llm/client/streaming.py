"""A plain-text answer, streamed: what arrived, and how the stream ended.

A slow server writes a long draft for many minutes; a stream shows the tokens as they
come and keeps them when the answer is cut. :class:`StreamReader` makes one streamed
attempt for :meth:`~research_agent.llm.client.openai_compat.OpenAIChatModel.stream` (whose
retry loop wraps it): the request is sent with ``stream: true`` (and ``stream_options``
asking for usage in the last event), the events are read with a bound on the whole body
(:mod:`.answers`), and the idle limit (:mod:`.idle`) stops a stream that sends no token
for ``idle`` seconds, however long it has run in all.

Nothing that arrived is thrown away here: a stall, the token limit or a broken
connection after some text returns that text with its finish reason (``stalled``,
``length``, ``unfinished``). Only a failure before any text is raised, for the retry loop.
Server behaviour worth a warning is named in the answer's ``quirks``
(:data:`~research_agent.llm.usage.QUIRKS`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...text.passages import estimate_tokens
from ..protocol import FINISHED, ChatResponse, TokenCallback
from ..structured import RawAnswer, strip_think
from ..usage import Usage
from ..waiting import Ticker
from .answers import (
    ConnectionLost,
    SseLines,
    Unreadable,
    body_chunks,
    completion_answer,
    counted,
    read_body,
    stream_event,
)
from .idle import IdleTimeout, IdleWatch, idle_limit

__all__ = ["StreamReader", "STALLED", "UNFINISHED", "CUT_REASONS"]

STALLED = "stalled"  # no token for the idle limit
UNFINISHED = "unfinished"  # the stream ended (or broke) without a finish reason
CUT_REASONS = ("length", STALLED, UNFINISHED)  # the finish reasons of an answer cut short



@dataclass
class _Arrived:
    """What one streamed attempt has received so far."""

    parts: list[str] = field(default_factory=list)
    tokens: int = 0  # as counted so far: one per event, or the text's estimate when events carry more
    chars: int = 0
    finish: str | None = None
    usage: tuple[int | None, int | None] = (None, None)
    quirks: set[str] = field(default_factory=set)
    done: bool = False  # the server said [DONE]

    @property
    def text(self) -> str:
        return "".join(self.parts)


class StreamReader:
    """Reads streamed attempts for one request; :meth:`response` turns the last into a ChatResponse."""

    def __init__(
        self, client: Any, *, idle: float, ticker: Ticker, max_bytes: int, on_tokens: TokenCallback | None
    ) -> None:
        self._client = client
        self._idle = idle
        self._ticker = ticker
        self._max_bytes = max_bytes
        self._on_tokens = on_tokens
        self._quirks: set[str] = set()

    async def read(self, kwargs: dict[str, Any], messages: list[dict[str, str]]) -> RawAnswer:
        """One streamed attempt: what arrived and how it ended; raises only when nothing arrived."""
        got = _Arrived()
        try:
            create = self._client.chat.completions.with_streaming_response.create
            async with idle_limit(self._idle, self._ticker) as watch, create(**kwargs) as response:
                await self._consume(response.http_response, got, watch, messages)
        except IdleTimeout:
            got.finish = STALLED
        except (ConnectionLost, Unreadable, TimeoutError):
            if not got.text.strip():
                raise  # nothing to keep: the retry loop decides
            got.finish = UNFINISHED
        if got.finish is None:  # the stream ended with no finish reason
            got.quirks.add("no_finish")
            got.finish = FINISHED if got.done else UNFINISHED
        self._quirks |= got.quirks
        prompt, done = counted(got.text, messages, got.usage)
        if got.usage[1] is not None and done != got.tokens and self._on_tokens is not None:
            self._on_tokens(done, "")  # the endpoint's own count, in the end: a correction, no new text
        return RawAnswer(content=got.text, finish_reason=got.finish, prompt_tokens=prompt, completion_tokens=done)

    async def _consume(self, http: Any, got: _Arrived, watch: IdleWatch, messages: list[dict[str, str]]) -> None:
        if "event-stream" not in http.headers.get("content-type", "").lower():
            whole = completion_answer(await read_body(http, self._max_bytes), messages)
            got.quirks.add("ignored_stream")
            got.parts, got.finish = [whole.content], whole.finish_reason
            got.usage = (whole.prompt_tokens, whole.completion_tokens)
            self._heard(got, watch, max(1, whole.completion_tokens, estimate_tokens(whole.content)), whole.content)
            return
        lines = SseLines()
        async for data in body_chunks(http, self._max_bytes):
            for payload in lines.feed(data):
                event = stream_event(payload)
                if event.content:
                    got.parts.append(event.content)
                    got.chars += len(event.content)  # an event may carry a word, a line or the whole answer:
                    # at least estimate_tokens' four characters a token
                    self._heard(got, watch, max(got.tokens + 1, (got.chars + 3) // 4), event.content)
                if event.finish_reason:
                    got.finish = event.finish_reason
                if event.usage != (None, None):
                    got.usage = event.usage
            if lines.done:
                got.done = True
                return

    def _heard(self, got: _Arrived, watch: IdleWatch, tokens: int, piece: str) -> None:
        got.tokens = tokens
        watch.touch()
        if self._on_tokens is not None:
            self._on_tokens(tokens, piece)

    def response(self, raw: RawAnswer, model: str, usage: Usage) -> ChatResponse:
        """The ChatResponse of the attempt that was kept: reasoning left out, quirks named."""
        text = strip_think(raw.content)
        quirks = set(self._quirks)
        if "<think>" in raw.content.lower() or "</think>" in raw.content.lower():
            quirks.add("think")
        return ChatResponse(
            data=None, text=text, model=model, usage=usage, finish_reason=raw.finish_reason, quirks=tuple(sorted(quirks))
        )
