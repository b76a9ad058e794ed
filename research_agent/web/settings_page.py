"""``/settings``: the server's settings, read-only, and a button that runs doctor's checks.

The settings are those every run of this server starts from (its flags, then the environment,
then the config file), shown as :func:`~research_agent.service.setup.shown.settings_rows` gives
them: the endpoint by its host, a key only as "set". The checks are the ones ``research-agent
doctor`` runs (:mod:`research_agent.service.setup.checks`), in a worker thread, one run at a time;
a model that has not answered a one-token completion within :data:`DOCTOR_WAIT` seconds is "slow"
(a page is not left waiting as long as a run would wait). Every detail is cleared of every key the
settings hold before it is shown. Running them is a POST with the CSRF token: they reach the
endpoint and the scholarly providers, which no other site's page may make this server do.
"""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..config import Settings
from ..service.setup.checks import SLOW, UNTRIED, Check, failed, run_checks
from ..service.setup.shown import settings_rows, without_secrets
from .app import Workbench, answered, bench_of
from .forms import read_form

__all__ = ["SETTINGS_ROUTES", "DOCTOR_WAIT", "STATUS_WORDS"]

DOCTOR_WAIT = 30.0  # seconds the checks wait for the endpoint's answer, at most
ENDPOINT_TIMEOUT = 5.0  # seconds to connect, as ``doctor --timeout`` by default
STATUS_WORDS = {True: "ok", False: "fail", None: "missing", SLOW: "slow", UNTRIED: "untried"}


def _checks(settings: Settings, offline: bool) -> list[Check]:
    import httpx

    waited = settings.replace(llm_timeout=min(settings.llm_timeout, DOCTOR_WAIT))
    with httpx.Client(timeout=ENDPOINT_TIMEOUT) as client:
        return run_checks(waited, client=client, offline=offline, timeout=ENDPOINT_TIMEOUT)


def _page(bench: Workbench, settings: Settings, **more: Any) -> Response:
    rows = settings_rows(settings, allow_dirs=bench.service.options.allow_dirs, max_runs=bench.service.slots.limit)
    return bench.page("settings.html", here="settings", rows=rows, wait=DOCTOR_WAIT, **more)


@answered
async def settings_page(request: Request) -> Response:
    bench = bench_of(request)
    return _page(bench, bench.settings())


@answered
async def doctor(request: Request) -> Response:
    bench = bench_of(request)
    form = await read_form(request, bench.csrf)
    settings = bench.settings()
    offline = form.flag("offline")
    checks = await asyncio.to_thread(_checks, settings, offline)
    shown = [(without_secrets(what, settings), STATUS_WORDS.get(ok, str(ok)), without_secrets(detail, settings))
             for what, ok, detail in checks]  # fmt: skip
    return _page(bench, settings, checks=shown, failed=failed(checks), offline=offline)


SETTINGS_ROUTES = [
    Route("/settings", settings_page, methods=["GET"]),
    Route("/settings/doctor", doctor, methods=["POST"]),
]
