"""The resources: ``report://{id}`` (a report's markdown), ``report://{id}?format=html`` (the same
report as one self-contained HTML page whose citations preview their passage, as ``research-agent
export`` writes it) and ``critique://{id}`` (its critique, YAML).

An id is any reference :mod:`research_agent.run_refs` resolves (the full id, the short id, a
unique prefix of either, ``latest``, ``latest~N``), resolved against the folder's listing, so
a URI can never name a path. A report is read size-capped from the reports folder, never
through a symlink; a critique is loaded and validated as ``memory show`` does, and given back
as the YAML of its file. Rendering the page is a plain function of the reports folder and the
id (:func:`research_agent.service.reports.report_html_text`), run in one of the server's CPU worker processes
(:mod:`.cpu`), never on the event loop. :func:`listed_resources` lists the
reports and critiques that exist, newest first, at most :data:`MAX_LISTED`. ``runs://journal``
(``?status=interrupted``...) is the run journal as ``research-agent runs --json`` prints it: every
run from its start, an interrupted one as such, with the command that resumes it.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import ParamSpec

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from mcp.types import Resource

from ..errors import InputError, ResearchError, error_message
from ..files.safeyaml import dump_yaml
from ..run_refs import Runs
from ..service.reports import report_html_text, report_markdown
from ..text.controls import one_line
from .answers import service_of
from .memory_tools import load_by_id

__all__ = ["add_resources", "report", "report_html", "report_html_text", "critique", "journal", "listed_resources",
           "MAX_LISTED"]  # fmt: skip

P = ParamSpec("P")
MAX_LISTED = 100
_SCHEMES = {"report": ("report", "text/markdown"), "critique": ("critique", "application/yaml")}


def _resource_errors(read: Callable[P, Awaitable[str]]) -> Callable[P, Awaitable[str]]:
    """A ResearchError becomes the resource error the SDK sends, with the CLI's message:
    not found for a reference that names nothing, else a plain resource error (never a traceback)."""

    @functools.wraps(read)
    async def resource(*args: P.args, **kwargs: P.kwargs) -> str:
        try:
            return await read(*args, **kwargs)
        except ResearchError as exc:
            not_found = exc.http_status == 404  # a reference that names no run
            raise (ResourceNotFoundError if not_found else ResourceError)(one_line(error_message(exc))) from None

    return resource


@_resource_errors
async def report(run_id: str, ctx: Context) -> str:
    """The markdown of a report in the reports folder."""
    return await asyncio.to_thread(report_markdown, service_of(ctx).settings().reports_dir, run_id)


@_resource_errors
async def report_html(run_id: str, ctx: Context) -> str:
    """A report as one self-contained HTML page whose citations preview the passage they cite."""
    service = service_of(ctx)
    # In a worker process, as review: rendering holds the GIL, a thread would stall every session.
    return await service.cpu.run(report_html_text, service.settings().reports_dir, run_id)


@_resource_errors
async def critique(run_id: str, ctx: Context) -> str:
    """The critique of a run, as the YAML of its file."""
    runs = await asyncio.to_thread(Runs.scan, service_of(ctx).settings().reports_dir)
    loaded = await asyncio.to_thread(load_by_id, runs, run_id)
    return dump_yaml(loaded.as_dict())


@_resource_errors
async def journal(ctx: Context, status: str = "") -> str:
    """The run journal, newest first, as JSON (at most :data:`MAX_LISTED` runs)."""
    from ..journal.listing import STATUSES, journal_rows

    if status and status not in STATUSES:
        raise InputError(f"status {status[:40]!r}: choose one of {', '.join(STATUSES)}")
    rows = await asyncio.to_thread(journal_rows, service_of(ctx).settings().reports_dir, status=status or None,
                                   limit=MAX_LISTED)  # fmt: skip
    return json.dumps(rows, ensure_ascii=False)


def listed_resources(reports_dir: Path, limit: int = MAX_LISTED) -> list[Resource]:
    """The reports and critiques in ``reports_dir``, newest run first, at most ``limit``."""
    runs = Runs.scan(reports_dir)
    shorts = runs.shorts()
    found = [(run_id, kind) for kind in _SCHEMES for run_id in runs.ids(kind)]
    found.sort(key=lambda item: (item[0].rsplit("_", 1)[-1], item[0], item[1] == "report"), reverse=True)
    listed = []
    for run_id, kind in found[:limit]:
        scheme, mime = _SCHEMES[kind]
        slug, stamp = run_id.rsplit("_", 1)
        when = f"{stamp[:4]}-{stamp[4:6]}-{stamp[6:8]} {stamp[9:11]}:{stamp[11:13]} UTC"
        listed.append(Resource(
            uri=f"{scheme}://{run_id}", name=f"{kind} {shorts[run_id]}", mime_type=mime,
            title=f"{kind} {shorts[run_id]}: {slug.replace('-', ' ')} ({when})",
        ))  # fmt: skip
    return listed


def add_resources(server: MCPServer) -> None:
    """Register the report (markdown and HTML) and critique resource templates on ``server``."""
    server.resource("report://{run_id}", name="report", mime_type="text/markdown")(report)
    server.resource("report://{run_id}?format=html", name="report_html", mime_type="text/html")(report_html)
    server.resource("critique://{run_id}", name="critique", mime_type="application/yaml")(critique)
    server.resource("runs://journal{?status}", name="journal", mime_type="application/json")(journal)
