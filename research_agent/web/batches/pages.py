"""``/batches``: the batches of the reports folder, a form to start one, each one's page, its
events, and Cancel and Resume.

A batch starts from a pasted list of questions (one a line; blank lines and ``#`` comments skipped)
or an uploaded questions file (text, CSV or JSONL, by its extension), checked whole as ``research-
agent batch FILE`` checks a file (:mod:`research_agent.batch.questions`) before anything runs. The
form's run options are the ask form's; a row's own corpus folder must be one the server allows, as
the form's are. Resume continues a stopped or interrupted batch as ``batch --resume ID`` does
(:func:`~research_agent.batch.start.resumed`): the questions not done, with the options it was
started with. A batch is named by its id (never a path), found in the reports folder's listing.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from ...batch.plan import Batch, plan_batch
from ...batch.questions import BatchQuestion, questions_in_bytes, questions_in_text
from ...batch.session import default_parallel
from ...batch.start import new_batch, resumed, running_now
from ...batch.state import BatchState, is_batch_id, state_path
from ...config import MODES, Settings
from ...errors import InputError, ResearchError, error_message
from ...files.atomic import ensure_writable_dir
from ...search.registry import KNOWN_PROVIDERS
from ...service import check_corpus_dirs
from ...text.controls import one_line, without_controls
from ..app import Workbench, answered, bench_of, event_stream, form_status
from ..forms import SWITCHES, Form, RequestRefused, Upload, read_form, read_upload, run_call
from .board import MAX_ROWS, BatchJob, counts_of, row_of

__all__ = ["BATCH_ROUTES"]

PASTED = "pasted questions"
CANCEL_WAIT = 10.0  # seconds a Cancel waits for the running questions to unwind before the page answers


async def _list_page(request: Request, *, status: int = 200, error: str = "", form: Form | None = None) -> Response:
    """The batches, newest first, and the form (as submitted, when it was refused)."""
    bench = bench_of(request)
    listed = await asyncio.to_thread(bench.batch_rows.rows, bench.batches)
    return bench.page(
        "batches.html", status=status, here="batches", error=error, form=form or Form([]), fresh=form is None,
        modes=MODES.values(), folders=list(enumerate(bench.service.options.allow_dirs)), providers=KNOWN_PROVIDERS,
        options=SWITCHES, free=bench.service.slots.free, limit=bench.service.slots.limit, batches=listed,
    )  # fmt: skip


@answered
async def batches(request: Request) -> Response:
    return await _list_page(request)


def _file_name(upload: Upload) -> str:
    """The uploaded file's name as the browser gave it, without a folder or controls (never a path here)."""
    return without_controls(Path(upload.name.replace("\\", "/")).name)[:200]


def _questions(form: Form, upload: Upload | None) -> tuple[BatchQuestion, ...]:
    """The questions the form gives: pasted, or in the uploaded file (not both)."""
    pasted = form.get("questions")
    if upload is not None and pasted.strip():
        raise InputError("paste questions or choose a file, not both")
    if upload is not None:
        name = _file_name(upload) or "questions.txt"
        return questions_in_bytes(upload.data, name, source=f"the file {name!r}", folder=Path.cwd())
    if not pasted.strip():
        raise InputError("no questions: paste them, one a line, or choose a file")
    return questions_in_text(pasted, "pasted.txt", source=PASTED, folder=Path.cwd())


def _allowed(questions: list[BatchQuestion] | tuple[BatchQuestion, ...], allowed: tuple[Path, ...]) -> None:
    """InputError for a question whose own corpus folder is not one the server allows."""
    for question in questions:
        if question.corpus:
            try:
                check_corpus_dirs([Path(folder) for folder in question.corpus], allowed)
            except InputError as exc:
                raise InputError(f"line {question.line}: {exc}") from None


def _wanted(form: Form, settings: Settings, limit: int) -> int:
    text = form.get("parallel").strip()
    if not text:
        return min(limit, default_parallel(settings))
    if not (text.isdigit() and 1 <= int(text) <= limit):
        raise InputError(f"questions at once must be a whole number from 1 to {limit} (--max-runs)")
    return int(text)


def _planned(bench: Workbench, form: Form, upload: Upload | None) -> tuple[Batch, Settings, int]:
    """The new batch the form asks for, every problem refused before anything is written (blocking)."""
    allowed = bench.service.options.allow_dirs
    call, _ = run_call(form, allowed)
    settings = bench.service.run_settings(**call)
    questions = _questions(form, upload)
    _allowed(questions, allowed)
    wanted = _wanted(form, settings, bench.service.slots.limit)
    file = "" if upload is None else _file_name(upload)
    kept = {name: value for name, value in call.items() if value is not None}
    return new_batch(questions, settings, file=file, overrides=kept), settings, wanted


