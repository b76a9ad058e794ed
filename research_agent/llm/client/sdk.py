"""Chat requests through the openai SDK: ``openai.AsyncOpenAI`` over the client of :mod:`.transport`.

:class:`SdkSender` sends each chat-completions request with the SDK (its request building,
authentication, headers and error classes), through the ``httpx.AsyncClient`` it is handed, and
gives the answer as that client's response, status checked, body not yet read: the model client
reads it itself, bounded (:mod:`.answers`, :mod:`.streaming`). The SDK's own retries are off
(``max_retries=0``): the model client's retry loop (:mod:`.retry`) is the one policy, honouring
``Retry-After`` and, in a batch, the pause every run shares after a 429
(:mod:`research_agent.batch.limits`); two loops would multiply each other's attempts.

The SDK's failures become the few the model client acts on: :class:`StatusError` for an answer
with an error status (the SDK's message and its ``error`` object as ``body``),
:class:`ConnectionFailed` for a request that got no answer (the httpx error as its cause),
:class:`TimeoutError`, and :class:`~.transport.RedirectRefused` as it was raised.

``import openai`` takes 0.3-1 s (most of it the SDK's types, which a chat client never reads):
:func:`load_sdk_ahead` starts it in a thread when a model client is built (with the chat
resource the SDK would otherwise load at the first request), so that it overlaps what a run does
before its first call; the first request waits for it only if it is not done (:meth:`SdkSender.ready`,
off the event loop and before the call's time limit starts). What a run can do later waits for the
import (:func:`sdk_loaded`): once it is done, the first request is on its way, and the work no longer
delays it (the import and the work are CPU under the same interpreter lock).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import gc
import logging
import platform
import threading
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from types import ModuleType
from typing import Any

import httpx

from ...errors import ConnectionFailed, StatusError
from .transport import RedirectRefused

log = logging.getLogger(__name__)

__all__ = ["SdkSender", "StatusError", "ConnectionFailed", "load_sdk_ahead", "openai_module", "sdk_loaded",
           "wait_for_sdk"]


class _Loading:
    """``import openai`` in a thread, started once; :meth:`module` waits for it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.thread: threading.Thread | None = None

    def start(self) -> None:
        with self.lock:
            if self.thread is None:
                self.thread = threading.Thread(target=self._load, name="load-openai", daemon=True)
                self.thread.start()
                atexit.register(self.thread.join)  # a daemon thread still importing at shutdown crashes the process

    @staticmethod
    def _load() -> None:
        enabled = gc.isenabled()
        gc.disable()  # the import makes thousands of lasting objects: collections meanwhile free nothing
        try:
            import openai.resources.chat

            openai.resources.chat.AsyncChat  # noqa: B018 - loaded on first use by the SDK: the first request's 0.1 s
            # What the SDK's first request asks of the platform (its headers), answered now and cached by the
            # platform module: it runs ``uname -p`` and reads the os-release file, which the first request waited for.
            platform.platform()
            with contextlib.suppress(OSError):  # no os-release file: the SDK does without it too
                platform.freedesktop_os_release()
        except Exception:  # noqa: BLE001 - the import is made again where it is needed, and fails there
            log.debug("importing openai ahead failed; the first request imports it again", exc_info=True)
        finally:
            if enabled:
                gc.enable()

    def module(self) -> ModuleType:
        self.wait()
        import openai

        return openai

    def wait(self) -> None:
        """Until the thread (if started) is done."""
        with self.lock:
            thread = self.thread
        if thread is not None:
            thread.join()

    def done(self) -> bool:
        with self.lock:
            return self.thread is not None and not self.thread.is_alive()

    def pending(self) -> bool:
        """Started and not done."""
        with self.lock:
            return self.thread is not None and self.thread.is_alive()


_loading = _Loading()


def load_sdk_ahead() -> None:
    """Start importing the openai package in a thread (once per process)."""
    _loading.start()


async def sdk_loaded() -> None:
    """Until the openai import started ahead is done, waiting off the event loop; at once when none was
    started (a model that does not use the SDK) or it is done already."""
    if _loading.pending():
        await asyncio.to_thread(_loading.wait)


def wait_for_sdk() -> None:
    """:func:`sdk_loaded` for a thread: blocks until the openai import started ahead (if any) is done."""
    _loading.wait()


def openai_module() -> ModuleType:
    """The openai package, once imported (waiting for the thread that imports it, if started)."""
    return _loading.module()


class SdkSender:
    """Sends chat-completions requests to ``base_url`` with ``api_key`` through the SDK over ``http``
    (closed by :meth:`aclose`, as the SDK closes a client it is given). The SDK client is built at
    the first request; the import starts now, in a thread."""

    def __init__(self, base_url: str, api_key: str, http: httpx.AsyncClient, *, timeout: float) -> None:
        self.base_url = base_url
        self.http = http
        self._key = api_key
        self._timeout = timeout
        self._client: Any = None
        load_sdk_ahead()

    async def ready(self) -> None:
        """Build the SDK client, waiting for its import off the event loop (a first call's time limit
        starts after this: the import is no part of what the endpoint takes)."""
        if self._client is None:
            if not _loading.done():
                await asyncio.to_thread(_loading.wait)
            self._sdk_client()

    def _sdk_client(self) -> Any:
        if self._client is None:
            openai = openai_module()
            self._client = openai.AsyncOpenAI(api_key=self._key, base_url=self.base_url, max_retries=0,
                                              timeout=self._timeout, http_client=self.http)  # fmt: skip
        return self._client

    @asynccontextmanager
    async def send(self, kwargs: dict[str, Any]) -> AsyncIterator[httpx.Response]:
        """One request whose answer came with a 2xx status, its body not read yet.

        ``kwargs`` is what :func:`.retry.request_kwargs` built: the body's fields, ``extra_headers``
        and ``timeout`` (seconds for each phase of the request), as the SDK's ``create`` takes them.
        """
        create = self._sdk_client().chat.completions.with_streaming_response.create
        async with AsyncExitStack() as stack:
            try:
                answer = await stack.enter_async_context(create(**kwargs))
            except Exception as exc:  # noqa: BLE001 - every failure is named for the retry loop
                failure = _failure(exc)
                raise failure from failure.__cause__
            yield answer.http_response

    async def aclose(self) -> None:
        """Close the HTTP client."""
        await self.http.aclose()


def _failure(exc: Exception) -> Exception:
    """What the retry loop acts on, for a failure of the SDK's ``create``."""
    openai = openai_module()
    if isinstance(exc, openai.APIStatusError):
        return StatusError(exc.message, status_code=exc.status_code, body=exc.body, headers=exc.response.headers)
    if isinstance(exc, openai.APITimeoutError | httpx.TimeoutException):
        return TimeoutError(str(exc) or type(exc).__name__)
    cause = exc.__cause__ if isinstance(exc, openai.APIConnectionError) else exc
    if isinstance(cause, RedirectRefused):
        return cause
    if isinstance(cause, httpx.TimeoutException):
        return TimeoutError(str(cause) or type(cause).__name__)
    if cause is None or isinstance(exc, openai.APIError | httpx.TransportError | OSError):
        failed = ConnectionFailed(f"{type(cause or exc).__name__}: {cause or exc}")
        failed.__cause__ = cause or exc
        return failed
    return exc
