"""``research-agent mcp``: serve research-agent to MCP clients (agents, IDEs) over stdio or HTTP.

The options become the server's settings (flags, then the environment, then the config
file, as for ``run``) and its safety limits: which folders a caller may name as a corpus
(``--allow-dir``), whether private addresses may be fetched (``--allow-private``), how
many runs at once (``--max-runs``). The server itself is :mod:`research_agent.mcp_server`,
imported only here, since the ``mcp`` SDK is an optional extra.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Annotated, Any

import typer

from ..config import load_settings
from ..errors import ConfigError, InputError
from ..version import extra_hint
from .boundary import guarded, stderr_console
from .run import (
    Context,
    FastModel,
    LlmTimeout,
    Model,
    NoCache,
    NoCritique,
    NoLessons,
    ReportsDir,
    Rules,
    SearxngUrl,
    Timeout,
    settings_overrides,
)
from .terminal import markup

__all__ = ["mcp_command"]

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
Host = Annotated[str | None, typer.Option("--host", help="The address --http listens on (default 127.0.0.1).")]


@guarded
def mcp_command(
    ctx: typer.Context,
    allow_dir: AllowDir = None,
    allow_private: AllowPrivate = False,
    max_runs: MaxRuns = 2,
    http: HttpPort = None,
    host: Host = None,
    model: Model = None,
    fast_model: FastModel = None,
    reports_dir: ReportsDir = None,
    searxng_url: SearxngUrl = None,
    context: Context = None,
    rules: Rules = None,
    timeout: Timeout = None,
    llm_timeout: LlmTimeout = None,
    no_cache: NoCache = False,
    no_critique: NoCritique = False,
    no_lessons: NoLessons = False,
) -> None:
    """Serve research, review and memory as MCP tools over stdio (or --http PORT)."""
    if host is not None and http is None:
        raise InputError("--host needs --http PORT (over stdio there is nothing to listen on)")
    server = _server_package()
    overrides = {
        name: value
        for name, value in settings_overrides(ctx.params).items()  # the settings options above, by name
        if value is not None and name != "allow_private"  # the server's own choice, below
    }
    load_settings(overrides)  # a bad flag, variable or config file stops the server before it starts
    options = server.ServerOptions(
        overrides=overrides,
        allow_dirs=server.resolve_allowed_dirs(allow_dir or ()),
        allow_private=allow_private,
        max_runs=max_runs,
    )
    _tell_start(options, http, host or "127.0.0.1")
    server.serve(options, http_port=http, host=host or "127.0.0.1")


def _server_package() -> ModuleType:
    """:mod:`research_agent.mcp_server`, or a one-line ConfigError saying how to install the extra."""
    try:
        from .. import mcp_server
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] != "mcp":
            raise
        raise ConfigError(f"the MCP server needs the mcp extra: {extra_hint('mcp')}") from None
    return mcp_server


def _tell_start(options: Any, http: int | None, host: str) -> None:
    """One line on stderr: where the server listens and what callers may do."""
    where = f"streamable HTTP on http://{host}:{http}/mcp" if http is not None else "stdio"
    folders = ", ".join(str(d) for d in options.allow_dirs) or "none (corpus runs are refused)"
    private = "allowed" if options.allow_private else "refused"
    stderr_console().print(
        markup(
            f"research-agent MCP server on {where}; corpus folders: {folders}; "
            f"private addresses: {private}; at most {options.max_runs} run(s) at once"
        ),
        soft_wrap=True,
    )
