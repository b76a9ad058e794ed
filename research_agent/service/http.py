"""The HTTP guard every served front end keeps (the MCP server over HTTP, the web workbench).

A caller of such a server spends the owner's API key and reads reports and allowed files, so:

* **loopback** means exactly ``127.0.0.1``, ``::1`` and ``localhost``. Any other bind
  (``0.0.0.0`` included) needs a bearer token (:class:`HttpBind` refuses to exist without
  one); a token given on a loopback bind is required there too. The token comes from the
  environment or a file (:func:`read_token`), never the command line (``/proc`` shows that
  to every user), and is compared in constant time.
* **Host and Origin are checked on every bind** (DNS rebinding: a web page whose name now
  points at this address). The allowed hosts are the bound address, plus ``localhost``,
  ``127.0.0.1`` and ``[::1]`` on a loopback bind, plus the ``--allow-host`` names; each at
  the served port. A request with any other Host gets 421, any other Origin 403.

:class:`HttpGuard` is one ASGI middleware doing all three checks in front of any app.
:func:`listen` binds the socket before the server says it is listening, so a port in use is
one line and a client that has read the startup line can connect at once; :func:`serve_asgi`
serves an app on it with uvicorn (imported only then: the CLI never loads it otherwise).
"""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..files.safefile import UnsafeFile, read_text_capped
from ..files.state import warn_if_open

__all__ = [
    "LOOPBACK", "MIN_TOKEN_CHARS", "HttpBind", "HttpGuard", "is_loopback", "allowed_hosts", "read_token",
    "listen", "serve_asgi",
]  # fmt: skip

LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})
MIN_TOKEN_CHARS = 16
MAX_TOKEN_FILE_BYTES = 4096


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
    """Where and how an HTTP server listens. ``token`` (never shown) is required of every
    request when set, and must be set off loopback. ``command`` and ``token_env`` only word
    the message that asks for a token (which command, which variable)."""

    host: str
    port: int
    token: str = field(default="", repr=False)
    allow_hosts: tuple[str, ...] = ()
    command: str = field(default="the server", repr=False)
    token_env: str = field(default="", repr=False)

    def __post_init__(self) -> None:
        if not is_loopback(self.host) and not self.token:
            where = f"set {self.token_env} or pass --token-file FILE" if self.token_env else "pass --token-file FILE"
            raise ConfigError(f"{self.command} on {self.host} (not loopback) needs a bearer token: {where}")
        if self.token and (len(self.token) < MIN_TOKEN_CHARS or any(c.isspace() or not c.isprintable() for c in self.token)):
            raise ConfigError(f"the bearer token must be at least {MIN_TOKEN_CHARS} printable characters, no spaces")

    @property
    def base_url(self) -> str:
        return f"http://{_netloc(self.host, self.port)}"

    def hosts(self) -> list[str]:
        """The Host headers a request may carry."""
        return allowed_hosts(self.host, self.port, self.allow_hosts)

    def origins(self) -> list[str]:
        """The Origin headers a request may carry (none at all is allowed too)."""
        return [f"{scheme}://{host}" for host in self.hosts() for scheme in ("http", "https")]


ASGIApp = Callable[[dict[str, Any], Callable[..., Awaitable[Any]], Callable[..., Awaitable[Any]]], Awaitable[None]]


class HttpGuard:
    """ASGI middleware in front of ``app`` for ``bind``: Host, Origin and Authorization each at most
    once (else 400), the bearer token when the bind has one (else 401), then the Host (else 421) and
    the Origin when there is one (else 403). ``.app`` is the app behind it (its lifespan is the app's own)."""

    def __init__(self, app: ASGIApp, bind: HttpBind) -> None:
        self.app = app
        self._expected = bind.token.encode() if bind.token else b""
        self._hosts = frozenset(host.encode("latin-1") for host in bind.hosts())
        self._origins = frozenset(origin.encode("latin-1") for origin in bind.origins())

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] in ("http", "websocket"):
            headers, repeated = _single_headers(scope.get("headers", ()))
            refusal = (400, b"Duplicate " + repeated.title() + b" header", []) if repeated else self._refusal(headers)
            if refusal is not None:
                await _refuse(send, *refusal)
                return
        await self.app(scope, receive, send)

    def _refusal(self, headers: dict[bytes, bytes]) -> tuple[int, bytes, list[tuple[bytes, bytes]]] | None:
        if self._expected and not self._authorized(headers.get(b"authorization", b"")):
            return 401, b"a bearer token is required\n", [(b"www-authenticate", b"Bearer")]
        if headers.get(b"host", b"") not in self._hosts:
            return 421, b"Invalid Host header", []
        origin = headers.get(b"origin")
        if origin and origin not in self._origins:
            return 403, b"Invalid Origin header", []
        return None

    def _authorized(self, given: bytes) -> bool:
        """``Bearer <token>``, the scheme in any case (RFC 9110 11.1), the token compared in constant time."""
        scheme, _, credentials = given.partition(b" ")
        right_token = hmac.compare_digest(credentials.strip(b" "), self._expected)
        return right_token and scheme.lower() == b"bearer"


# Headers the guard decides by: one of each, or the request is refused. Of two, the guard and the
# app behind it could each read another (a dict keeps the last, Starlette reads the first).
_SINGLE = frozenset((b"host", b"origin", b"authorization"))


def _single_headers(pairs: Any) -> tuple[dict[bytes, bytes], bytes]:
    """The request's headers by name, and the name of a header of :data:`_SINGLE` given twice (b"": none)."""
    headers: dict[bytes, bytes] = {}
    for name, value in pairs:
        if name in _SINGLE and name in headers:
            return headers, name
        headers[name] = value
    return headers, b""


async def _refuse(send: Any, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain"), *headers]})  # fmt: skip
    await send({"type": "http.response.body", "body": body})


def read_token(token_file: Path | None, fallback: str) -> str:
    """The bearer token: the first line of ``token_file``, else ``fallback`` (the environment's,
    which config.py reads), else ""; ConfigError (one line) for a file that cannot be used."""
    if token_file is None:
        return fallback
    try:
        text = read_text_capped(token_file, max_bytes=MAX_TOKEN_FILE_BYTES, follow_symlinks=True)
    except UnsafeFile as exc:
        raise ConfigError(f"--token-file {token_file}: {exc}") from None
    token = text.strip().split("\n", 1)[0].strip()
    if not token:
        raise ConfigError(f"--token-file {token_file}: the file is empty")
    with contextlib.suppress(OSError):  # it was just read: a stat that fails now only loses the warning
        warn_if_open(token_file, "the token file", token_file.stat().st_mode, fix=f"chmod 600 {token_file}")
    return token


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


async def serve_asgi(app: ASGIApp, sock: socket.socket, *, log_level: str = "warning") -> None:
    """Serve ``app`` on the listening ``sock`` with uvicorn until the process is stopped."""
    import uvicorn

    config = uvicorn.Config(app, log_level=log_level.lower())
    await uvicorn.Server(config).serve(sockets=[sock])
