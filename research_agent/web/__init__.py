"""The local research workbench (``research-agent serve``, the optional extra ``[web]``): a thin
adapter over :mod:`research_agent.service`, server-rendered HTML that works without JavaScript,
with one small script of its own for live progress. No CDN, no build step: the templates and
static files are package data.

* :mod:`.app`           the ASGI app (routes, headers, the shared HTTP guard) and serving it
* :mod:`.pages`         ask (``/``), watch (``/runs/<key>``, its events and Cancel), read (``/reports``)
* :mod:`.memory_pages`  ``/memory``: lessons and their effects, critiques, proposals; a person's acts
* :mod:`.eval_pages`    ``/evals``: the evals of the reports folder and their scorecards (read-only)
* :mod:`.jobs`          the runs this server started, each holding a run slot, followed as events
* :mod:`.forms`         CSRF token, size-capped forms, loopback clients, run ids (never paths)
* :mod:`.views`         the reports list's rows and a run record's parts, read from the reports folder
* :mod:`.report_page`   a report's page: the export's HTML with the run's details beside it
* :mod:`.charts`        the memory page's SVG pictures, as numbers

Importing this package needs starlette, uvicorn, sse-starlette and jinja2.
"""

from .app import WebBind, Workbench, build_app, serve

__all__ = ["WebBind", "Workbench", "build_app", "serve"]
