"""The pages to ask, watch and read: ``/``, ``/runs/<key>`` (and its events, its Cancel),
``/reports``, ``/reports/<id>`` (and its ``.md`` and ``.pdf``).

Each endpoint turns the request into the calls every front end makes (the service's settings and
run slots, the export, the run record) and their errors into a page with one line: a reference
that names no run is 404, bad input 400, a busy server 503. Blocking reads run in a thread; the
export's rendering and printing in one of the service's CPU worker processes.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from sse_starlette.sse import EventSourceResponse
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from ..config import MODES
from ..errors import InputError, ResearchError, error_message
from ..record import RunRecord
from ..run.assembly import validate_query
from ..run_refs import Runs, UnknownRun
from ..search.registry import KNOWN_PROVIDERS
from ..service import Busy
from ..service.events import TOTAL, RunEvent
from ..service.reports import report_html_text, report_markdown, report_pdf_bytes
from ..text.controls import has_controls
from .app import REPORT_POLICY, Workbench, bench_of
from .forms import Form, Refused, job_key, read_form, run_ref
from .jobs import Job
from .report_page import with_details
from .views import read_record, sources_in_order, when

__all__ = ["PAGE_ROUTES", "answered"]

Endpoint = Callable[[Request], Awaitable[Response]]
COUNTS_EVERY = 0.5  # seconds of the run between two counts sent to a page
_OPTIONS = (
    ("no_critique", "critique", "Skip the critique afterwards"),
    ("no_lessons", "lessons", "Give no lessons to the prompts"),
    ("no_retry", "retry", "No replans or revisions"),
    ("no_claims", "check_claims", "Skip the claim check"),
)


def answered(endpoint: Endpoint) -> Endpoint:
    """``endpoint`` with its refusals and errors as a page of one line and the right status."""

    @functools.wraps(endpoint)
    async def handler(request: Request) -> Response:
        try:
            return await endpoint(request)
        except Refused as exc:
            status, message = exc.status, exc.message
        except UnknownRun as exc:
            status, message = 404, error_message(exc)
        except Busy as exc:
            status, message = 503, error_message(exc)
        except InputError as exc:
            status, message = 400, error_message(exc)
        except ResearchError as exc:
            status, message = 500, error_message(exc)
        return bench_of(request).page("error.html", status=status, message=" ".join(message.split()))

    return handler


# --- ask ---------------------------------------------------------------------------------


def _ask(request: Request, *, status: int = 200, error: str = "", form: Form | None = None) -> Response:
    bench = bench_of(request)
    return bench.page(
        "ask.html", status=status, error=error, form=form or Form([]), modes=MODES.values(),
        folders=list(enumerate(bench.service.options.allow_dirs)), providers=KNOWN_PROVIDERS, options=_OPTIONS,
        jobs=bench.board.newest()[:20], free=bench.service.slots.free, limit=bench.service.slots.limit,
    )  # fmt: skip


@answered
async def ask(request: Request) -> Response:
    return _ask(request)


def _call(bench: Workbench, form: Form) -> tuple[dict[str, Any], tuple[tuple[str, str], ...]]:
    """The run settings a submitted form asks for, and the same in words for its page."""
    mode = form.get("mode", "standard")
    if mode not in MODES:
        raise InputError(f"unknown mode {mode[:20]!r}: choose one of {', '.join(MODES)}")
    allowed = bench.service.options.allow_dirs
    chosen = list(dict.fromkeys(form.all("corpus")))
    if not all(i.isdigit() and len(i) < 6 and int(i) < len(allowed) for i in chosen):
        raise InputError("choose corpus folders among those listed (the server's --allow-dir folders)")
    folders = [allowed[int(i)] for i in chosen]
    providers = [name for name in dict.fromkeys(form.all("search")) if name]
    unknown = [name for name in providers if name not in KNOWN_PROVIDERS]
    if unknown:
        raise InputError(f"unknown search provider {unknown[0][:30]!r}: choose among {', '.join(KNOWN_PROVIDERS)}")
    text = form.get("max_sources").strip()
    if text and not (text.isdigit() and 1 <= int(text) <= 200):
        raise InputError("max sources must be a whole number from 1 to 200")
    call: dict[str, Any] = {
        "mode": mode, "corpus_dirs": tuple(folders) or None, "search_providers": tuple(providers) or None,
        "max_sources": int(text) if text else None,
        **{setting: False for name, setting, _ in _OPTIONS if form.flag(name)},
    }  # fmt: skip
    shown = [("mode", mode)]
    shown += [("corpus", ", ".join(folder.name or str(folder) for folder in folders))] if folders else []
    shown += [("search", ", ".join(providers))] if providers else []
    shown += [("max sources", text)] if text else []
    shown += [("option", label) for name, _, label in _OPTIONS if form.flag(name)]
    return call, tuple(shown)


async def start_run(request: Request) -> Response:
    bench = bench_of(request)
    try:
        form = await read_form(request, bench.csrf)
    except Refused as exc:
        return bench.page("error.html", status=exc.status, message=exc.message)
    try:
        if has_controls(form.get("question")):
            raise InputError("the question holds control characters (terminal escapes, bidi overrides): type it "
                             "without them")  # fmt: skip
        question = validate_query(form.get("question"))
        call, shown = _call(bench, form)
        settings = bench.service.run_settings(**call)
        job = bench.board.research(question, settings, shown)
    except Busy as exc:
        return _ask(request, status=503, error=error_message(exc), form=form)
    except ResearchError as exc:
        return _ask(request, status=400, error=" ".join(error_message(exc).split()), form=form)
    return RedirectResponse(f"/runs/{job.key}", status_code=303)


# --- watch -------------------------------------------------------------------------------


def _job(request: Request) -> Job:
    job = bench_of(request).board.get(job_key(request.path_params["key"]))
    if job is None:
        raise Refused(404, "no such run on this server (a run started before the server restarted is gone from "
                           "here; its report, if any, is under Reports)")  # fmt: skip
    return job


def event_data(event: RunEvent, job: Job) -> dict[str, Any]:
    """One event as a page reads it (JSON): its words, where the run is, the counts, the outcome."""
    data: dict[str, Any] = {"kind": event.kind, "message": event.message, "stage": event.stage,
                            "place": round(event.place, 3), "total": TOTAL, "at": round(event.at, 3)}  # fmt: skip
    if event.kind == "counts":
        data["counts"] = dict(event.counts)
    if event.kind == "end":
        data["outcome"] = event.outcome
        data["report"] = f"/reports/{job.run_id}" if event.outcome == "done" and job.kind == "research" else ""
    return data


def timeline(events: tuple[RunEvent, ...]) -> list[dict[str, Any]]:
    """The events kept so far; a stage's with its length (until the next stage or the end)."""
    rows = []
    for i, event in enumerate(events):
        ends = (later.at for later in events[i + 1 :] if later.kind in ("stage", "end"))
        seconds = next(ends, None) if event.kind == "stage" else None
        rows.append({"event": event, "seconds": seconds - event.at if seconds is not None else None})
    return rows


