"""What every page of the workbench shares: the :class:`Workbench` (service, jobs, CSRF token,
templates), the headers of every answer, and :func:`answered`, which turns a page's refusals and
errors into a page of one line. The routes live in the page modules; :mod:`.server` puts them
together (this module imports none of them, so no page module and this one import each other).

Pages allow scripts from this server only (``script-src 'self'``: the small files that follow a
run's or a batch's progress), never inline, and load nothing from anywhere else. A report's page
is the export's self-contained HTML, which carries its own policy (inline style, no script):
its answer says the same in its header.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import anyio
from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup
from sse_starlette.sse import EventSourceResponse
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from ..config import Settings
from ..errors import ResearchError, error_message
from ..service import Service, ServiceOptions
from ..service.http import HttpBind
from ..text.controls import one_line, without_controls
from ..version import __version__
from .batches.board import BatchBoard
from .batches.listing import BatchRows
from .forms import Csrf
from .jobs import JobBoard
from .reports.views import ReportRows

__all__ = [
    "PAGE_POLICY", "REPORT_POLICY", "WebBind", "Workbench", "SecurityHeaders", "Endpoint", "answered", "bench_of",
    "event_stream", "until", "form_status",
]  # fmt: skip

T = TypeVar("T")

Endpoint = Callable[[Request], Awaitable[Response]]

PAGE_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
REPORT_POLICY = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'none'; frame-ancestors 'none'; "
    "base-uri 'none'"
)
_HEADERS = (
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
)


@dataclass(frozen=True)
class WebBind(HttpBind):
    """Where ``research-agent serve`` listens; see :class:`research_agent.service.http.HttpBind`."""

    command: str = field(default="serve", repr=False)
    token_env: str = field(default="RESEARCH_AGENT_WEB_TOKEN", repr=False)


class SecurityHeaders:
    """ASGI middleware: every answer gets :data:`PAGE_POLICY` (unless it set its own policy),
    ``nosniff``, no framing, and ``no-store`` caching for anything but static files. The referrer
    goes to this server only (``same-origin``): with none at all, a browser sends ``Origin: null``
    on a form's POST, which the guard rightly refuses."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        static = scope.get("path", "").startswith("/static/")

        async def sending(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", ()))
                names = {name.lower() for name, _ in headers}
                if b"content-security-policy" not in names:
                    headers.append((b"content-security-policy", PAGE_POLICY.encode()))
                if b"cache-control" not in names:
                    headers.append((b"cache-control", b"max-age=3600" if static else b"no-store"))
                headers.extend(pair for pair in _HEADERS if pair[0] not in names)
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, sending)


class Workbench:
    """What every page of one workbench shares: the service (settings, run slots, CPU workers),
    its jobs and batches, the CSRF token, the templates, the report rows, Chromium for PDF (None:
    none), and the clock the memory page reads the lessons' age by."""

    def __init__(
        self, options: ServiceOptions, *, browser: Path | None = None, clock: Callable[[], datetime] | None = None
    ) -> None:
        self.service = Service(options)
        self.now = clock or (lambda: datetime.now(UTC))
        self.board = JobBoard(self.service)
        self.batches = BatchBoard(self.service)
        self.csrf = Csrf()
        self.browser = browser
        settings = self.service.settings()
        self.reports_dir = settings.reports_dir
        self.rows = ReportRows(settings.reports_dir)
        self.batch_rows = BatchRows(settings.meta_dir)
        self.templates = Environment(
            loader=PackageLoader("research_agent.web", "templates"),
            autoescape=select_autoescape(default=True, default_for_string=True),
            trim_blocks=True,
            lstrip_blocks=True,
            finalize=shown,
        )

    def settings(self, **call: Any) -> Settings:
        return self.service.settings(**call)

    def html(self, name: str, **context: Any) -> str:
        """The template ``name`` filled with ``context`` (every value escaped)."""
        return self.templates.get_template(name).render(csrf=self.csrf.token, version=__version__, **context)

    def page(self, name: str, *, status: int = 200, headers: Mapping[str, str] | None = None, **context: Any) -> HTMLResponse:
        return HTMLResponse(self.html(name, **context), status_code=status, headers=headers)

    async def close(self) -> None:
        await self.batches.close()
        await self.board.close()
        self.service.close()


def shown(value: Any) -> Any:
    """What a page shows of a value: text without terminal controls, escape sequences or bidi
    overrides (a question or a record may hold ESC or U+202E; escaping alone leaves them), then escaped."""
    if isinstance(value, Markup):
        return Markup(without_controls(str(value)))
    return without_controls(value) if isinstance(value, str) else value


def bench_of(request: Request) -> Workbench:
    """The request's workbench."""
    return request.app.state.bench


def answered(endpoint: Endpoint) -> Endpoint:
    """``endpoint`` with its refusals and errors as a page of one line, with the error's ``http_status``."""

    @functools.wraps(endpoint)
    async def handler(request: Request) -> Response:
        try:
            return await endpoint(request)
        except ResearchError as exc:  # a refused request, a reference to no run, bad input, busy, a failure
            return bench_of(request).page("error.html", status=exc.http_status, message=one_line(error_message(exc)))

    return handler


def form_status(exc: ResearchError) -> int:
    """The status of a form shown again beside ``exc``: 503 when the server is busy (the same form
    may be sent again later), else 400 (what was typed is what to change)."""
    return exc.http_status if exc.http_status == 503 else 400


def event_stream(events: AsyncIterator[T], encode: Callable[[T], dict[str, str]]) -> EventSourceResponse:
    """``events`` as server-sent events (``encode`` gives each one's ``event`` and ``data``), with
    a ping every 15 s, ended cleanly when the server shuts down."""
    stopping = anyio.Event()  # set when the server shuts down

    async def stream() -> AsyncIterator[dict[str, str]]:
        async for event in until(stopping, events):
            yield encode(event)

    return EventSourceResponse(stream(), ping=15, shutdown_event=stopping, shutdown_grace_period=1.0)


async def until(stop: anyio.Event, events: AsyncIterator[T]) -> AsyncIterator[T]:
    """``events`` until they end or ``stop`` is set, whichever comes first."""
    stopped = asyncio.ensure_future(stop.wait())
    try:
        while True:
            following = asyncio.ensure_future(anext(events))
            await asyncio.wait({following, stopped}, return_when=asyncio.FIRST_COMPLETED)
            if not following.done():
                following.cancel()
                return
            try:
                yield following.result()
            except StopAsyncIteration:
                return
    finally:
        stopped.cancel()
