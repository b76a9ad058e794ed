"""Serving MCP over streamable HTTP behind the shared guard (:mod:`research_agent.service.http`):
Host and Origin checked on every bind, a bearer token off loopback.

:class:`HttpBind` is the shared bind worded for ``research-agent mcp --http`` (its token comes
from ``RESEARCH_AGENT_MCP_TOKEN`` or ``--token-file``) and served at ``/mcp``. The SDK's own
Host/Origin check is off: the guard in front of its app makes that check for every path.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass, field
from typing import Any

from mcp.server.transport_security import TransportSecuritySettings

from ..service import http as guard
from ..service.http import LOOPBACK, HttpGuard, allowed_hosts, is_loopback, listen

__all__ = ["LOOPBACK", "HttpBind", "is_loopback", "allowed_hosts", "http_app", "listen", "serve_http"]


@dataclass(frozen=True)
class HttpBind(guard.HttpBind):
    """Where ``research-agent mcp --http`` listens; see :class:`research_agent.service.http.HttpBind`."""

    command: str = field(default="mcp --http", repr=False)
    token_env: str = field(default="RESEARCH_AGENT_MCP_TOKEN", repr=False)

    @property
    def url(self) -> str:
        return f"{self.base_url}/mcp"


def http_app(server: Any, bind: guard.HttpBind) -> HttpGuard:
    """The ASGI app for ``server`` (an MCPServer) on ``bind``: the SDK's streamable HTTP app behind
    the guard. ``.app.router.lifespan_context`` of the returned app runs its sessions."""
    unchecked = TransportSecuritySettings(enable_dns_rebinding_protection=False)  # the guard checks Host and Origin
    return HttpGuard(server.streamable_http_app(transport_security=unchecked, host=bind.host), bind)


async def serve_http(server: Any, bind: guard.HttpBind, sock: socket.socket) -> None:
    """Serve ``server`` on the listening ``sock`` until the process is stopped."""
    await guard.serve_asgi(http_app(server, bind), sock, log_level=server.settings.log_level)
