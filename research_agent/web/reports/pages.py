"""``/reports``: the reports of the folder, each one's page and downloads, and deleting one.

A report is named by a run reference (:func:`~research_agent.web.forms.run_ref`), resolved against
the folder's own listing: a path is refused before any file is looked at. The downloads are the
markdown as written, the export's self-contained HTML page and its PDF (printed by Chromium on
the server, when there is one), each sent as an attachment. Deleting is a person's act, as
approving a lesson is: loopback clients only, a confirmation page first (a GET, which writes
nothing), then a POST with the CSRF token that deletes the run's files all or none
(:func:`~research_agent.service.reports.delete_run`) and redirects to the list.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from ...errors import ResearchError, error_message
from ...record import RunRecord
from ...run_refs import Runs
from ...service.reports import delete_run, report_html_text, report_markdown, report_pdf_bytes, run_files
from ...text.controls import one_line
from ..app import REPORT_POLICY, answered, bench_of
from ..forms import RequestRefused, from_loopback, read_form, run_ref
from .page import with_details
from .views import read_record, sources_in_order, when

__all__ = ["REPORT_ROUTES", "record_or_problem"]

_SHORT = frozenset("0123456789abcdef")


def record_or_problem(reports_dir: Path, run_id: str) -> tuple[RunRecord | None, str]:
    """The run record of ``run_id``, or None and why it cannot be read."""
    try:
        return read_record(reports_dir, run_id), ""
    except ResearchError as exc:
        return None, one_line(error_message(exc))


@answered
async def reports(request: Request) -> Response:
    bench = bench_of(request)
    words = request.query_params.get("q", "")[:200]
    deleted = request.query_params.get("deleted", "")[:64]
    rows = await asyncio.to_thread(bench.rows.rows)
    shown = [row for row in rows if row.matches(words)] if words.strip() else rows
    return bench.page("reports.html", rows=shown, total=len(rows), words=words,
                      deleted=deleted if deleted and set(deleted) <= _SHORT else "")  # fmt: skip


async def _run_id(request: Request) -> tuple[str, Runs]:
    """The run id of the report the request's reference names (404 when none, 400 for a path),
    and the folder's runs."""
    ref = run_ref(request.path_params["ref"])
    runs = await asyncio.to_thread(Runs.scan, bench_of(request).reports_dir)
    return runs.resolve(ref, "report"), runs


@answered
async def report(request: Request) -> Response:
    bench = bench_of(request)
    run_id, runs = await _run_id(request)
    html, (record, problem) = await asyncio.gather(  # the page in a worker process, the record in a thread
        bench.service.cpu.run(report_html_text, bench.reports_dir, run_id),
        asyncio.to_thread(record_or_problem, bench.reports_dir, run_id),
    )
    nav = bench.html("report_nav.html", run_id=run_id, short=runs.short(run_id), pdf=bench.browser is not None)
    details = bench.html("report_details.html", record=record, problem=problem, when=when(run_id),
                         sources=sources_in_order(record.sources) if record else [])  # fmt: skip
    page = with_details(html, nav, details)
    return Response(page, media_type="text/html; charset=utf-8", headers={"content-security-policy": REPORT_POLICY})


def _download(data: str | bytes, media_type: str, name: str, **headers: str) -> Response:
    return Response(data, media_type=media_type, headers={"content-disposition": f'attachment; filename="{name}"',
                                                          **headers})  # fmt: skip


@answered
async def report_md(request: Request) -> Response:
    bench = bench_of(request)
    run_id, _ = await _run_id(request)
    text = await asyncio.to_thread(report_markdown, bench.reports_dir, run_id)
    return _download(text, "text/markdown; charset=utf-8", f"{run_id}.md")


@answered
async def report_html(request: Request) -> Response:
    bench = bench_of(request)
    run_id, _ = await _run_id(request)
    html = await bench.service.cpu.run(report_html_text, bench.reports_dir, run_id)
    return _download(html, "text/html; charset=utf-8", f"{run_id}.html", **{"content-security-policy": REPORT_POLICY})


@answered
async def report_pdf(request: Request) -> Response:
    bench = bench_of(request)
    run_id, _ = await _run_id(request)
    if bench.browser is None:
        raise RequestRefused(501, "PDF export needs Chromium, and none was found when the server started "
                           "(apt install chromium, then restart it)")  # fmt: skip
    data = await bench.service.cpu.run(report_pdf_bytes, bench.reports_dir, run_id, bench.browser)
    return _download(data, "application/pdf", f"{run_id}.pdf")


@answered
async def delete_page(request: Request) -> Response:
    """The confirmation: which report, and every file that goes with it (writes nothing)."""
    bench = bench_of(request)
    from_loopback(request, "deleting a report")
    run_id, runs = await _run_id(request)
    files = await asyncio.to_thread(run_files, bench.reports_dir, run_id)
    record, _ = await asyncio.to_thread(record_or_problem, bench.reports_dir, run_id)
    question = record.query if record is not None else run_id.rsplit("_", 1)[0].replace("-", " ")
    return bench.page("delete_report.html", here="reports", run_id=run_id, short=runs.short(run_id),
                      question=question, when=when(run_id),
                      files=[path.relative_to(bench.reports_dir).as_posix() for path in files])  # fmt: skip


@answered
async def delete_report(request: Request) -> Response:
    """Delete the report and its run's files once confirmed, then back to the list."""
    bench = bench_of(request)
    from_loopback(request, "deleting a report")
    form = await read_form(request, bench.csrf)
    run_id, runs = await _run_id(request)
    if not form.flag("confirm"):
        return RedirectResponse(f"/reports/{run_id}/delete", status_code=303)
    await asyncio.to_thread(delete_run, bench.reports_dir, run_id)
    return RedirectResponse(f"/reports?deleted={runs.short(run_id)}", status_code=303)


REPORT_ROUTES = [
    Route("/reports", reports, methods=["GET"]),
    Route("/reports/{ref}.md", report_md, methods=["GET"]),
    Route("/reports/{ref}.html", report_html, methods=["GET"]),
    Route("/reports/{ref}.pdf", report_pdf, methods=["GET"]),
    Route("/reports/{ref}/delete", delete_page, methods=["GET"]),
    Route("/reports/{ref}/delete", delete_report, methods=["POST"]),
    Route("/reports/{ref}", report, methods=["GET"]),
]
