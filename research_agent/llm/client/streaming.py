"""A plain-text answer, streamed: what arrived, and how the stream ended.

A slow server writes a long draft for many minutes; a stream shows the tokens as they
come and keeps them when the answer is cut. :class:`StreamReader` makes one streamed
attempt for :meth:`~research_agent.llm.client.openai_compat.OpenAIEndpoint.send_streamed` (whose
retry loop wraps it): the request is sent with ``stream: true`` (and ``stream_options``
asking for usage in the last event), the events are read with a bound on the whole body
(:mod:`.answers`), under two clocks (:mod:`.idle`): until the first token, the time a server
needs to read the prompt (``idle`` plus the prompt's estimated tokens at ``prompt_rate`` tokens
a second); after it, ``idle`` seconds with no token, however long the stream runs in all.

A finish reason ends the read: the usage event that follows it is waited for at most
:data:`FINISH_TAIL` seconds, never a held connection's ``[DONE]``. A listener that has heard
enough raises :class:`~research_agent.llm.protocol.StopStream`: the stream is closed there.

Nothing that arrived is thrown away here: a stall, the token limit or a broken
connection after some text returns that text with its finish reason (``stalled``,
``length``, ``unfinished``; ``no_first_token`` when nothing came in time). Only a failure before
any text is raised, for the retry loop; a stream that ended with no event at all raises
:class:`EmptyStream` (a server that failed after its headers: the caller asks again without
streaming, to read what it says). Server behaviour worth a warning is named in the answer's
``quirks`` (:data:`~research_agent.llm.usage.QUIRKS`).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any

from ...errors import EmptyStream
from ...text.passages import estimate_tokens
from ..budget import prompt_estimate
from ..protocol import BOUNDED, FINISHED, RawResponse, StopStream, TokenCallback
from ..structured import RawAnswer
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

__all__ = ["StreamReader", "EmptyStream", "STALLED", "NO_FIRST_TOKEN", "UNFINISHED", "CUT_REASONS", "FINISH_TAIL"]

STALLED = "stalled"  # no token for the idle limit
NO_FIRST_TOKEN = "no_first_token"  # no token within the time to read the prompt
UNFINISHED = "unfinished"  # the stream ended (or broke) without a finish reason
CUT_REASONS = ("length", STALLED, UNFINISHED, NO_FIRST_TOKEN, BOUNDED)  # the finish reasons of an answer cut short
FINISH_TAIL = 2.0  # seconds a finished stream is read on for its usage event


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
    events: int = 0

    @property
    def text(self) -> str:
        return "".join(self.parts)


class StreamReader:
    """Reads streamed attempts for one request; :meth:`response` gives the last one as a RawResponse.

    ``send(kwargs)`` makes one request and gives its answer, headers read, body not yet
    (:meth:`.sdk.SdkSender.send`)."""

    def __init__(
        self,
        send: Callable[[dict[str, Any]], AbstractAsyncContextManager[Any]],
        *,
        idle: float,
        ticker: Ticker,
        max_bytes: int,
        on_tokens: TokenCallback | None,
        prompt_rate: float = float("inf"),
    ) -> None:
        self._send = send
        self._idle = idle
        self._prompt_rate = prompt_rate
        self._ticker = ticker
        self._max_bytes = max_bytes
        self._on_tokens = on_tokens
        self._quirks: set[str] = set()
        self._notes: list[str] = []

    def quirk(self, kind: str) -> None:
        """Name server behaviour seen around the stream (:data:`~research_agent.llm.usage.QUIRKS`)."""
        self._quirks.add(kind)

    def first_token_limit(self, messages: list[dict[str, str]]) -> float:
        """Seconds the first token may take: the idle limit, plus the prompt read at ``prompt_rate``."""
        return self._idle + prompt_estimate([m["content"] for m in messages]) / self._prompt_rate

    async def read(self, kwargs: dict[str, Any], messages: list[dict[str, str]]) -> RawAnswer:
        """One streamed attempt: what arrived and how it ended; raises only when nothing arrived."""
        got = _Arrived()
        first = self.first_token_limit(messages)
        kwargs = {**kwargs, "timeout": max(float(kwargs.get("timeout") or 0), first)}  # ours, not the socket's
        if self._on_tokens is not None:
            self._on_tokens(0, "")  # sent: the server reads the prompt
        try:
            async with idle_limit(first, self._ticker) as watch, self._send(kwargs) as response:
                await self._consume(response, got, watch, messages, "stream_options" in kwargs)
        except IdleTimeout:
            if got.finish is None:
                got.finish = STALLED if got.tokens else NO_FIRST_TOKEN
                if not got.tokens:
                    self._notes.append(f"no first token within {first:.0f}s (the time allowed to read the prompt)")
        except StopStream:
            got.finish = BOUNDED
        except (ConnectionLost, Unreadable, TimeoutError):
            if got.finish is None and not got.text.strip():
                raise  # nothing to keep: the retry loop decides
            got.finish = got.finish or UNFINISHED
        if got.finish is None:  # the stream ended with no finish reason
            if not got.events and not got.done:
                raise EmptyStream("the stream ended before its first event")
            got.quirks.add("no_finish")
            got.finish = FINISHED if got.done else UNFINISHED
        self._quirks |= got.quirks
        prompt, done = counted(got.text, messages, got.usage)
        if got.usage[1] is not None and done != got.tokens and self._on_tokens is not None:
            self._on_tokens(done, "")  # the endpoint's own count, in the end: a correction, no new text
        return RawAnswer(content=got.text, finish_reason=got.finish, prompt_tokens=prompt, completion_tokens=done)

    async def _consume(
        self, http: Any, got: _Arrived, watch: IdleWatch, messages: list[dict[str, str]], usage_asked: bool
    ) -> None:
        if "event-stream" not in http.headers.get("content-type", "").lower():
            whole = completion_answer(await read_body(http, self._max_bytes), messages)
            got.quirks.add("ignored_stream")
            got.parts, got.finish = [whole.content], whole.finish_reason
            got.usage = (whole.prompt_tokens, whole.completion_tokens)
            self._heard(got, watch, max(1, whole.completion_tokens, estimate_tokens(whole.content)), whole.content)
            return
        lines = SseLines()
        async for data in body_chunks(http, self._max_bytes):
            if self._read(lines.feed(data), lines, got, watch, usage_asked):
                return
        self._read(lines.end(), lines, got, watch, usage_asked)

    def _read(self, payloads: list[str], lines: SseLines, got: _Arrived, watch: IdleWatch, usage_asked: bool) -> bool:
        """Take the events that arrived; True when the stream has said all the reader waits for."""
        for payload in payloads:
            self._take(stream_event(payload), got, watch)
        if lines.done:
            got.done = True
            return True
        return got.finish is not None and (got.usage != (None, None) or not usage_asked)  # no wait for [DONE]

    def _take(self, event: Any, got: _Arrived, watch: IdleWatch) -> None:
        got.events += 1
        if event.usage != (None, None):
            got.usage = event.usage
        if got.finish is not None:
            return  # the answer has ended: only its usage is still read
        if event.content:
            got.parts.append(event.content)
            got.chars += len(event.content)  # an event may carry a word, a line or the whole answer:
            if not got.tokens:  # at least estimate_tokens' four characters a token
                watch.limit = self._idle  # the first token: from now on, the idle limit
            self._heard(got, watch, max(got.tokens + 1, (got.chars + 3) // 4), event.content)
        if event.finish_reason:
            got.finish = event.finish_reason
            watch.limit = min(watch.limit, FINISH_TAIL)
            watch.touch()

    def _heard(self, got: _Arrived, watch: IdleWatch, tokens: int, piece: str) -> None:
        got.tokens = tokens
        watch.touch()
        if self._on_tokens is not None:
            self._on_tokens(tokens, piece)

    def response(self, raw: RawAnswer, model: str, usage: Usage) -> RawResponse:
        """The attempt that was kept, as it came, with the quirks and notes of the whole stream
        (:func:`~research_agent.llm.checked.read_streamed` reads it)."""
        return RawResponse(raw.content, model, usage, raw.finish_reason, tuple(sorted(self._quirks)), tuple(self._notes))
