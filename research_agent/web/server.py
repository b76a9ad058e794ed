"""The workbench as one ASGI app, and serving it.

:func:`build_app` gives the app for a :class:`~research_agent.service.ServiceOptions` and a bind:
Starlette's router over every page module's routes, behind :class:`~.app.SecurityHeaders` (the
Content Security Policy and its companions on every answer) behind the shared
:class:`~research_agent.service.http.HttpGuard` (bearer token off loopback, Host and Origin on
every bind). :func:`serve` serves it with uvicorn on a socket bound before the server says where
it listens. This is the one module that imports the page modules; none of them imports it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import BaseRoute, Mount
from starlette.staticfiles import StaticFiles

from ..errors import ConfigError
from ..export import find_browser
from ..service import ServiceOptions
from ..service.http import HttpBind, HttpGuard, listen, serve_asgi
from .app import SecurityHeaders, WebBind, Workbench
from .batches.pages import BATCH_ROUTES
from .eval_pages import EVAL_ROUTES
from .journal_pages import JOURNAL_ROUTES
from .memory_pages import MEMORY_ROUTES
from .pages import PAGE_ROUTES
from .plans.pages import PLAN_ROUTES
from .reports.pages import REPORT_ROUTES
from .settings_page import SETTINGS_ROUTES

__all__ = ["ROUTES", "build_app", "serve"]

# Every page, by the job of its module: ask and watch, read, batches, memory, settings.
ROUTES: tuple[BaseRoute, ...] = (*JOURNAL_ROUTES, *PAGE_ROUTES, *PLAN_ROUTES, *REPORT_ROUTES, *BATCH_ROUTES, *MEMORY_ROUTES,
                                 *EVAL_ROUTES, *SETTINGS_ROUTES)  # fmt: skip


def _browser() -> Path | None:
    try:
        return find_browser()
    except ConfigError:
        return None


def build_app(options: ServiceOptions, bind: HttpBind, *, bench: Workbench | None = None) -> HttpGuard:
    """The workbench for ``options`` on ``bind``, guarded. ``bench``: one made already (tests)."""
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
        routes=[*ROUTES, Mount("/static", static, name="static")],
        lifespan=lifespan,
        exception_handlers={404: not_here, 405: not_here},
    )
    app.state.bench = workbench
    return HttpGuard(SecurityHeaders(app), bind)


def serve(options: ServiceOptions, bind: WebBind, *, on_listening: Callable[[WebBind], None] = lambda _: None) -> None:
    """Serve the workbench until the process is stopped. Port 0 takes a free port; ``on_listening``
    gets the bind as served (its real port) once the socket is listening."""
    sock = listen(bind)
    if bind.port == 0:
        bind = replace(bind, port=sock.getsockname()[1])
    on_listening(bind)
    anyio.run(serve_asgi, build_app(options, bind), sock)
