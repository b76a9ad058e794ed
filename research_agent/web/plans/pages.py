"""``POST /runs/<key>/plan``: Continue a run paused for its plan review, with the sub-queries the
person left in the box. The form carries the CSRF token and is taken only from a loopback client;
either way the answer goes back to the run's page (a refused plan is said there, above the text
the person typed, and the run keeps waiting)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from ..app import answered, bench_of
from ..forms import RequestRefused, from_loopback, job_key, read_form

__all__ = ["PLAN_ROUTES"]


@answered
async def continue_run(request: Request) -> Response:
    bench = bench_of(request)
    form = await read_form(request, bench.csrf)
    from_loopback(request, "reviewing a run's plan")
    job = bench.board.get(job_key(request.path_params["key"]))
    if job is None or job.review is None:
        raise RequestRefused(404, "no run of this server waits for its plan there")
    job.review.answer(form.get("sub_queries"))
    return RedirectResponse(f"/runs/{job.key}", status_code=303)


PLAN_ROUTES = [Route("/runs/{key}/plan", continue_run, methods=["POST"])]
