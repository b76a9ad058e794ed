"""``/evals`` and ``/evals/<id>``: the evals of the reports folder and their scorecards, read-only.

Each eval is its scorecard file, ``reports/eval-<id>.json``, as ``research-agent eval run`` wrote
it (:func:`~research_agent.eval.compare.load_scorecard` reads it: size-capped, inside the reports
folder, shaped like a scorecard or refused). The list shows the newest :data:`MAX_ROWS`; a page
shows the scorecard's lines (:func:`~research_agent.eval.pages.scorecard_lines`) and one row per
run, linking its report. The files lie under ``reports/``, where anything may have been planted:
every string is escaped by the templates, and a run id links only when it is one.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..batch.state import is_batch_id
from ..errors import InputError
from ..eval.compare import load_scorecard
from ..eval.pages import COLUMNS, question_cells, scorecard_lines
from ..ids import is_run_id
from .app import answered, bench_of
from .forms import RequestRefused

__all__ = ["EVAL_ROUTES", "eval_rows"]

MAX_ROWS = 200


def _ids(reports_dir: Path) -> list[str]:
    """The ids of the evals in ``reports_dir``, newest first (by the time in the id)."""
    names = (p.name.removeprefix("eval-").removesuffix(".json") for p in Path(reports_dir).glob("eval-*.json"))
    return sorted((i for i in names if is_batch_id(i)), key=lambda i: i[-23:], reverse=True)


def eval_rows(reports_dir: Path) -> tuple[list[dict[str, Any]], int]:
    """A row per eval (the newest :data:`MAX_ROWS`; one that cannot be read says why), and how many there are."""
    ids = _ids(reports_dir)
    rows: list[dict[str, Any]] = []
    for ident in ids[:MAX_ROWS]:
        try:
            data = load_scorecard(ident, reports_dir)
        except InputError as exc:
            rows.append({"id": ident, "problem": str(exc)})
            continue
        summary = data.get("summary") if isinstance(data.get("summary"), dict) else {}
        rows.append({"id": ident, "world": data["world"].get("name", ""), "status": data.get("status", ""),
                     "options": data.get("options") or {}, "summary": summary, "problem": ""})  # fmt: skip
    return rows, len(ids)


def _scorecard(reports_dir: Path, ident: str) -> dict[str, Any]:
    data = load_scorecard(ident, reports_dir)
    questions = []
    for q in data["questions"]:
        try:
            cells = question_cells(q)
        except (KeyError, TypeError):
            raise InputError(f"eval {ident}: its scorecard is not one this version reads") from None
        run_id = q.get("run_id") if is_run_id(q.get("run_id")) and q.get("status") == "done" else None
        questions.append({"cells": cells, "run_id": run_id})
    try:
        lines = scorecard_lines(data)
    except (KeyError, TypeError):
        raise InputError(f"eval {ident}: its scorecard is not one this version reads") from None
    return {"id": ident, "lines": lines, "questions": questions}


@answered
async def evals(request: Request) -> Response:
    bench = bench_of(request)
    rows, total = await asyncio.to_thread(eval_rows, bench.reports_dir)
    return bench.page("evals.html", rows=rows, total=total)


@answered
async def eval_page(request: Request) -> Response:
    bench = bench_of(request)
    ident = request.path_params["ident"]
    if not is_batch_id(ident) or ident not in await asyncio.to_thread(_ids, bench.reports_dir):
        raise RequestRefused(404, f"no eval {ident[:80]!r} in the reports folder")
    card = await asyncio.to_thread(_scorecard, bench.reports_dir, ident)
    return bench.page("eval.html", card=card, columns=COLUMNS)


EVAL_ROUTES = [
    Route("/evals", evals, methods=["GET"]),
    Route("/evals/{ident}", eval_page, methods=["GET"]),
]
