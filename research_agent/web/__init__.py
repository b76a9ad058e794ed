"""The local research workbench (``research-agent serve``, the optional extra ``[web]``): a thin
adapter over :mod:`research_agent.service`, server-rendered HTML that works without JavaScript,
with small scripts of its own for live progress. No CDN, no build step: the templates and static
files are package data. No module here imports another front end.

* :mod:`.server`        the ASGI app (every page module's routes, headers, the shared HTTP guard)
                        and serving it; the one module that imports the page modules
* :mod:`.app`           what every page shares: the :class:`Workbench`, headers, error pages, event streams
* :mod:`.pages`         ask (``/``), watch (``/runs/<key>``, its events and Cancel)
* :mod:`.plans`         "review the plan first": a run paused after its plan, its page's Continue
* :mod:`.reports`       read (``/reports``, ``/reports/<id>``), download (md, html, pdf) and delete
* :mod:`.batches`       ``/batches``: start one (pasted or uploaded), follow it, cancel and resume
* :mod:`.memory_pages`  ``/memory``: lessons and their effects, critiques, proposals; a person's acts
* :mod:`.eval_pages`    ``/evals``: the evals of the reports folder and their scorecards (read-only)
* :mod:`.settings_page` ``/settings``: the settings, read-only, and doctor's checks on a button
* :mod:`.jobs`          the runs this server started, each holding a run slot, followed as events
* :mod:`.forms`         CSRF token, size-capped forms and uploads, loopback clients, run options, run ids
* :mod:`.charts`        the memory page's SVG pictures, as numbers

Importing this package needs starlette, uvicorn, sse-starlette, jinja2 and python-multipart.
"""

from .app import WebBind, Workbench
from .server import build_app, serve

__all__ = ["WebBind", "Workbench", "build_app", "serve"]
