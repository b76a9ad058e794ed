"""Serving MCP over streamable HTTP: Host and Origin checked on every bind, a bearer token off loopback.

A caller of this server spends the owner's API key and reads reports and allowed files, so:

* **loopback** means exactly ``127.0.0.1``, ``::1`` and ``localhost``. Any other bind
  (``0.0.0.0`` included) needs a bearer token (:class:`HttpBind` refuses to exist without
  one); a token given on a loopback bind is required there too. The token comes from the
  environment or a file, never the command line (``/proc`` shows that to every user), and
  is compared in constant time.
* **Host and Origin are checked on every bind** (DNS rebinding: a web page whose name now
  points at this address). The allowed hosts are the bound address, plus ``localhost``,
  ``127.0.0.1`` and ``[::1]`` on a loopback bind, plus the ``--allow-host`` names; each at
  the served port. A request with any other Host gets 421, any other Origin 403.

The socket is bound before the server says it is listening, so a port in use is one line,
and a client that has read the startup line can connect at once.
"""

from __future__ import annotations

import hmac
import ipaddress
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from mcp.server.transport_security import TransportSecuritySettings

from ..errors import ConfigError

__all__ = ["LOOPBACK", "HttpBind", "is_loopback", "allowed_hosts", "http_app", "listen", "serve_http"]

LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})
MIN_TOKEN_CHARS = 16


def is_loopback(host: str) -> bool:
    """Whether ``host`` is one of exactly the three loopback names (not 127.0.0.2, not 0.0.0.0)."""
    return host in LOOPBACK


def _netloc(host: str, port: int) -> str:
    """``host:port`` as a Host header writes it (an IPv6 address in brackets)."""
    try:
        bracketed = ipaddress.ip_address(host.strip("[]")).version == 6
    except ValueError:
        bracketed = False
    return f"[{host.strip('[]')}]:{port}" if bracketed else f"{host}:{port}"


def allowed_hosts(host: str, port: int, extra: tuple[str, ...] = ()) -> list[str]:
    """The Host headers this bind answers: its own address, the loopback names on a loopback
    bind, and ``extra`` (``--allow-host``: a name, or a name with its port)."""
    names = [host, *(sorted(LOOPBACK) if is_loopback(host) else ())]
    hosts = [_netloc(name, port) for name in names]
    for entry in extra:
        has_port = entry.rsplit(":", 1)[-1].isdigit() and (entry.count(":") == 1 or entry.startswith("["))
        hosts.append(entry if has_port else _netloc(entry, port))
    return list(dict.fromkeys(hosts))


@dataclass(frozen=True)
class HttpBind:
    """Where and how the HTTP server listens. ``token`` (never shown) is required of every
    request when set, and must be set off loopback."""

    host: str
    port: int
    token: str = field(default="", repr=False)
    allow_hosts: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not is_loopback(self.host) and not self.token:
            raise ConfigError(
                f"mcp --http on {self.host} (not loopback) needs a bearer token: set RESEARCH_AGENT_MCP_TOKEN "
                "or pass --token-file FILE"
            )
        if self.token and (len(self.token) < MIN_TOKEN_CHARS or any(c.isspace() or not c.isprintable() for c in self.token)):
            raise ConfigError(f"the MCP bearer token must be at least {MIN_TOKEN_CHARS} printable characters, no spaces")

    @property
    def url(self) -> str:
        return f"http://{_netloc(self.host, self.port)}/mcp"

    def security(self) -> TransportSecuritySettings:
        hosts = allowed_hosts(self.host, self.port, self.allow_hosts)
        origins = [f"{scheme}://{h}" for h in hosts for scheme in ("http", "https")]
        return TransportSecuritySettings(
            enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
        )


ASGIApp = Callable[[dict[str, Any], Callable[..., Awaitable[Any]], Callable[..., Awaitable[Any]]], Awaitable[None]]


class BearerToken:
    """ASGI middleware: every HTTP request carries ``Authorization: Bearer <token>``, else 401."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._expected = token.encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = next((value for name, value in scope.get("headers", ()) if name == b"authorization"), b"")
            scheme, _, credentials = given.partition(b" ")  # the scheme is case-insensitive (RFC 9110 11.1)
            right_token = hmac.compare_digest(credentials.strip(b" "), self._expected)
            if not (right_token and scheme.lower() == b"bearer"):
                await send({
                    "type": "http.response.start", "status": 401,
                    "headers": [(b"content-type", b"text/plain"), (b"www-authenticate", b"Bearer")],
                })  # fmt: skip
                await send({"type": "http.response.body", "body": b"a bearer token is required\n"})
                return
        await self.app(scope, receive, send)


def http_app(server: Any, bind: HttpBind) -> Any:
    """The ASGI app for ``server`` (an MCPServer) on ``bind``: the SDK's streamable HTTP app
    with Host and Origin checks for this bind, behind the token check when there is a token.
    ``.router.lifespan_context`` of the returned app (or of its ``.app``) runs its sessions."""
    app = server.streamable_http_app(transport_security=bind.security(), host=bind.host)
    return BearerToken(app, bind.token) if bind.token else app


def listen(bind: HttpBind) -> socket.socket:
    """A socket bound and listening on ``bind``; ConfigError (one line) when that is not possible."""
    try:
        infos = socket.getaddrinfo(bind.host, bind.port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        family, _, _, _, address = infos[0]
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(address)
            sock.listen(128)
        except OSError:
            sock.close()
            raise
    except OSError as exc:
        raise ConfigError(f"cannot listen on {_netloc(bind.host, bind.port)}: {exc.strerror or exc}") from None
    return sock


async def serve_http(server: Any, bind: HttpBind, sock: socket.socket) -> None:
    """Serve ``server`` on the listening ``sock`` until the process is stopped."""
    import uvicorn

    config = uvicorn.Config(http_app(server, bind), log_level=server.settings.log_level.lower())
    await uvicorn.Server(config).serve(sockets=[sock])
