"""The MCP server: every tool and resource on one ``MCPServer``, served over stdio or HTTP.

:func:`build_server` is the whole server for given options (tests can connect a client
to it in-process); :func:`serve` runs it: over stdio, where stdout carries only the
protocol (the SDK points file descriptor 1 at stderr while it serves, so nothing else
can reach the wire), or over streamable HTTP as :mod:`.http` guards it (Host and Origin
checked on every bind, a bearer token required off loopback).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import Resource
from pydantic import ValidationError

from ..errors import InputError
from ..service import Service, ServiceOptions
from ..version import __version__
from .answers import error_result
from .http import HttpBind, listen, serve_http
from .resources import add_resources, listed_resources
from .tools import TOOLS

__all__ = ["build_server", "serve", "INSTRUCTIONS"]

INSTRUCTIONS = (
    "research-agent researches a question over the web or local documents and writes a cited "
    "markdown report. Call `research` for a report (it takes minutes; progress is reported per "
    "stage), `review_report` to lint a report, and the memory tools to see past critiques and the "
    "lessons a run would get. Reports are resources at report://<id> (markdown) and "
    "report://<id>?format=html (one HTML page), critiques at critique://<id>."
)


class _Server(MCPServer[Service]):
    """The SDK's server, except that arguments that do not fit a tool's input schema get one
    line naming each field and what was wrong (the SDK's own text spans several lines), and
    that the resources listed are the reports and critiques that exist (newest first, capped).
    ``service`` is the one its tools share."""

    service: Service

    async def list_resources(self) -> list[Resource]:
        settings = self.service.settings()
        return [*await super().list_resources(), *await asyncio.to_thread(listed_resources, settings.reports_dir)]

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Service, Any] | None = None
    ) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if not isinstance(exc.__cause__, ValidationError):
                raise
            return error_result(InputError(f"invalid arguments for {name}: {_problems(exc.__cause__)}"))


def _problems(error: ValidationError) -> str:
    """``field: what is wrong`` for each problem (never the value given: it is the caller's data)."""
    parts = []
    for problem in error.errors(include_url=False, include_input=False)[:5]:
        field = ".".join(str(part) for part in problem["loc"]) or "arguments"
        parts.append(f"{field}: {problem['msg']}")
    return "; ".join(parts)


def build_server(options: ServiceOptions) -> _Server:
    """The server for ``options``: one Service shared by every session and call."""
    service = Service(options)

    @asynccontextmanager
    async def lifespan(_: MCPServer[Service]) -> AsyncIterator[Service]:
        yield service

    server = _Server(
        "research-agent",
        title="research-agent",
        instructions=INSTRUCTIONS,
        version=__version__,
        lifespan=lifespan,
        log_level="WARNING",
    )
    server.service = service
    for spec in TOOLS:
        server.add_tool(spec.fn, title=spec.title, description=spec.description(), annotations=spec.annotations())
    add_resources(server)
    return server


def serve(
    options: ServiceOptions, *, http: HttpBind | None = None, on_listening: Callable[[], None] = lambda: None
) -> None:
    """Serve until the client goes away (stdio) or the process is stopped (HTTP).

    ``on_listening`` runs once the server can be reached (over HTTP: its socket is bound).
    """
    server = build_server(options)
    try:
        if http is None:
            on_listening()
            anyio.run(server.run_stdio_async)
            return
        sock = listen(http)
        on_listening()
        anyio.run(serve_http, server, http, sock)
    finally:
        server.service.close()
