"""The workbench as one ASGI app: its routes, its templates, the headers of every answer, and serving it.

:func:`build_app` gives the app for a :class:`~research_agent.service.ServiceOptions` and a bind:
Starlette's router behind :class:`SecurityHeaders` (the Content Security Policy and its
companions on every answer) behind the shared :class:`~research_agent.service.http.HttpGuard`
(bearer token off loopback, Host and Origin on every bind). :func:`serve` serves it with uvicorn
on a socket bound before the server says where it listens.

Pages allow scripts from this server only (``script-src 'self'``: the one small file that
follows a run's progress), never inline, and load nothing from anywhere else. A report's page
is the export's self-contained HTML, which carries its own policy (inline style, no script):
its answer says the same in its header.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

from ..config import Settings
from ..errors import ConfigError
from ..export import find_browser
from ..service import Service, ServiceOptions
from ..service.http import HttpBind, HttpGuard, listen, serve_asgi
from ..text.controls import without_controls
from ..version import __version__
from .forms import Csrf
from .jobs import JobBoard
from .views import ReportRows

__all__ = ["PAGE_POLICY", "REPORT_POLICY", "WebBind", "Workbench", "SecurityHeaders", "build_app", "serve"]

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
    its jobs, the CSRF token, the templates, the report rows, Chromium for PDF (None: none), and
    the clock the memory page reads the lessons' age by."""

    def __init__(
        self, options: ServiceOptions, *, browser: Path | None = None, clock: Callable[[], datetime] | None = None
    ) -> None:
        self.service = Service(options)
        self.now = clock or (lambda: datetime.now(UTC))
        self.board = JobBoard(self.service)
        self.csrf = Csrf()
        self.browser = browser
        settings = self.service.settings()
        self.reports_dir = settings.reports_dir
        self.rows = ReportRows(settings.reports_dir)
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
        await self.board.close()
        self.service.close()


def shown(value: Any) -> Any:
    """What a page shows of a value: text without terminal controls, escape sequences or bidi
    overrides (a question or a record may hold ESC or U+202E; escaping alone leaves them), then escaped."""
    if isinstance(value, Markup):
        return Markup(without_controls(str(value)))
    return without_controls(value) if isinstance(value, str) else value


def _browser() -> Path | None:
    try:
        return find_browser()
    except ConfigError:
        return None


def build_app(options: ServiceOptions, bind: HttpBind, *, bench: Workbench | None = None) -> HttpGuard:
    """The workbench for ``options`` on ``bind``, guarded. ``bench``: one made already (tests)."""
    from .eval_pages import EVAL_ROUTES
    from .memory_pages import MEMORY_ROUTES
    from .pages import PAGE_ROUTES

    workbench = bench or Workbench(options, browser=_browser())

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            with anyio.CancelScope(shield=True):
                await workbench.close()

    async def not_here(request: Request, exc: Exception) -> HTMLResponse:
        status = getattr(exc, "status_code", 404)
        message = "no such page" if status == 404 else f"{request.method} is not allowed here"
        return workbench.page("error.html", status=status, message=message)

    static = StaticFiles(packages=[("research_agent.web", "static")])
    app = Starlette(
        routes=[*PAGE_ROUTES, *MEMORY_ROUTES, *EVAL_ROUTES, Mount("/static", static, name="static")],
        lifespan=lifespan,
        exception_handlers={404: not_here, 405: not_here},
    )
    app.state.bench = workbench
    return HttpGuard(SecurityHeaders(app), bind)


def bench_of(request: Request) -> Workbench:
    """The request's workbench."""
    return request.app.state.bench  # type: ignore[no-any-return]


def serve(options: ServiceOptions, bind: WebBind, *, on_listening: Callable[[WebBind], None] = lambda _: None) -> None:
    """Serve the workbench until the process is stopped. Port 0 takes a free port; ``on_listening``
    gets the bind as served (its real port) once the socket is listening."""
    sock = listen(bind)
    if bind.port == 0:
        bind = replace(bind, port=sock.getsockname()[1])
    on_listening(bind)
    anyio.run(serve_asgi, build_app(options, bind), sock)
