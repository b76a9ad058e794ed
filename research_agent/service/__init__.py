"""What every front end shares (the CLI, the MCP server, the web workbench, the batch driver), written once.

* :mod:`.options`  :class:`ServiceOptions` (how a front end was started) and :class:`Service`:
                   its run slots, its CPU workers, the settings each call gets
* :mod:`.slots`    run slots: at most ``--max-runs`` runs at once, :class:`Busy` past that
* :mod:`.folders`  the ``--allow-dir`` check (symlinks resolved, nothing outside)
* :mod:`.runs`     one research call (:class:`~.runs.ResearchCall`); a cancel before its report is
                   written unwinds it as Ctrl-C does, one after leaves it to finish (``done``)
* :mod:`.events`   a run's progress as a front-end-neutral stream of events
* :mod:`.cpu`      CPU-heavy work (review, export) in worker processes, off the event loop
* :mod:`.http`     the HTTP guard: loopback by default, a bearer token off loopback, Host and
                   Origin checked on every bind; uvicorn imported only where HTTP is served
* :mod:`.reports`  a reports folder's reports by run reference (never a path): markdown, page, PDF
* :mod:`.memory`   :class:`~.memory.Memory`: the memory the settings name (meta and state folders,
                   lessons' time to live, trial rules) and the reads every front end makes of it
* :mod:`.person`   a person's acts on the lessons (add, trust, approve, reject), for the CLI and the
                   web workbench alike; the undecided proposals

Nothing here imports the ``mcp`` SDK, starlette or uvicorn at import time.
"""

from .folders import check_corpus_dirs, inside_any, resolve_allowed_dirs
from .options import Service, ServiceOptions
from .slots import Busy, RunSlots

__all__ = [
    "Service", "ServiceOptions", "Busy", "RunSlots", "check_corpus_dirs", "inside_any", "resolve_allowed_dirs",
]  # fmt: skip