def _record_or_problem(reports_dir: Path, run_id: str) -> tuple[RunRecord | None, str]:
    """The run record of ``run_id``, or None and why it cannot be read."""
    try:
        return read_record(reports_dir, run_id), ""
    except ResearchError as exc:
        return None, " ".join(error_message(exc).split())


@answered
async def run_page(request: Request) -> Response:
    bench, job = bench_of(request), _job(request)
    record, problem = None, ""
    if job.outcome == "done" and job.kind == "research":
        record, problem = await asyncio.to_thread(_record_or_problem, bench.reports_dir, job.run_id)
    return bench.page(
        "run.html", job=job, rows=timeline(job.log.history), counts=job.log.counts_seen, total=TOTAL,
        place=job.log.ended.place if job.log.ended else _place(job), record=record, problem=problem,
        writer=_writer(job),
    )  # fmt: skip


def _writer(job: Job) -> str:
    """The writer's latest tokens and rate (``238 tokens, 116.2 tok/s``), or ""."""
    streams = [event.message for event in job.log.history if event.kind == "stream"]
    return streams[-1].split(": ", 1)[-1] if streams else ""


def _place(job: Job) -> float:
    return max((event.place for event in job.log.history), default=0.0)


@answered
async def run_events(request: Request) -> Response:
    job = _job(request)

    stopping = anyio.Event()  # set when the server shuts down: the stream then ends cleanly

    async def stream() -> AsyncIterator[dict[str, str]]:
        async for event in _until(stopping, _fewer_counts(job.log.follow())):
            yield {"event": event.kind, "data": json.dumps(event_data(event, job))}

    return EventSourceResponse(stream(), ping=15, shutdown_event=stopping, shutdown_grace_period=1.0)


