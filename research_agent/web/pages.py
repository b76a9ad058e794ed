"""The pages to ask and watch: ``/`` (the form, and the runs of this server), ``/runs/<key>`` (a
run's page, its events and its Cancel).

Each endpoint turns the request into the calls every front end makes (the service's settings and
run slots, the run record) and their errors into a page with one line: a reference that names no
run is 404, bad input 400, a busy server 503. Blocking reads run in a thread.

A run's page follows its :class:`~research_agent.service.events.EventLog` over server-sent events:
the stages and notes, the counts at most every :data:`COUNTS_EVERY` seconds of the run, and the
writer's text as it streams, its pieces gathered over the same interval.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from ..config import MODES
from ..errors import InputError, ResearchError, error_message
from ..ids import is_run_id
from ..run.assembly import validate_query
from ..search.registry import KNOWN_PROVIDERS
from ..service.events import TOTAL, RunEvent
from ..text.controls import has_controls, one_line, without_controls
from .app import answered, bench_of, event_stream, form_status
from .forms import SWITCHES, Form, RequestRefused, from_loopback, job_key, read_form, run_call
from .jobs import Job
from .journal_pages import journal_run
from .reports.pages import record_or_problem

__all__ = ["PAGE_ROUTES", "COUNTS_EVERY", "event_data", "timeline"]

REVIEW_SHOWN = (("option", "review the plan first"),)
COUNTS_EVERY = 0.5  # seconds of the run between two counts (or two pieces of text) sent to a page


# --- ask ---------------------------------------------------------------------------------


def _ask(request: Request, *, status: int = 200, error: str = "", form: Form | None = None) -> Response:
    """The form (as submitted, when it was refused; fresh, the only allowed folder ticked)."""
    bench = bench_of(request)
    return bench.page(
        "ask.html", status=status, error=error, form=form or Form([]), fresh=form is None, modes=MODES.values(),
        folders=list(enumerate(bench.service.options.allow_dirs)), providers=KNOWN_PROVIDERS, options=SWITCHES,
        jobs=bench.board.newest()[:20], free=bench.service.slots.free, limit=bench.service.slots.limit,
    )  # fmt: skip


@answered
async def ask(request: Request) -> Response:
    return _ask(request)


async def start_run(request: Request) -> Response:
    bench = bench_of(request)
    try:
        form = await read_form(request, bench.csrf)
        if form.flag("review_plan"):
            from_loopback(request, "reviewing a run's plan")
    except RequestRefused as exc:
        return bench.page("error.html", status=exc.http_status, message=exc.message)
    try:
        if has_controls(form.get("question")):
            raise InputError("the question holds control characters (terminal escapes, bidi overrides): type it "
                             "without them")  # fmt: skip
        question = validate_query(form.get("question"))
        call, shown = run_call(form, bench.service.options.allow_dirs)
        settings = bench.service.run_settings(**call)
        review = form.flag("review_plan")
        job = bench.board.research(question, settings, (*shown, *REVIEW_SHOWN[:review]), review_plan=review)
    except ResearchError as exc:
        return _ask(request, status=form_status(exc), error=one_line(error_message(exc)), form=form)
    return RedirectResponse(f"/runs/{await bench.board.named(job)}", status_code=303)  # the run's own page


# --- watch -------------------------------------------------------------------------------


def _job(request: Request) -> Job:
    key = request.path_params["key"]
    job = bench_of(request).board.get(key if is_run_id(key) else job_key(key))  # a job's key, or its run's id
    if job is None:
        raise RequestRefused(404, "no such run on this server (a run started before the server restarted is gone from "
                           "here; its report, if any, is under Reports)")  # fmt: skip
    return job


def event_data(event: RunEvent, job: Job) -> dict[str, Any]:
    """One event as a page reads it (JSON): its words, where the run is, the counts, the outcome;
    for streamed text, the piece, and whether a new answer begins with it (it then replaces the text)."""
    data: dict[str, Any] = {"kind": event.kind, "message": event.message, "stage": event.stage,
                            "place": round(event.place, 3), "total": TOTAL, "at": round(event.at, 3)}  # fmt: skip
    if event.kind == "counts":
        data["counts"] = dict(event.counts)
    if event.kind == "text":
        data["message"] = without_controls(event.message)
        data["new"] = event.counts.get("at", 0) == 0
    if event.kind == "end":
        data["outcome"] = event.outcome
        data["report"] = f"/reports/{job.run_id}" if event.outcome == "done" and job.kind == "research" else ""
    return data


def timeline(events: tuple[RunEvent, ...]) -> list[dict[str, Any]]:
    """The events kept so far, but the writer's token counts (the page shows its rate and its text
    instead); a stage's with its length (until the next stage or the end)."""
    rows = []
    for i, event in enumerate(events):
        if event.kind == "stream":
            continue
        ends = (later.at for later in events[i + 1 :] if later.kind in ("stage", "end"))
        seconds = next(ends, None) if event.kind == "stage" else None
        rows.append({"event": event, "seconds": seconds - event.at if seconds is not None else None})
    return rows


