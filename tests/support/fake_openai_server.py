"""A real OpenAI-compatible HTTP server on 127.0.0.1 that injects faults on demand.

Used by the tests, by ``bench/`` and by CLI end-to-end tests that run the installed CLI
in a subprocess with ``OPENAI_BASE_URL`` pointing here::

    def answer(body: dict, stage: str) -> str: ...       # the assistant message content
    with FakeOpenAIServer(answer, delay=0.5, faults=Faults(rate=0.3, seed=7)) as server:
        settings = settings.replace(base_url=server.base_url)
        ...
        print(sequential_rounds(server.requests))

Fault kinds (``Faults.first``, ``Faults.mix``, ``Faults.always``):

    "500" "502" "503" "504" "429"   that HTTP status (429/503 carry Retry-After when set)
    "close"       headers and half the body, then the connection is closed
    "stall"       headers sent, the body never comes (ends at shutdown or stall_seconds)
    "truncate"    the content is cut in half (broken JSON), finish_reason "stop"
    "length"      the content is cut in half and finish_reason is "length"
    "think"       the content is prefixed with a <think>...</think> block
    "badschema"   valid JSON that breaks any strict schema

Unreadable answers (HTTP 200, streamed or not, the same body; ``BODY_KINDS``):

    "empty" "brace" "badutf8" "nochoices" "nullcontent" "html" "vendor"   a body that is not a chat completion
    "huge"        a 50 MB body (its first bytes look like a completion)
    "gzipbomb"    ``Content-Encoding: gzip``, 50 KB that expand to 50 MB

``FakeOpenAIServer(context_window=N)`` runs the model in N tokens like llama-cpp-python's server:
``GET /props`` says ``n_ctx`` (unless ``say_window=False``); a prompt of N tokens or more is
refused (HTTP 400 "This model's maximum context length is N tokens. However, you requested ...",
or, streamed, an event stream with no event at all, as that server does); a prompt that leaves
less room than ``max_tokens`` gets an answer cut at the window's end (``finish_reason: length``).
``token_ratio`` scales the server's count of prompt tokens (its tokenizer against ours).

``Faults(reject_json_schema=True)`` answers ``response_format`` ``json_schema`` with HTTP
500 and llama.cpp's error text. ``Faults(grammar_limit=2000)`` dies like llama.cpp's server
(a segfault in its schema-to-grammar converter) when a schema in ``response_format`` has a
``maxLength``/``minLength``/``maxItems``/``minItems`` above the limit: that request's
connection is dropped unanswered, and so is every later one (``server.crashed``).
Requests with ``"stream": true`` get server-sent events. ``POST /v1/embeddings`` answers
hashed bag-of-words vectors (``tests/support/fake_embeddings.py``) after the same delay,
without faults; its records have ``route == "embeddings"``.
Random faults are drawn from a seeded generator, so a test's plan is reproducible.

Standalone: ``python -m tests.support.fake_openai_server --port 8765 --delay 0.5``.
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import socket
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler
from typing import Any

from research_agent.llm import extract_json
from tests.support.fake_embeddings import embeddings_payload
from tests.support.quiet_server import QuietServer

__all__ = [
    "FakeOpenAIServer",
    "Faults",
    "RequestRecord",
    "Responder",
    "default_responder",
    "minimal_instance",
    "sequential_rounds",
    "FAULT_KINDS",
    "LLAMA_CPP_JSON_SCHEMA_ERROR",
    "grammar_breakers",
]

log = logging.getLogger(__name__)

Responder = Callable[[dict[str, Any], str], str]

STATUS_KINDS = frozenset({"500", "502", "503", "504", "429"})
CONTENT_KINDS = frozenset({"truncate", "length", "think", "badschema"})
BODY_KINDS = frozenset({"empty", "brace", "badutf8", "nochoices", "nullcontent", "html", "vendor", "huge", "gzipbomb"})
FAULT_KINDS = STATUS_KINDS | CONTENT_KINDS | BODY_KINDS | {"close", "stall"}
HUGE_BYTES = 50 * 1024 * 1024


def unreadable_body(kind: str) -> bytes:
    """The body of an unreadable-answer fault (``huge`` and ``gzipbomb`` are sent by ``_send_body``)."""
    message = {"role": "assistant", "content": None}
    return {
        "empty": b"",
        "brace": b"{",
        "badutf8": b'{"choices": [{"message": {"content": "' + bytes([0xFF, 0xFE]) + b'"}}]}',
        "nochoices": json.dumps({"id": "x", "object": "chat.completion", "choices": []}).encode(),
        "nullcontent": json.dumps({"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}).encode(),
        "html": b"<!DOCTYPE html><html><body><h1>Sign in to continue</h1></body></html>",
        "vendor": json.dumps({"type": "message", "content": [{"type": "text", "text": "hi"}],
                              "stop_reason": "end_turn"}).encode(),
    }[kind]

# What llama.cpp's server answers (HTTP 500) when asked for response_format json_schema.
LLAMA_CPP_JSON_SCHEMA_ERROR = (
    'response_format type must be one of "text" or "json_object", but got: json_schema'
)
BAD_SCHEMA_ANSWER = '{"fake_server": "this answer breaks the schema"}'
THINK_PREFIX = "<think>\nThe user wants JSON. Let me think about {stage} {{step by step}}.\n</think>\n"


@dataclass(frozen=True)
class Faults:
    """The fault plan. ``first`` applies to the first eligible calls in order, then each
    later eligible call gets a kind from ``mix`` with probability ``rate``. ``always`` maps
    a stage (or ``"*"``) to a kind applied to every call of it. ``stages`` limits
    ``first``/``rate`` to those stages (None: all)."""

    latency: float = 0.0
    first: tuple[str, ...] = ()
    rate: float = 0.0
    mix: tuple[str, ...] = ("500", "503", "429")
    seed: int = 0
    retry_after: str | None = None
    always: Mapping[str, str] = field(default_factory=dict)
    stages: frozenset[str] | None = None
    reject_json_schema: bool = False
    stall_seconds: float = 30.0
    grammar_limit: int | None = None

    def __post_init__(self) -> None:
        kinds = set(self.first) | set(self.always.values()) | (set(self.mix) if self.rate else set())
        unknown = sorted(kinds - FAULT_KINDS)
        if unknown:
            raise ValueError(f"unknown fault kind(s) {unknown}; known: {sorted(FAULT_KINDS)}")
        if not 0.0 <= self.rate <= 1.0:
            raise ValueError("rate must be between 0 and 1")


@dataclass(frozen=True)
class RequestRecord:
    """One request the server saw. Times are ``time.monotonic()`` in this process."""

    index: int
    stage: str
    model: str
    response_format: str | None
    stream: bool
    fault: str | None
    status: int
    start: float
    end: float
    prompt_tokens: int
    completion_tokens: int
    route: str = "chat"  # or "embeddings"
    user_agent: str = ""  # the client that sent it (the openai SDK says ``AsyncOpenAI/Python <version>``)

    @property
    def ok(self) -> bool:
        return self.status == 200 and self.fault not in {"close", "stall"}


def sequential_rounds(requests: Iterable[RequestRecord]) -> int:
    """How many rounds of calls had to wait for each other: the number of groups of
    time-overlapping [start, end] intervals, in time order."""
    rounds = 0
    current_end = float("-inf")
    for record in sorted(requests, key=lambda r: r.start):
        if record.start >= current_end:
            rounds += 1
            current_end = record.end
        else:
            current_end = max(current_end, record.end)
    return rounds


def minimal_instance(schema: Mapping[str, Any]) -> Any:
    """A small value that satisfies common JSON Schemas (objects, arrays, enums, bounds)."""
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if schema.get(key):
            return minimal_instance(schema[key][0])
    kind = schema.get("type", "object" if "properties" in schema else "string")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        props = schema.get("properties", {})
        required = schema.get("required", list(props))
        return {name: minimal_instance(props.get(name, {})) for name in required}
    if kind == "array":
        count = int(schema.get("minItems", 1 if schema.get("items") else 0))
        return [minimal_instance(schema.get("items", {})) for _ in range(count)]
    if kind in ("integer", "number"):
        value = schema.get("minimum", schema.get("exclusiveMinimum", -1) + 1)
        value = min(value, schema.get("maximum", value))
        return int(value) if kind == "integer" else float(value)
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    text = "example answer from the fake server"
    low, high = int(schema.get("minLength", 0)), int(schema.get("maxLength", 10_000))
    return (text * (low // len(text) + 1))[: max(low, min(len(text), high))]


def _schema_in(body: Mapping[str, Any]) -> Mapping[str, Any] | None:
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return (fmt.get("json_schema") or {}).get("schema")
    if fmt.get("type") == "json_object" and isinstance(fmt.get("schema"), dict):
        return fmt["schema"]
    for message in body.get("messages", []):
        content = message.get("content")
        if message.get("role") == "system" and isinstance(content, str) and "JSON Schema" in content:
            try:
                found = extract_json(content[content.index("JSON Schema") :])
            except ValueError:
                continue
            if isinstance(found, dict) and ("type" in found or "properties" in found):
                return found
    return None


def _response_format_schema(body: Mapping[str, Any]) -> Any:
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return (fmt.get("json_schema") or {}).get("schema")
    return fmt.get("schema") if fmt.get("type") == "json_object" else None


def grammar_breakers(schema: Any, limit: int) -> list[str]:
    """The repetition bounds in ``schema`` a grammar converter with ``limit`` cannot build."""
    found: list[str] = []
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key in ("maxLength", "minLength", "maxItems", "minItems") and isinstance(value, int):
                if value > limit:
                    found.append(f"{key}={value}")
            else:
                found += grammar_breakers(value, limit)
    elif isinstance(schema, list):
        for value in schema:
            found += grammar_breakers(value, limit)
    return found


def default_responder(body: dict[str, Any], stage: str) -> str:
    """A minimal valid instance of the request's schema as JSON; plain text otherwise."""
    schema = _schema_in(body)
    if schema is not None:
        return json.dumps(minimal_instance(schema))
    return f"This is an answer from the fake OpenAI-compatible server for the {stage or 'unnamed'} stage."


