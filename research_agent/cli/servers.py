"""The servers: ``research-agent mcp`` (research-agent as MCP tools for agents and IDEs, over stdio
or HTTP) and ``research-agent serve`` (the local web workbench).

The options become the server's settings (flags, then the environment, then the config
file, as for ``run``) and its safety limits: which folders a caller may name as a corpus
(``--allow-dir``), whether private addresses may be fetched (``--allow-private``), how
many runs at once (``--max-runs``). Over HTTP, Host and Origin are checked on every bind
(``--allow-host`` adds a name), and any bind but loopback (127.0.0.1, ::1, localhost) needs
a bearer token from ``RESEARCH_AGENT_MCP_TOKEN`` (``RESEARCH_AGENT_WEB_TOKEN`` for ``serve``) or
``--token-file``: never a command-line value, which every user of the machine can read. The
servers themselves are :mod:`research_agent.mcp_server` and :mod:`research_agent.web`, imported
only here, since each is an optional extra.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Annotated, Any

import typer

from ..config import load_settings, server_token
from ..errors import ConfigError, InputError
from ..service import ServiceOptions, resolve_allowed_dirs
from ..service.http import read_token
from ..version import extra_hint
from .boundary import guarded, stderr_console
from .run_options import SERVER_SETTINGS, settings_overrides, with_options
from .terminal import markup

__all__ = ["mcp_command", "serve_command"]

AllowDir = Annotated[
    list[Path] | None,
    typer.Option("--allow-dir", help="A folder callers may use as a corpus, with everything below it (repeatable)."),
]
AllowPrivate = Annotated[
    bool, typer.Option("--allow-private", help="Let runs fetch loopback and private-network addresses.")
]
MaxRuns = Annotated[int, typer.Option("--max-runs", min=1, max=64, help="Research runs at once; one more is refused.")]
HttpPort = Annotated[
    int | None, typer.Option("--http", min=1, max=65535, metavar="PORT", help="Serve streamable HTTP on this port.")
]
Host = Annotated[
    str | None,
    typer.Option("--host", help="The address --http listens on (default 127.0.0.1); any other than loopback "
                                "needs a bearer token."),
]
TokenFile = Annotated[
    Path | None,
    typer.Option("--token-file", help="A file holding the bearer token HTTP clients must send (else "
                                      "RESEARCH_AGENT_MCP_TOKEN).", show_default=False),
]
AllowHost = Annotated[
    list[str] | None,
    typer.Option("--allow-host", help="A Host name clients may reach the HTTP server by, besides the bound "
                                      "address (repeatable)."),
]


@guarded
@with_options(SERVER_SETTINGS)
def mcp_command(
    ctx: typer.Context,
    allow_dir: AllowDir = None,
    allow_private: AllowPrivate = False,
    max_runs: MaxRuns = 2,
    http: HttpPort = None,
    host: Host = None,
    token_file: TokenFile = None,
    allow_host: AllowHost = None,
    **run_settings: Any,  # SERVER_SETTINGS, read from ctx.params
) -> None:
    """Serve research, review and memory as MCP tools over stdio (or --http PORT)."""
    for given, name in ((host, "--host"), (token_file, "--token-file"), (allow_host, "--allow-host")):
        if given and http is None:
            raise InputError(f"{name} needs --http PORT (over stdio there is nothing to listen on)")
    server = _server_package()
    options = _options(ctx, allow_dir, allow_private, max_runs)
    bind = None
    if http is not None:
        token = read_token(token_file, server_token("mcp"))
        bind = server.HttpBind(host or "127.0.0.1", http, token, tuple(allow_host or ()))
    server.serve(options, http=bind, on_listening=lambda: _tell_start(options, bind))


def _options(ctx: typer.Context, allow_dir: list[Path] | None, allow_private: bool, max_runs: int) -> ServiceOptions:
    """The server's options from its command line; a bad flag, variable or config file stops it
    before it starts."""
    overrides = {
        name: value
        for name, value in settings_overrides(ctx.params).items()  # the settings options, by name
        if value is not None and name != "allow_private"  # the server's own choice, below
    }
    load_settings(overrides)
    return ServiceOptions(
        overrides=overrides,
        allow_dirs=resolve_allowed_dirs(allow_dir or ()),
        allow_private=allow_private,
        max_runs=max_runs,
    )


def _server_package() -> ModuleType:
    """:mod:`research_agent.mcp_server`, or a one-line ConfigError saying how to install the extra."""
    try:
        from .. import mcp_server
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] != "mcp":
            raise
        raise ConfigError(f"the MCP server needs the mcp extra: {extra_hint('mcp')}") from None
    return mcp_server


def _tell_start(options: Any, bind: Any) -> None:
    """One line on stderr: where the server listens and what callers may do."""
    where = "stdio"
    if bind is not None:
        guard = "bearer token required" if bind.token else "no token (loopback only)"
        hosts = ", ".join(bind.hosts())
        where = f"streamable HTTP on {bind.url} ({guard}; Host must be one of {hosts})"
    folders = ", ".join(str(d) for d in options.allow_dirs) or "none (corpus runs are refused)"
    private = "allowed" if options.allow_private else "refused"
    stderr_console().print(
        markup(
            f"research-agent MCP server on {where}; corpus folders: {folders}; "
            f"private addresses: {private}; at most {options.max_runs} run(s) at once"
        ),
        soft_wrap=True,
    )


WebPort = Annotated[int, typer.Option("--port", min=0, max=65535, help="The port to listen on (0: any free one).")]
WebHost = Annotated[
    str, typer.Option("--host", help="The address to listen on; any other than loopback needs a bearer token.")
]
WebTokenFile = Annotated[
    Path | None,
    typer.Option("--token-file", help="A file holding the bearer token every request must send (else "
                                      "RESEARCH_AGENT_WEB_TOKEN).", show_default=False),
]
_WEB_MODULES = ("starlette", "uvicorn", "sse_starlette", "jinja2", "python_multipart")


@guarded
@with_options(SERVER_SETTINGS)
def serve_command(
    ctx: typer.Context,
    host: WebHost = "127.0.0.1",
    port: WebPort = 8600,
    allow_dir: AllowDir = None,
    allow_private: AllowPrivate = False,
    max_runs: MaxRuns = 2,
    token_file: WebTokenFile = None,
    allow_host: AllowHost = None,
    **run_settings: Any,  # SERVER_SETTINGS, read from ctx.params
) -> None:
    """Serve the research workbench in your browser: ask, watch a run, read reports, see what the memory learned."""
    web = _web_package()
    options = _options(ctx, allow_dir, allow_private, max_runs)
    bind = web.WebBind(host, port, read_token(token_file, server_token("web")), tuple(allow_host or ()))
    web.serve(options, bind, on_listening=lambda served: _tell_web(options, served))


def _web_package() -> ModuleType:
    """:mod:`research_agent.web`, or a one-line ConfigError saying how to install the extra."""
    try:
        import python_multipart  # noqa: F401  (a batch's uploaded file: read when one comes)
        import uvicorn  # noqa: F401  (imported when serving; missing, it is the same extra)

        from .. import web
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in _WEB_MODULES:
            raise
        raise ConfigError(f"the web workbench needs the web extra: {extra_hint('web')}") from None
    return web


def _tell_web(options: Any, bind: Any) -> None:
    """One line on stderr: the address to open and what the workbench may do."""
    guard = "bearer token required" if bind.token else "no token (loopback only)"
    folders = ", ".join(str(d) for d in options.allow_dirs) or "none (corpus runs are refused)"
    stderr_console().print(
        markup(
            f"research-agent workbench on {bind.base_url}/ ({guard}; Host must be one of {', '.join(bind.hosts())}); "
            f"corpus folders: {folders}; at most {options.max_runs} run(s) at once; Ctrl-C stops it"
        ),
        soft_wrap=True,
    )
