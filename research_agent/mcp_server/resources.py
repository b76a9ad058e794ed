"""The resources: ``report://{id}`` (a report's markdown), ``report://{id}?format=html`` (the same
report as one self-contained HTML page whose citations preview their passage, as ``research-agent
export`` writes it) and ``critique://{id}`` (its critique, YAML).

An id must be a run id (``<slug>_<UTC timestamp>``); anything else is refused before
any file is touched, so a URI cannot name a path. A report is read size-capped from the
reports folder, never through a symlink; a critique is loaded and validated as
``memory show`` does, and given back as the YAML of its file. Rendering the page is a plain
function of the reports folder and the id (:func:`report_html_text`), run off the event loop.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import ParamSpec

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError

from ..errors import ResearchError, error_message
from ..export import report_page
from ..files.safeyaml import dump_yaml
from ..memory.critique.evidence import read_report_file
from .memory_tools import NotFound, load_by_id, run_id_of
from .service import service_of

__all__ = ["add_resources", "report", "report_html", "report_html_text", "critique"]

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


def _report_path(reports_dir: Path, run_id: str) -> Path:
    path = reports_dir / f"{run_id_of(run_id)}.md"
    if not path.exists() and not path.is_symlink():
        raise NotFound(f"no report {path.stem} in {reports_dir}")
    return path


@_resource_errors
async def report(run_id: str, ctx: Context) -> str:
    """The markdown of report <id> in the reports folder."""
    reports_dir = service_of(ctx).settings().reports_dir
    return await asyncio.to_thread(read_report_file, _report_path(reports_dir, run_id), reports_dir)


def report_html_text(reports_dir: Path, run_id: str) -> str:
    """Report ``run_id`` of ``reports_dir`` as one self-contained HTML page (a plain function:
    it can run in a thread or a worker process)."""
    path = _report_path(reports_dir, run_id)
    page, _ = report_page(path, read_report_file(path, reports_dir), reports_dir)
    return page.html


@_resource_errors
async def report_html(run_id: str, ctx: Context) -> str:
    """Report <id> as one self-contained HTML page whose citations preview the passage they cite."""
    return await asyncio.to_thread(report_html_text, service_of(ctx).settings().reports_dir, run_id)


@_resource_errors
async def critique(run_id: str, ctx: Context) -> str:
    """The critique of run <id>, as the YAML of its file."""
    meta_dir = service_of(ctx).settings().meta_dir
    loaded = await asyncio.to_thread(load_by_id, meta_dir, run_id)
    return dump_yaml(loaded.as_dict())


def add_resources(server: MCPServer) -> None:
    """Register the report (markdown and HTML) and critique resource templates on ``server``."""
    server.resource("report://{run_id}", name="report", mime_type="text/markdown")(report)
    server.resource("report://{run_id}?format=html", name="report_html", mime_type="text/html")(report_html)
    server.resource("critique://{run_id}", name="critique", mime_type="application/yaml")(critique)