async def _until(stop: anyio.Event, events: AsyncIterator[RunEvent]) -> AsyncIterator[RunEvent]:
    """``events`` until they end or ``stop`` is set, whichever comes first."""
    stopped = asyncio.ensure_future(stop.wait())
    try:
        while True:
            following = asyncio.ensure_future(anext(events))
            await asyncio.wait({following, stopped}, return_when=asyncio.FIRST_COMPLETED)
            if not following.done():
                following.cancel()
                return
            try:
                yield following.result()
            except StopAsyncIteration:
                return
    finally:
        stopped.cancel()


async def _fewer_counts(events: AsyncIterator[RunEvent]) -> AsyncIterator[RunEvent]:
    """``events`` with the running counts at most every :data:`COUNTS_EVERY` seconds of the run
    (a streamed answer counts every token): a count held back goes out before the next event."""
    held: RunEvent | None = None
    last = float("-inf")
    async for event in events:
        if event.kind == "counts":
            if event.at - last < COUNTS_EVERY:
                held = event
                continue
            last, held = event.at, None
        elif held is not None:
            yield held
            held = None
        yield event


@answered
async def cancel_run(request: Request) -> Response:
    bench = bench_of(request)
    await read_form(request, bench.csrf)
    job = _job(request)
    bench.board.cancel(job.key)
    return RedirectResponse(f"/runs/{job.key}", status_code=303)


# --- read --------------------------------------------------------------------------------


@answered
async def reports(request: Request) -> Response:
    bench = bench_of(request)
    words = request.query_params.get("q", "")[:200]
    rows = await asyncio.to_thread(bench.rows.rows)
    shown = [row for row in rows if row.matches(words)] if words.strip() else rows
    return bench.page("reports.html", rows=shown, total=len(rows), words=words)


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
        asyncio.to_thread(_record_or_problem, bench.reports_dir, run_id),
    )
    nav = bench.html("report_nav.html", run_id=run_id, short=runs.short(run_id), pdf=bench.browser is not None)
    details = bench.html("report_details.html", record=record, problem=problem, when=when(run_id),
                         sources=sources_in_order(record.sources) if record else [])  # fmt: skip
    page = with_details(html, nav, details)
    return Response(page, media_type="text/html; charset=utf-8", headers={"content-security-policy": REPORT_POLICY})


@answered
async def report_md(request: Request) -> Response:
    bench = bench_of(request)
    run_id, _ = await _run_id(request)
    text = await asyncio.to_thread(report_markdown, bench.reports_dir, run_id)
    return Response(text, media_type="text/plain; charset=utf-8",
                    headers={"content-disposition": f'inline; filename="{run_id}.md"'})  # fmt: skip


@answered
async def report_pdf(request: Request) -> Response:
    bench = bench_of(request)
    run_id, _ = await _run_id(request)
    if bench.browser is None:
        raise Refused(501, "PDF export needs Chromium, and none was found when the server started "
                           "(apt install chromium, then restart it)")  # fmt: skip
    data = await bench.service.cpu.run(report_pdf_bytes, bench.reports_dir, run_id, bench.browser)
    return Response(data, media_type="application/pdf",
                    headers={"content-disposition": f'inline; filename="{run_id}.pdf"'})  # fmt: skip


PAGE_ROUTES = [
    Route("/", ask, methods=["GET"]),
    Route("/runs", start_run, methods=["POST"]),
    Route("/runs/{key}", run_page, methods=["GET"]),
    Route("/runs/{key}/events", run_events, methods=["GET"]),
    Route("/runs/{key}/cancel", cancel_run, methods=["POST"]),
    Route("/reports", reports, methods=["GET"]),
    Route("/reports/{ref}.md", report_md, methods=["GET"]),
    Route("/reports/{ref}.pdf", report_pdf, methods=["GET"]),
    Route("/reports/{ref}", report, methods=["GET"]),
]
