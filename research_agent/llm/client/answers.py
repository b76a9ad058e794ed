"""Reading a model's answer off the wire: bounded, and named when it cannot be read.

An endpoint that says HTTP 200 has not yet given an answer. The body is read here, not by
the HTTP client: streamed and decompressed under a size cap (decompressed bytes
count, so a gzip bomb is refused like a 50 MB body), then checked to be what a chat
completion is: UTF-8 JSON, an object, with ``choices`` whose first message has text.
Anything else raises :class:`Unreadable` with a reason a person can act on (an HTML login
page, another vendor's format, a null content). The model layer retries an unreadable
answer like a 5xx and then names it (:class:`~research_agent.errors.UnreadableAnswer`).

A streamed answer is read event by event (:class:`SseLines`, :func:`stream_event`); its
final event with ``choices: []`` is the usage chunk, not an unreadable one.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

from ...errors import ConnectionLost, FetchRefused, Unreadable
from ...text.controls import one_line
from ...text.passages import estimate_tokens
from ..structured import RawAnswer

__all__ = [
    "MAX_ANSWER_BYTES",
    "Unreadable",
    "ConnectionLost",
    "StreamEvent",
    "SseLines",
    "body_chunks",
    "read_body",
    "completion_answer",
    "stream_event",
    "json_object",
    "counted",
    "ACCEPT_ENCODING",
]

MAX_ANSWER_BYTES = 4 * 1024 * 1024  # the default cap on one answer's decompressed body
# Sent with every request: what the bounded decoder can undo (never brotli or zstd).
ACCEPT_ENCODING = {"Accept-Encoding": "gzip, deflate"}
_SHOWN = 120  # characters of an unreadable answer quoted in its reason
_LINE_END = re.compile(rb"[\r\n]")


def _megabytes(size: int) -> str:
    return f"{size / (1024 * 1024):g} MB"


async def _once(data: bytes) -> AsyncIterator[bytes]:
    yield data


async def body_chunks(response: Any, max_bytes: int) -> AsyncIterator[bytes]:
    """The decoded body of a streamed httpx ``response``, chunk by chunk, at most ``max_bytes``.

    Raises :class:`Unreadable` as soon as the body (decompressed) would pass the cap, or when
    its compression cannot be undone; :class:`ConnectionLost` (or TimeoutError) when the
    connection breaks (or times out) on the way.
    """
    from ...fetch.body import BoundedDecoder  # fetching's bounded reader; loaded on first use

    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise Unreadable(f"the answer is {int(declared):,} bytes, over the {_megabytes(max_bytes)} cap")
    import httpx

    try:
        if getattr(response, "is_stream_consumed", False):  # read and decoded already (httpx.MockTransport)
            decoder, chunks = BoundedDecoder("identity"), _once(response.content)
        else:
            decoder, chunks = BoundedDecoder(response.headers.get("content-encoding", "")), response.aiter_raw()
        total = 0
        async for raw in chunks:
            out = decoder.feed(raw, max_bytes - total)
            total += len(out)
            if out:
                yield out
        out = decoder.flush(max_bytes - total)
        if out:
            yield out
    except httpx.TransportError as exc:
        if isinstance(exc, httpx.TimeoutException):
            raise TimeoutError(str(exc)) from exc
        raise ConnectionLost(f"{type(exc).__name__}: {exc}") from exc
    except FetchRefused as exc:
        if exc.reason == "too_large":
            raise Unreadable(f"the answer is larger than the {_megabytes(max_bytes)} cap") from None
        raise Unreadable(f"the answer's encoding could not be undone ({exc.reason})") from None


async def read_body(response: Any, max_bytes: int) -> bytes:
    """The whole decoded body of ``response``, at most ``max_bytes`` (see :func:`body_chunks`)."""
    parts = [chunk async for chunk in body_chunks(response, max_bytes)]
    return b"".join(parts)


def json_object(data: bytes | str, what: str = "the answer") -> dict[str, Any]:
    """``data`` as a JSON object, or :class:`Unreadable` saying what it was instead."""
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise Unreadable(f"{what} is not UTF-8 text") from None
    else:
        text = data
    shown = one_line(text.strip()[:_SHOWN])
    if not text.strip():
        raise Unreadable(f"{what} was an empty body")
    if text.lstrip().startswith("<"):
        raise Unreadable(f"{what} is HTML, not a chat completion (a login page or a proxy's error?): {shown!r}")
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        raise Unreadable(f"{what} is not JSON: {shown!r}") from None
    if not isinstance(value, dict):
        raise Unreadable(f"{what} is JSON but not an object: {shown!r}")
    return value


def _named_error(value: dict[str, Any]) -> str:
    """The endpoint's own error message in a 200 answer, if it carries one."""
    error = value.get("error")
    if isinstance(error, dict):
        error = error.get("message") or error.get("type") or error
    return one_line(error)[:200] if error else ""


def _first_choice(value: dict[str, Any], what: str) -> dict[str, Any]:
    choices = value.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        return choices[0]
    error = _named_error(value)
    if error:
        raise Unreadable(f"{what} carries an error, not a completion: {error}")
    if isinstance(choices, list):
        raise Unreadable(f"{what} has no choices")
    keys = ", ".join(sorted(str(k) for k in value)[:8]) or "none"
    raise Unreadable(f"{what} is not an OpenAI chat completion (its fields: {keys})")