async def start_batch(request: Request) -> Response:
    bench = bench_of(request)
    try:
        form, upload = await read_upload(request, bench.csrf, "file")
    except RequestRefused as exc:
        return bench.page("error.html", status=exc.http_status, message=exc.message)
    try:
        batch, settings, wanted = await asyncio.to_thread(_planned, bench, form, upload)
        job = bench.batches.start(batch, settings, wanted)
    except ResearchError as exc:
        again = " (choose the file again)" if upload is not None else ""
        return await _list_page(request, status=form_status(exc), form=form, error=one_line(error_message(exc)) + again)
    return RedirectResponse(f"/batches/{job.id}", status_code=303)


def _batch_id(request: Request) -> str:
    ident = request.path_params["ident"]
    if not is_batch_id(ident):
        raise InputError(f"{ident[:80]!r} is not a batch id: pages name batches by id, never by path")
    return ident


def _stored(meta_dir: Path, ident: str) -> BatchState:
    try:
        return BatchState.load(meta_dir, ident)
    except InputError as exc:
        if not state_path(meta_dir, ident).exists():
            raise RequestRefused(404, f"no batch {ident} in the reports folder") from None
        raise exc


def _view(state: BatchState, job: BatchJob | None) -> dict[str, Any]:
    """What a batch's page shows: from the live session when this server runs it, else its file."""
    here = job is not None and job.outcome == "running"
    stages = job.stages if job is not None else {}
    elsewhere = not here and running_now(state.meta_dir, state.id)
    status = "running" if here or elsewhere else ("interrupted" if state.status == "running" else state.status)
    rows = [row_of(entry, stages.get(entry.key, "")) for entry in state.entries[:MAX_ROWS]]
    counts = counts_of(state.entries)
    return {"state": state, "job": job, "running_here": here, "elsewhere": elsewhere, "batch_status": status, "rows": rows,
            "counts": counts, "finished": counts["done"] + counts["failed"],
            "left": counts["questions"] - counts["done"]}  # fmt: skip


@answered
async def batch_page(request: Request) -> Response:
    bench = bench_of(request)
    ident = _batch_id(request)
    job = bench.batches.get(ident)
    state = job.batch.state if job is not None else await asyncio.to_thread(_stored, bench.settings().meta_dir, ident)
    return bench.page("batch.html", here="batches", shown_rows=MAX_ROWS, **_view(state, job))


@answered
async def batch_events(request: Request) -> Response:
    bench = bench_of(request)
    job = bench.batches.get(_batch_id(request))
    if job is None:
        raise RequestRefused(404, "this server runs no such batch (its state, if any, is on its page)")
    return event_stream(job.feed.follow(), lambda event: {"event": event[0], "data": json.dumps(event[1])})


@answered
async def cancel_batch(request: Request) -> Response:
    bench = bench_of(request)
    await read_form(request, bench.csrf)
    ident = _batch_id(request)
    job = bench.batches.get(ident)
    if job is not None and job.task is not None and bench.batches.cancel(ident):
        # the page then shows where each question stands, once the running ones have unwound
        await asyncio.wait({job.task}, timeout=CANCEL_WAIT)
    return RedirectResponse(f"/batches/{ident}", status_code=303)


def _continued(bench: Workbench, ident: str) -> tuple[Batch, Settings]:
    """The stored batch ``ident`` planned to continue as ``batch --resume ID`` would (blocking)."""
    meta = bench.settings().meta_dir
    previous = _stored(meta, ident)
    if previous.complete:
        raise InputError(f"nothing to do: the {len(previous.entries)} question(s) of batch {ident} are done")
    base = bench.service.run_settings()
    rows, used, settings = resumed(previous, base, {}, lambda used: bench.service.run_settings(**used))
    _allowed(rows, bench.service.options.allow_dirs)
    batch = plan_batch(rows, settings, file=previous.file, overrides=used, previous=previous)
    ensure_writable_dir(meta)
    return batch, settings


@answered
async def resume_batch(request: Request) -> Response:
    bench = bench_of(request)
    await read_form(request, bench.csrf)
    ident = _batch_id(request)
    if not bench.batches.running(ident):
        batch, settings = await asyncio.to_thread(_continued, bench, ident)
        bench.batches.start(batch, settings, min(bench.service.slots.limit, default_parallel(settings)))
    return RedirectResponse(f"/batches/{ident}", status_code=303)


BATCH_ROUTES = [
    Route("/batches", batches, methods=["GET"]),
    Route("/batches", start_batch, methods=["POST"]),
    Route("/batches/{ident}", batch_page, methods=["GET"]),
    Route("/batches/{ident}/events", batch_events, methods=["GET"]),
    Route("/batches/{ident}/cancel", cancel_batch, methods=["POST"]),
    Route("/batches/{ident}/resume", resume_batch, methods=["POST"]),
]
