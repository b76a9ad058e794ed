"""The MCP server (``research-agent mcp``, the optional extra ``[mcp]``): a thin adapter over
:mod:`research_agent.service` (run slots, cancellation, the ``--allow-dir`` check, settings per
call, CPU workers, progress events, the HTTP guard) for agents and IDEs that speak the Model
Context Protocol.

* :mod:`.server`        the ``MCPServer`` with every tool and resource; stdio or streamable HTTP
* :mod:`.http`          the HTTP bind of ``mcp --http``, behind the shared guard
* :mod:`.tools`         ``research`` and ``review_report``, and the list of every tool
* :mod:`.planning`      ``research_plan``, and ``research``'s ``plan`` argument
* :mod:`.batch_tool`    ``research_batch``: many questions as one batch
* :mod:`.memory_tools`  ``memory_lessons``, ``memory_list``, ``memory_show``, ``memory_effects``,
  ``memory_proposals``
* :mod:`.resources`     ``report://{id}`` and ``critique://{id}``
* :mod:`.answers`       the error boundary: a tool's data, or a tool error with the CLI's message;
  the output schema of a tool's answer, derived from its dataclass
* :mod:`.progress`      a run's events as MCP progress notifications
* :mod:`.shapes`        what every tool answers: one frozen dataclass each, built from the core's
* :mod:`.summaries`     the short text of every tool's answer

Importing this package needs the ``mcp`` SDK (2.x).
"""

from ..service import ServiceOptions, resolve_allowed_dirs
from .http import HttpBind, is_loopback
from .server import build_server, serve

__all__ = ["build_server", "serve", "ServiceOptions", "resolve_allowed_dirs", "HttpBind", "is_loopback"]