def _usage(value: Any) -> tuple[int | None, int | None]:
    if not isinstance(value, dict):
        return None, None
    prompt, done = value.get("prompt_tokens"), value.get("completion_tokens")
    return (
        prompt if isinstance(prompt, int) and not isinstance(prompt, bool) and prompt >= 0 else None,
        done if isinstance(done, int) and not isinstance(done, bool) and done >= 0 else None,
    )


def counted(content: str, messages: Sequence[dict[str, str]], usage: tuple[int | None, int | None]) -> tuple[int, int]:
    """(prompt, completion) tokens: the endpoint's counts, estimated where it gave none."""
    prompt, done = usage
    if prompt is None:
        prompt = sum(estimate_tokens(m["content"]) for m in messages)
    if done is None:
        done = estimate_tokens(content)
    return prompt, done


def completion_answer(body: bytes, messages: Sequence[dict[str, str]]) -> RawAnswer:
    """The answer in a (non-streamed) chat completion body; :class:`Unreadable` otherwise."""
    value = json_object(body)
    choice = _first_choice(value, "the answer")
    message = choice.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if content is None:
        refusal = message.get("refusal") if isinstance(message, dict) else None
        if refusal:
            raise Unreadable(f"the model refused: {' '.join(str(refusal).split())[:200]}")
        raise Unreadable("the answer's message content is null")
    if not isinstance(content, str):
        raise Unreadable(f"the answer's message content is {type(content).__name__}, not text")
    finish = choice.get("finish_reason")
    finish = finish if isinstance(finish, str) and finish else "stop"
    prompt, done = counted(content, messages, _usage(value.get("usage")))
    return RawAnswer(content=content, finish_reason=finish, prompt_tokens=prompt, completion_tokens=done)


@dataclass(frozen=True)
class StreamEvent:
    """One server-sent event of a streamed completion: new text, the finish reason when this
    event ends the answer, and the token counts when it carries them (the usage chunk)."""

    content: str
    finish_reason: str | None
    usage: tuple[int | None, int | None] = (None, None)


def stream_event(payload: str) -> StreamEvent:
    """One event's ``data:`` payload read; :class:`Unreadable` when it is not a completion chunk."""
    value = json_object(payload, "a stream event")
    usage = _usage(value.get("usage"))
    if value.get("choices") == []:
        return StreamEvent("", None, usage)  # the usage chunk that ends the stream
    choice = _first_choice(value, "a stream event")
    delta = choice.get("delta")
    if not isinstance(delta, dict):
        delta = message if isinstance(message := choice.get("message"), dict) else {}
    content = delta.get("content")
    if content is not None and not isinstance(content, str):
        raise Unreadable(f"a stream event's content is {type(content).__name__}, not text")
    finish = choice.get("finish_reason")
    return StreamEvent(content or "", finish if isinstance(finish, str) and finish else None, usage)


class SseLines:
    """Server-sent events read from bytes as they arrive: each event's ``data``, in order.

    Lines end with CR, LF or CRLF, as the SSE specification allows (a CRLF split between two
    reads is one line end); an event's ``data:`` lines are joined with newlines and the event
    ends at a blank line. Comments (``: ping``), event names, ids and retry fields are skipped;
    ``[DONE]`` ends the stream. Every byte is searched once: the buffer keeps an offset of what
    was searched, never re-splits what it holds, so a line that never ends costs its length,
    not its length squared. The body's size is bounded where it is read (:func:`body_chunks`),
    so no line here can grow past the answer cap.
    """

    def __init__(self) -> None:
        self._pending = bytearray()  # the start of a line whose end has not arrived
        self._searched = 0  # bytes of ``_pending`` already searched for a line end
        self._after_cr = False  # the last line ended with CR: a LF that comes next belongs to it
        self._data: list[bytes] = []  # the data lines of the event being read
        self.done = False  # the stream said ``[DONE]``

    def feed(self, data: bytes) -> list[str]:
        """The payloads of the events completed by what has arrived so far."""
        pending = self._pending
        pending += data
        start = 0
        if self._after_cr and data:
            start = int(pending[:1] == b"\n")
            self._after_cr = False
        payloads: list[str] = []
        while (found := _LINE_END.search(pending, max(start, self._searched))) is not None:
            end = found.start()
            self._line(bytes(pending[start:end]), payloads)
            start = end + 1
            if pending[end] == 13:  # CR: a LF right after it is the same line end
                if start < len(pending):
                    start += pending[start] == 10
                else:
                    self._after_cr = True
            self._searched = start
        del pending[:start]
        self._searched = len(pending)
        return payloads

    def end(self) -> list[str]:
        """The stream is over: the payload of an event whose blank line never came."""
        payloads: list[str] = []
        if self._data:
            self._line(b"", payloads)
        return payloads

    def _line(self, line: bytes, payloads: list[str]) -> None:
        if self.done:
            return
        if not line:
            if self._data:
                payload = b"\n".join(self._data)
                self._data = []
                self._dispatch(payload.strip(), payloads)
            return
        name, _, value = line.partition(b":")
        if name == b"data":  # "data" alone is an empty data line
            self._data.append(value[1:] if value[:1] == b" " else value)

    def _dispatch(self, payload: bytes, payloads: list[str]) -> None:
        if payload == b"[DONE]":
            self.done = True
            return
        try:
            payloads.append(payload.decode("utf-8"))
        except UnicodeDecodeError:
            raise Unreadable("a stream event is not UTF-8 text") from None