def _tokens(text: str) -> int:
    return len(text) // 4


def _prompt_tokens(body: Mapping[str, Any]) -> int:
    total = 0
    for message in body.get("messages", []):
        content = message.get("content", "")
        total += len(content if isinstance(content, str) else json.dumps(content))
    return total // 4


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out as two writes. With Nagle's algorithm on, the body waited for
    # the client's delayed ACK of the headers (about 40 ms on Linux), after the answer was
    # recorded as sent: every call looked 40 ms slower to the bench than to the server.
    # Production servers (uvicorn, asyncio, nginx) set TCP_NODELAY; so does this one.
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        log.debug("fake server: " + format, *args)

    # --- helpers ---------------------------------------------------------------
    def _send_json(self, status: int, payload: Any, headers: Mapping[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self._commit()
        self.wfile.write(data)
        self.wfile.flush()

    def _error(self, status: int, message: str, kind: str, headers: Mapping[str, str] | None = None) -> None:
        self._send_json(status, {"error": {"message": message, "type": kind, "code": status}}, headers)

    def _commit(self) -> None:
        """Record this request (once), just before its last bytes go out, so a client that
        has its answer always finds the record in ``server.requests``."""
        pending, self._pending = getattr(self, "_pending", None), None
        if pending is not None:
            self.server.owner._record(**pending)

    def _hang_up(self) -> None:
        self._commit()
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError as exc:
            log.debug("fake server: shutdown of a closed socket: %s", exc)

    # --- routes ----------------------------------------------------------------
    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        owner = self.server.owner
        if self.path.rstrip("/") == "/props" and owner.context_window and owner.say_window:
            self._send_json(200, {"default_generation_settings": {"n_ctx": owner.context_window}, "total_slots": 1})
        elif self.path.rstrip("/") in ("/v1/models", "/models"):
            models = self.server.owner.models or ("fake-model",)
            self._send_json(200, {"object": "list", "data": [{"id": m, "object": "model"} for m in models]})
        else:
            self._error(404, f"no route {self.path}", "not_found")

    def _read_json(self) -> Any:
        """The request body as JSON; None (after answering or hanging up) when there is none."""
        length = int(self.headers.get("Content-Length") or 0)
        try:
            raw = self.rfile.read(length)
        except (ConnectionResetError, TimeoutError):
            raw = b""
        if len(raw) < length or not raw:  # the client died mid-request (the crash tests kill it)
            log.debug("fake server: request body cut short (%d of %d bytes)", len(raw), length)
            self.close_connection = True
            return None
        try:
            return json.loads(raw)
        except ValueError:
            self._error(400, "request body is not JSON", "invalid_request_error")
            return None

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        route = self.path.rstrip("/")
        if route not in ("/v1/chat/completions", "/chat/completions", "/v1/embeddings", "/embeddings"):
            self._error(404, f"no route {self.path}", "not_found")
            return
        owner = self.server.owner
        if owner.crashed:  # a dead server: the socket closes, nobody answers
            self.close_connection = True
            return
        start = time.monotonic()
        body = self._read_json()
        if body is None:
            return
        if route.endswith("/embeddings"):
            self._embed(owner, body, start)
            return
        stage = self.headers.get("X-Research-Agent-Stage", "")
        model = str(body.get("model", ""))
        fmt = (body.get("response_format") or {}).get("type")
        stream = bool(body.get("stream"))
        self._pending: dict[str, Any] | None = {
            "stage": stage,
            "model": model,
            "response_format": fmt,
            "stream": stream,
            "start": start,
            "status": 200,
            "fault": None,
            "usage": (0, 0),
            "user_agent": self.headers.get("User-Agent", ""),
        }
        try:
            self._answer(owner, body, stage, model, fmt, stream)
        except (BrokenPipeError, ConnectionResetError) as exc:
            log.debug("fake server: client went away: %s", exc)
            self._note(status=499)
        finally:
            self._commit()

    def _embed(self, owner: FakeOpenAIServer, body: Any, start: float) -> None:
        """Answer an embeddings request after the server's delay (no faults)."""
        try:
            payload, tokens = embeddings_payload(body if isinstance(body, dict) else {})
        except ValueError as exc:
            self._error(400, str(exc), "invalid_request_error")
            return
        if owner._stop.wait(owner.delay):
            self._hang_up()
            return
        self._pending = {
            "stage": self.headers.get("X-Research-Agent-Stage", ""), "model": payload["model"],
            "response_format": None, "stream": False, "start": start, "status": 200, "fault": None,
            "usage": (tokens, 0), "route": "embeddings",
        }  # fmt: skip
        try:
            self._send_json(200, payload)
        except (BrokenPipeError, ConnectionResetError) as exc:
            log.debug("fake server: client went away: %s", exc)
            self._note(status=499)
        finally:
            self._commit()

    def _send_body(self, kind: str) -> None:
        """Answer 200 with a body that is not a readable chat completion."""
        self.send_response(200)
        self.send_header("Content-Type", "text/html" if kind == "html" else "application/json")
        if kind in ("huge", "gzipbomb"):
            self._send_big(kind)
            return
        data = unreadable_body(kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self._commit()
        self.wfile.write(data)
        self.wfile.flush()

    def _send_big(self, kind: str) -> None:
        """50 MB (or 50 KB of gzip that expands to 50 MB), written until the client hangs up."""
        block = b'{"choices": [{"message": {"content": "' + b"x" * (1024 * 1024 - 40)
        if kind == "gzipbomb":
            squeezed = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
            data = squeezed.compress(b"\0" * HUGE_BYTES) + squeezed.flush()
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self._commit()
            self.wfile.write(data)
            return
        self.send_header("Content-Length", str(HUGE_BYTES))
        self.end_headers()
        self._commit()
        sent = 0
        while sent < HUGE_BYTES:
            chunk = block[: HUGE_BYTES - sent]
            self.wfile.write(chunk)
            sent += len(chunk)

    def _note(self, **fields: Any) -> None:
        if self._pending is not None:
            self._pending.update(fields)

    def _answer(
        self,
        owner: FakeOpenAIServer,
        body: dict[str, Any],
        stage: str,
        model: str,
        fmt: str | None,
        stream: bool,
    ) -> None:
        if owner.models is not None and model not in owner.models:
            self._note(status=404)
            self._error(404, f"The model `{model}` does not exist", "invalid_request_error")
            return
        faults = owner.faults
        if faults.reject_json_schema and fmt == "json_schema":
            self._note(status=500, fault="reject_json_schema")
            self._error(500, LLAMA_CPP_JSON_SCHEMA_ERROR, "server_error")
            return
        if faults.grammar_limit is not None:
            breakers = grammar_breakers(_response_format_schema(body), faults.grammar_limit)
            if breakers:
                log.info("fake server: grammar past %d repetitions (%s): crashing", faults.grammar_limit, breakers)
                owner.crashed = True
                self._note(status=0, fault="crash")
                self._hang_up()
                return
        if self._over_window(owner, body, stream):
            return
        kind = owner._plan(stage)
        self._note(fault=kind)
        # A rate limit is refused before any work, as real endpoints do; everything else takes the delay.
        wait = faults.latency if kind == "429" else owner.delay + faults.latency
        if owner._stop.wait(wait):
            self._note(status=503)  # shutting down
            self._hang_up()
            return
        if kind in BODY_KINDS:
            self._send_body(kind)
            return
        if kind in STATUS_KINDS:
            status = int(kind)
            self._note(status=status)
            headers = (
                {"Retry-After": faults.retry_after} if faults.retry_after and status in (429, 503) else {}
            )
            message = "Rate limit reached, slow down" if status == 429 else f"injected HTTP {status}"
            self._error(status, message, "server_error" if status != 429 else "rate_limit_error", headers)
            return

        content = owner.responder(body, stage)
        finish = "stop"
        if kind == "think":
            content = THINK_PREFIX.format(stage=stage) + content
        elif kind == "truncate":
            content = content[: len(content) // 2]
        elif kind == "length":
            content, finish = content[: len(content) // 2], "length"
        elif kind == "badschema":
            content = BAD_SCHEMA_ANSWER
        usage = (owner.prompt_tokens(body), _tokens(content))
        room = (owner.context_window - usage[0]) if owner.context_window else None
        if room is not None and _tokens(content) > room:  # the window ends before the answer does
            content, finish = content[: room * 4], "length"
            usage = (usage[0], _tokens(content))
        self._note(usage=usage)
        if stream:
            self._stream(owner, model, content, finish, usage, kind, body)
            return
        if owner.token_delay and owner._stop.wait(owner.token_delay * usage[1]):  # decoding the whole answer
            self._hang_up()
            return
        self._complete(owner, model, content, finish, usage, kind)

    def _over_window(self, owner: FakeOpenAIServer, body: dict[str, Any], stream: bool) -> bool:
        """Refuse a prompt the window cannot hold, as llama-cpp-python's server does; True when refused."""
        prompt = owner.prompt_tokens(body)
        if not owner.context_window or prompt < owner.context_window:
            return False
        self._note(status=400, fault="context", usage=(prompt, 0))
        if stream:  # the error is raised inside the event publisher: headers, then nothing
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self._commit()
            self._chunk(b"")
            self.wfile.flush()
            return True
        asked = body.get("max_tokens") or 0
        self._error(400, f"This model's maximum context length is {owner.context_window} tokens. However, you "
                    f"requested {prompt + asked} tokens ({prompt} in the messages, {asked} in the completion). "
                    "Please reduce the length of the messages or completion.", "invalid_request_error")  # fmt: skip
        return True

    def _completion(self, model: str, content: str, finish: str, usage: tuple[int, int]) -> dict[str, Any]:
        return {
            "id": f"chatcmpl-fake-{threading.get_ident()}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}
            ],
            "usage": {
                "prompt_tokens": usage[0],
                "completion_tokens": usage[1],
                "total_tokens": usage[0] + usage[1],
            },
        }

    def _complete(
        self,
        owner: FakeOpenAIServer,
        model: str,
        content: str,
        finish: str,
        usage: tuple[int, int],
        kind: str | None,
    ) -> None:
        data = json.dumps(self._completion(model, content, finish, usage)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if kind == "stall":
            self.wfile.flush()
            owner._stop.wait(owner.faults.stall_seconds)
            self._hang_up()
            return
        if kind == "close":
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            self._hang_up()
            return
        self._commit()
        self.wfile.write(data)
        self.wfile.flush()

    def _stream(
        self,
        owner: FakeOpenAIServer,
        model: str,
        content: str,
        finish: str,
        usage: tuple[int, int],
        kind: str | None,
        body: Mapping[str, Any],
    ) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        if kind == "stall":
            owner._stop.wait(owner.faults.stall_seconds)
            self._hang_up()
            return
        base = {"id": "chatcmpl-fake-stream", "object": "chat.completion.chunk", "created": int(time.time())}
        pieces = [content[i : i + 16] for i in range(0, len(content), 16)] or [""]
        events: list[dict[str, Any]] = [
            {
                **base,
                "model": model,
                "choices": [{"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}],
            }
        ]
        events += [
            {
                **base,
                "model": model,
                "choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}],
            }
            for p in pieces
        ]
        events.append(
            {**base, "model": model, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}
        )
        if (body.get("stream_options") or {}).get("include_usage"):
            events.append(
                {
                    **base,
                    "model": model,
                    "choices": [],
                    "usage": {
                        "prompt_tokens": usage[0],
                        "completion_tokens": usage[1],
                        "total_tokens": sum(usage),
                    },
                }
            )
        if kind == "close":
            events = events[: max(1, len(events) // 2)]
        for event in events:
            self._chunk(f"data: {json.dumps(event)}\n\n".encode())
            if owner.token_delay:  # decoding, token by token: each piece is sent as it is made
                self.wfile.flush()
                piece = "".join(c["delta"].get("content") or "" for c in event.get("choices", []))
                if owner._stop.wait(owner.token_delay * _tokens(piece)):
                    self._hang_up()
                    return
        self.wfile.flush()
        if kind == "close":
            self._hang_up()  # no terminating chunk: the client sees an incomplete body
            return
        self._chunk(b"data: [DONE]\n\n")
        self._commit()
        self._chunk(b"")
        self.wfile.flush()

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")


class _Server(QuietServer):
    request_queue_size = 256
    owner: FakeOpenAIServer


class FakeOpenAIServer:
    """An OpenAI-compatible server in a background thread; use as a context manager.

    ``responder(body, stage)`` returns the assistant content of a successful answer
    (default: :func:`default_responder`). ``delay`` passes before each answer (reading the
    prompt); ``token_delay`` more per completion token (writing it: a streamed answer sends
    each piece as it is written). ``models`` limits the known models (others get
    HTTP 404); None accepts any. ``.requests`` lists what the server saw, in order of
    completion.
    """

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        delay: float = 0.0,
        token_delay: float = 0.0,
        faults: Faults | None = None,
        models: Iterable[str] | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        context_window: int | None = None,
        say_window: bool = True,
        token_ratio: float = 1.0,
    ) -> None:
        self.responder: Responder = responder or default_responder
        self.context_window = context_window
        self.say_window = say_window
        self.token_ratio = token_ratio
        self.delay = delay
        self.token_delay = token_delay
        self.models = tuple(models) if models is not None else None
        self._host, self._port = host, port
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._records: list[RequestRecord] = []
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None
        self.crashed = False  # set by Faults.grammar_limit: from then on no request is answered
        self.set_faults(faults or Faults())

    # --- configuration -------------------------------------------------------------
    def set_faults(self, faults: Faults | None = None, **changes: Any) -> None:
        """Replace the fault plan (or change some fields of it); restarts its counters."""
        base = faults if faults is not None else getattr(self, "faults", Faults())
        plan = replace(base, **changes) if changes else base
        with self._lock:
            self.faults = plan
            self._rng = random.Random(plan.seed)
            self._eligible = 0

    @property
    def base_url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("the fake server is not running; use it as a context manager")
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def requests(self) -> list[RequestRecord]:
        with self._lock:
            return list(self._records)

    def clear(self) -> None:
        """Forget the recorded requests."""
        with self._lock:
            self._records.clear()

    # --- lifecycle -------------------------------------------------------------------
    def start(self) -> FakeOpenAIServer:
        self._stop.clear()
        self._httpd = _Server((self._host, self._port), _Handler)
        self._httpd.owner = self
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-openai", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()  # wakes stalled and delayed handlers
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=30)
        self._httpd = self._thread = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # --- used by the handler ----------------------------------------------------------
    def prompt_tokens(self, body: Mapping[str, Any]) -> int:
        """The prompt's tokens as this server's tokenizer counts them."""
        return int(_prompt_tokens(body) * self.token_ratio)

    def _plan(self, stage: str) -> str | None:
        with self._lock:
            plan = self.faults
            if stage in plan.always:
                return plan.always[stage]
            if "*" in plan.always:
                return plan.always["*"]
            if plan.stages is not None and stage not in plan.stages:
                return None
            index = self._eligible
            self._eligible += 1
            if index < len(plan.first):
                return plan.first[index]
            if plan.rate and self._rng.random() < plan.rate:
                return self._rng.choice(plan.mix)
            return None

    def _record(self, *, usage: tuple[int, int], **fields: Any) -> None:
        with self._lock:
            self._records.append(
                RequestRecord(
                    index=len(self._records),
                    end=time.monotonic(),
                    prompt_tokens=usage[0],
                    completion_tokens=usage[1],
                    **fields,
                )
            )


def main(argv: list[str] | None = None) -> None:
    """Run the server in the foreground until Ctrl-C."""
    parser = argparse.ArgumentParser(description="A fault-injecting OpenAI-compatible server on 127.0.0.1.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before every answer")
    parser.add_argument("--fault-rate", type=float, default=0.0, help="fraction of calls that fail")
    parser.add_argument("--mix", default="500,503,429", help="comma-separated fault kinds to draw from")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--retry-after", default=None, help="Retry-After value on 429/503 answers")
    parser.add_argument("--reject-json-schema", action="store_true", help="answer json_schema like llama.cpp")
    parser.add_argument("--grammar-limit", type=int, default=None,
                        help="die like llama.cpp on a schema bound above this (e.g. 2000)")
    args = parser.parse_args(argv)
    faults = Faults(
        rate=args.fault_rate,
        mix=tuple(k.strip() for k in args.mix.split(",") if k.strip()),
        seed=args.seed,
        retry_after=args.retry_after,
        reject_json_schema=args.reject_json_schema,
        grammar_limit=args.grammar_limit,
    )
    server = FakeOpenAIServer(delay=args.delay, faults=faults, host=args.host, port=args.port)
    with server:
        print(f"fake OpenAI-compatible server at {server.base_url}", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            print("stopping", flush=True)


if __name__ == "__main__":
    main()