@answered
async def run_page(request: Request) -> Response:
    bench = bench_of(request)
    if is_run_id(request.path_params["key"]) and bench.board.get(request.path_params["key"]) is None:
        return await journal_run(request)  # a run this server does not follow: from its journal entry
    job = _job(request)
    record, problem = None, ""
    if job.outcome == "done" and job.kind == "research":
        record, problem = await asyncio.to_thread(record_or_problem, bench.reports_dir, job.run_id)
    return bench.page(
        "run.html", job=job, rows=timeline(job.log.history), counts=job.log.counts_seen, total=TOTAL,
        place=job.log.ended.place if job.log.ended else _place(job), record=record, problem=problem,
        writer=_writer(job), draft=job.log.draft,
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
    events = _fewer_counts(job.log.follow(text=True))
    return event_stream(events, lambda event: {"event": event.kind, "data": json.dumps(event_data(event, job))})


async def _fewer_counts(events: AsyncIterator[RunEvent]) -> AsyncIterator[RunEvent]:
    """``events`` with the running counts, and the streamed text, at most every :data:`COUNTS_EVERY`
    seconds of the run (a streamed answer counts every token): a count held back goes out before
    the next event; pieces of text held back go out together, before any other event."""
    held: RunEvent | None = None
    text: RunEvent | None = None
    last = last_text = float("-inf")
    async for event in events:
        if event.kind == "counts":
            if event.at - last < COUNTS_EVERY:
                held = event
                continue
            last, held = event.at, None
        elif event.kind == "text":
            text = _joined(text, event)
            if event.at - last_text < COUNTS_EVERY:
                continue
            last_text, event, text = event.at, text, None
        else:
            for waiting in (text, held):
                if waiting is not None:
                    yield waiting
            held = text = None
        yield event


def _joined(before: RunEvent | None, piece: RunEvent) -> RunEvent:
    """The text held back with ``piece`` after it (a new answer, from 0, replaces it)."""
    if before is None or piece.counts.get("at", 0) == 0:
        return piece
    return RunEvent("text", before.message + piece.message, piece.stage, piece.place, before.counts, at=piece.at)


@answered
async def cancel_run(request: Request) -> Response:
    bench = bench_of(request)
    await read_form(request, bench.csrf)
    job = _job(request)
    bench.board.cancel(job.key)
    return RedirectResponse(f"/runs/{job.run_id or job.key}", status_code=303)


PAGE_ROUTES = [
    Route("/", ask, methods=["GET"]),
    Route("/runs", start_run, methods=["POST"]),
    Route("/runs/{key}", run_page, methods=["GET"]),
    Route("/runs/{key}/events", run_events, methods=["GET"]),
    Route("/runs/{key}/cancel", cancel_run, methods=["POST"]),
]
