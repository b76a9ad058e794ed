"""One chat-completions request on the wire, through httpx: what the ``openai`` package did for us.

The model client sends ``POST {base_url}/chat/completions`` with the key as a bearer token
and reads the body itself (:mod:`.answers`: bounded, decompressed under a cap), so all it
needs of an SDK is the request and the meaning of a failure. :class:`ChatTransport` gives
both, through the httpx client it is handed (the batch driver's, a test's MockTransport)
or one of its own with the ``openai`` package's connection defaults; the ``openai``
package itself (a second or more of imports, most of it types a chat client never uses)
is not needed at all.

Failures are named as the SDK named them: :class:`StatusError` for an answer with an error
status (its JSON ``error`` object as ``body``, as the SDK gave it), :class:`ConnectionFailed`
for a request that got no answer (the httpx error as its cause, so that what refused the
connection can be read), :class:`TimeoutError` when the request's time limit passed first.
"""

from __future__ import annotations

import json
import ssl
import threading
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import httpx

from ...version import __version__
from .answers import ConnectionLost, Unreadable, read_body

__all__ = ["ChatTransport", "StatusError", "ConnectionFailed", "http_client", "load_tls_ahead", "MAX_ERROR_BYTES",
           "CONNECTION_LIMITS"]  # fmt: skip

CONNECTION_LIMITS = httpx.Limits(max_connections=1000, max_keepalive_connections=100)  # the openai package's
MAX_ERROR_BYTES = 256 * 1024  # an error answer is read this far: its message is in the first lines
_NOT_SENT = ("extra_headers", "timeout")  # the request's options, not its JSON body


class StatusError(Exception):
    """The endpoint answered with an error status (4xx, 5xx, or any other that is not 2xx)."""

    def __init__(self, message: str, *, status_code: int, body: object, headers: Mapping[str, str]) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code
        self.body = body  # the JSON body's ``error`` object (else the body, parsed or as text; None if unread)
        self.headers = dict(headers)


class ConnectionFailed(Exception):
    """No answer came: the connection could not be made or broke before the headers (the cause says why)."""


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


def http_client(timeout: float) -> httpx.AsyncClient:
    """An HTTP client with the connection defaults the ``openai`` package used: many connections
    kept open, redirects followed; ``timeout`` for each request (set per request in any case)."""
    return httpx.AsyncClient(timeout=httpx.Timeout(timeout, connect=5.0), limits=CONNECTION_LIMITS,
                             follow_redirects=True, verify=_ahead.take())  # fmt: skip


def _status_error(response: httpx.Response, body: bytes | None) -> StatusError:
    """The error for ``response``, read as the ``openai`` package read it."""
    message = f"Error code: {response.status_code}"
    data: object = None
    if body is not None:
        text = body.decode("utf-8", "replace").strip()
        data = text
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            pass
        else:
            data = data.get("error", data) if isinstance(data, dict) else data
            said = data.get("message") if isinstance(data, dict) else None
            if isinstance(said, str) and said:
                message += f" - {said}"
    return StatusError(message, status_code=response.status_code, body=data, headers=response.headers)


class ChatTransport:
    """Sends chat-completions requests to ``base_url`` with ``api_key``, through ``http`` (kept, and
    closed by :meth:`aclose` as the SDK closed it) or a client of its own."""

    def __init__(self, base_url: str, api_key: str, http: httpx.AsyncClient | None, *, timeout: float) -> None:
        self.url = f"{base_url.rstrip('/')}/chat/completions"
        self.http = http if http is not None else http_client(timeout)
        self._headers = {
            "Authorization": f"Bearer {api_key}",
            "Accept": "application/json",
            "User-Agent": f"research-agent/{__version__}",
        }

    @asynccontextmanager
    async def send(self, kwargs: dict[str, Any]) -> AsyncIterator[httpx.Response]:
        """One request whose answer came with a 2xx status, its body not read yet.

        ``kwargs`` is what :func:`.retry.request_kwargs` built: the JSON body, plus
        ``extra_headers`` and ``timeout`` (seconds for each phase of the request).
        """
        body = {key: value for key, value in kwargs.items() if key not in _NOT_SENT}
        headers = {**self._headers, **kwargs.get("extra_headers", {})}
        timeout = kwargs.get("timeout")
        request = self.http.build_request("POST", self.url, json=body, headers=headers,
                                          timeout=httpx.Timeout(timeout) if timeout else httpx.USE_CLIENT_DEFAULT)  # fmt: skip
        try:
            response = await self.http.send(request, stream=True)
        except httpx.TimeoutException as exc:
            raise TimeoutError(f"{type(exc).__name__}: {exc}") from exc
        except (httpx.RequestError, OSError) as exc:  # OSError: TLS and socket errors httpx let through
            raise ConnectionFailed(f"{type(exc).__name__}: {exc}") from exc
        try:
            if not response.is_success:
                raise _status_error(response, await self._error_body(response))
            yield response
        finally:
            await response.aclose()

    async def _error_body(self, response: httpx.Response) -> bytes | None:
        """The error answer's body, at most :data:`MAX_ERROR_BYTES`; None when it cannot be read
        (too large, broken off): its status still says what went wrong."""
        try:
            return await read_body(response, MAX_ERROR_BYTES)
        except (Unreadable, ConnectionLost, TimeoutError):
            return None

    async def aclose(self) -> None:
        """Close the HTTP client."""
        await self.http.aclose()
