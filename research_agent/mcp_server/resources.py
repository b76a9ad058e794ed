"""The resources: ``report://{id}`` (a report's markdown) and ``critique://{id}`` (its critique, YAML).

An id must be a run id (``<slug>_<UTC timestamp>``); anything else is refused before
any file is touched, so a URI cannot name a path. A report is read size-capped from the
reports folder, never through a symlink; a critique is loaded and validated as
``memory show`` does, and given back as the YAML of its file.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from typing import ParamSpec

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError

from ..errors import ResearchError, error_message
from ..files.safeyaml import dump_yaml
from ..memory.critique.evidence import read_report_file
from .memory_tools import NotFound, load_by_id, run_id_of
from .service import service_of

__all__ = ["add_resources", "report", "critique"]

P = ParamSpec("P")


def _resource_errors(read: Callable[P, Awaitable[str]]) -> Callable[P, Awaitable[str]]:
    """A ResearchError becomes the resource error the SDK sends, with the CLI's message:
    not found for a missing file, else a plain resource error (never a traceback)."""

    @functools.wraps(read)
    async def resource(*args: P.args, **kwargs: P.kwargs) -> str:
        try:
            return await read(*args, **kwargs)
        except ResearchError as exc:
            message = " ".join(error_message(exc).split())
            raise (ResourceNotFoundError if isinstance(exc, NotFound) else ResourceError)(message) from None

    return resource


@_resource_errors
async def report(run_id: str, ctx: Context) -> str:
    """The markdown of report <id> in the reports folder."""
    reports_dir = service_of(ctx).settings().reports_dir
    path = reports_dir / f"{run_id_of(run_id)}.md"
    if not path.exists() and not path.is_symlink():
        raise NotFound(f"no report {path.stem} in {reports_dir}")
    return await asyncio.to_thread(read_report_file, path, reports_dir)


@_resource_errors
async def critique(run_id: str, ctx: Context) -> str:
    """The critique of run <id>, as the YAML of its file."""
    meta_dir = service_of(ctx).settings().meta_dir
    loaded = await asyncio.to_thread(load_by_id, meta_dir, run_id)
    return dump_yaml(loaded.as_dict())


def add_resources(server: MCPServer) -> None:
    """Register the report and critique resource templates on ``server``."""
    server.resource("report://{run_id}", name="report", mime_type="text/markdown")(report)
    server.resource("critique://{run_id}", name="critique", mime_type="application/yaml")(critique)
