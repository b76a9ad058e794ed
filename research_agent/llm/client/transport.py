"""The HTTP client the openai SDK speaks through: the project's limits, carried by the client itself.

The model client hands ``openai.AsyncOpenAI`` an ``httpx.AsyncClient`` built here
(:func:`model_http_client`; the batch's shared client is one too), so whatever reads through it,
the SDK or the model client, reads within the same limits:

* time: each request carries its own limit (the model client sets it per call); 5 s to connect;
* connections: many kept open (:data:`CONNECTION_LIMITS`, the SDK's own defaults);
* bounded bodies (:class:`GuardedTransport`): every body is decompressed here, never by httpx,
  under a cap on the decoded bytes, so a gzip bomb is refused like a 50 MB body. An answer
  past ``max_bytes`` stops with ``too_large`` (:func:`.answers.body_chunks` names it); an error
  answer, which the SDK reads whole by itself, is cut at :data:`MAX_ERROR_BYTES` or before the
  chunk that would pass it (its message is in the first lines);
* redirects within the endpoint's own scheme, host and port only: a redirect anywhere else is
  refused before anything is sent there (:class:`RedirectRefused`), so a prompt and its corpus
  passages never follow a redirect to another address, and the error quotes nothing of what
  that address would have answered.

Making the TLS context (loading the CA bundle) takes 15-30 ms; :func:`load_tls_ahead` starts it
in a thread and the next client built takes it.
"""

from __future__ import annotations

import atexit
import re
import ssl
import threading
from collections.abc import AsyncIterator
from typing import cast

import httpx

from ...errors import FetchRefused, RedirectRefused
from ...fetch.body import BoundedDecoder

__all__ = ["GuardedTransport", "RedirectRefused", "model_http_client", "load_tls_ahead", "origin",
           "CONNECTION_LIMITS", "MAX_ERROR_BYTES"]  # fmt: skip

CONNECTION_LIMITS = httpx.Limits(max_connections=1000, max_keepalive_connections=100)  # the openai package's
MAX_ERROR_BYTES = 256 * 1024  # an error answer is read this far: its message is in the first lines
CONNECT_TIMEOUT = 5.0
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_SHOWN_HOST = re.compile(r"[^A-Za-z0-9./\-:\[\]]")


def origin(url: httpx.URL) -> str:
    """``scheme://host:port`` of ``url`` (the port made explicit), in characters safe to print."""
    host = url.host if ":" not in url.host else f"[{url.host}]"
    port = url.port or {"http": 80, "https": 443}.get(url.scheme, 0)
    return _SHOWN_HOST.sub("", f"{url.scheme}://{host}:{port}")[:120]


def _redirect_target(request: httpx.Request, response: httpx.Response) -> str | None:
    """The origin a redirect points to when it is another one than the request's; None for a
    redirect within the same origin (httpx follows it)."""
    try:
        target = request.url.join(response.headers["location"])
    except (httpx.InvalidURL, ValueError, UnicodeError):
        return "an unreadable address"
    there = origin(target)
    return None if there == origin(request.url) else there


class _BoundedBody(httpx.AsyncByteStream):
    """``raw`` decompressed (``encoding``) under ``limit`` decoded bytes: past it, ``too_large``
    (:class:`~research_agent.fetch.outcome.FetchRefused`) or, with ``cut``, the end of the body."""

    def __init__(self, raw: httpx.AsyncByteStream, encoding: str, limit: int, *, cut: bool) -> None:
        self._raw = raw
        self._encoding = encoding
        self._limit = limit
        self._cut = cut

    async def __aiter__(self) -> AsyncIterator[bytes]:
        total = 0
        try:
            decoder = BoundedDecoder(self._encoding)
            async for raw in self._raw:
                out = decoder.feed(raw, self._limit - total)
                total += len(out)
                if out:
                    yield out
            out = decoder.flush(self._limit - total)
        except FetchRefused:
            if not self._cut:
                raise
            return  # an error answer: what came before the cap (or the encoding that failed) is its body
        if out:
            yield out

    async def aclose(self) -> None:
        await self._raw.aclose()


class GuardedTransport(httpx.AsyncBaseTransport):
    """``inner`` (the network, or a test's MockTransport), with bounded bodies and no redirect to
    another origin (see the module docstring). ``max_bytes``: the cap on an answer's decoded body."""

    def __init__(self, inner: httpx.AsyncBaseTransport, *, max_bytes: int) -> None:
        self.inner = inner
        self.max_bytes = max_bytes

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        if response.status_code in _REDIRECTS and "location" in response.headers:
            target = _redirect_target(request, response)
            if target is not None:
                await response.aclose()
                raise RedirectRefused(target)
        encoding = response.headers.get("content-encoding", "")
        dropped = (b"content-encoding", b"content-length") if encoding.strip() else ()
        headers = [(name, value) for name, value in response.headers.raw if name.lower() not in dropped]
        ok = 200 <= response.status_code < 300
        stream = cast(httpx.AsyncByteStream, response.stream)  # an async transport's answer streams so
        body = _BoundedBody(stream, encoding, self.max_bytes if ok else MAX_ERROR_BYTES, cut=not ok)
        return httpx.Response(response.status_code, headers=headers, stream=body, extensions=response.extensions)

    async def aclose(self) -> None:
        await self.inner.aclose()


class _Ahead:
    """httpx's default TLS context, made in a thread (loading the CA bundle takes 15-30 ms, and
    OpenSSL lets other threads run meanwhile); taken by the next client built."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.thread: threading.Thread | None = None
        self.context: ssl.SSLContext | None = None

    def start(self) -> None:
        with self.lock:
            if self.thread is None:
                self.thread = threading.Thread(target=self._make, name="load-tls", daemon=True)
                self.thread.start()
                atexit.register(self.thread.join)  # a daemon thread still in OpenSSL at shutdown crashes the process

    def _make(self) -> None:
        try:
            self.context = httpx.create_ssl_context()
        except Exception:  # noqa: BLE001 - the client then makes its own, and says what is wrong
            self.context = None

    def take(self) -> ssl.SSLContext | bool:
        """The context made ahead (once; joined if still being made), else True: httpx makes its own."""
        with self.lock:
            thread, self.thread = self.thread, None
        if thread is None:
            return True
        thread.join()
        context, self.context = self.context, None
        return context if context is not None else True


_ahead = _Ahead()


def load_tls_ahead() -> None:
    """Start making the next client's TLS context in a thread, while the caller goes on importing
    (the command line calls it before it loads the pipeline; nothing else changes)."""
    _ahead.start()


def model_http_client(
    timeout: float, *, max_bytes: int, transport: httpx.AsyncBaseTransport | None = None
) -> httpx.AsyncClient:
    """The HTTP client for a model client: the limits of the module docstring, ``timeout`` for a
    request that sets none (every model call sets its own). ``transport``: what sends the requests
    (default: the network; the batch's counts them, a test's is a MockTransport)."""
    inner = transport or httpx.AsyncHTTPTransport(verify=_ahead.take(), limits=CONNECTION_LIMITS)
    return httpx.AsyncClient(transport=GuardedTransport(inner, max_bytes=max_bytes), follow_redirects=True,
                             timeout=httpx.Timeout(timeout, connect=CONNECT_TIMEOUT), limits=CONNECTION_LIMITS)  # fmt: skip
