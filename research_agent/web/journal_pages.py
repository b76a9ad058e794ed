"""The run journal in the workbench: ``/runs`` lists every run of the reports folder from its start
(whoever started it: this server, the CLI, a batch, MCP), and ``/runs/<run id>`` shows a run this
server no longer follows (it ended before a restart, or ran elsewhere) from its journal entry; an
interrupted, failed or cancelled one has a Resume button (``POST /runs/<run id>/resume``), which
continues it here from its checkpoints with its own question and settings. Both outlive the
server: they read ``reports/meta/journal-*.json`` (:mod:`research_agent.journal`).
"""

from __future__ import annotations

import asyncio

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from ..errors import ResearchError, error_message
from ..ids import is_run_id
from ..journal.entries import RESUMABLE, JournalEntry, read_entry
from ..journal.listing import STATUSES, journal_rows
from ..journal.resume import check_signed
from ..journal.settings_snapshot import restored
from ..service import Busy, check_corpus_dirs
from ..text.controls import one_line
from .app import answered, bench_of
from .forms import RequestRefused, read_form

__all__ = ["JOURNAL_ROUTES", "journal_run", "MAX_LISTED"]

MAX_LISTED = 200


@answered
async def runs_list(request: Request) -> Response:
    bench = bench_of(request)
    status = request.query_params.get("status") or None
    if status is not None and status not in STATUSES:
        raise RequestRefused(400, f"no status {status[:40]!r}: choose one of {', '.join(STATUSES)}")
    rows = await asyncio.to_thread(journal_rows, bench.reports_dir, status=status, limit=MAX_LISTED)
    return bench.page("runs.html", rows=rows, only=status, statuses=STATUSES)


def _entry(request: Request) -> JournalEntry:
    run_id = request.path_params["key"]
    entry = read_entry(bench_of(request).reports_dir / "meta", run_id) if is_run_id(run_id) else None
    if entry is None:
        raise RequestRefused(404, "no such run in this reports folder's journal")
    return entry


async def journal_run(request: Request, *, error: str = "", status: int = 200) -> Response:
    """A run's page from its journal entry (the server follows no job of it)."""
    bench = bench_of(request)
    entry = await asyncio.to_thread(_entry, request)
    # The header tells a run page left open across a restart to load this page rather than reattach.
    return bench.page("journal_run.html", status=status, headers={"X-Run-Page": "journal"}, entry=entry,
                      resumable=entry.status in RESUMABLE, error=error)  # fmt: skip


@answered
async def resume_run(request: Request) -> Response:
    bench = bench_of(request)
    await read_form(request, bench.csrf)
    entry = await asyncio.to_thread(_entry, request)
    if entry.status not in RESUMABLE:
        return await journal_run(request, status=409, error=f"this run is {entry.status}: there is nothing to resume")
    try:
        # Only an entry signed with the user's key; the server's own keys, endpoint and private-fetch
        # choice; the run's corpus only inside its folders.
        await asyncio.to_thread(check_signed, bench.reports_dir / "meta", entry.id, bench.service.settings().state_dir)
        settings = restored(entry.settings, reports_dir=bench.reports_dir, load=lambda kept: bench.service.settings(**kept))
        settings = settings.replace(corpus_dirs=check_corpus_dirs(settings.corpus_dirs, bench.service.options.allow_dirs))
        shown = (("resumes", entry.id), ("mode", entry.mode))
        job = bench.board.research(entry.question, settings, shown, resume=entry.id)
    except Busy as exc:
        return await journal_run(request, status=503, error=error_message(exc))
    except ResearchError as exc:
        return await journal_run(request, status=400, error=one_line(error_message(exc)))
    return RedirectResponse(f"/runs/{await bench.board.named(job)}", status_code=303)


JOURNAL_ROUTES = [
    Route("/runs", runs_list, methods=["GET"]),
    Route("/runs/{key}/resume", resume_run, methods=["POST"]),
]
