"""The MCP server (``research-agent mcp``, the optional extra ``[mcp]``): a thin layer over the
same API the CLI uses, for agents and IDEs that speak the Model Context Protocol.

* :mod:`.server`        the ``MCPServer`` with every tool and resource; stdio or streamable HTTP
* :mod:`.http`          the HTTP bind: Host/Origin checks on every bind, a bearer token off loopback
* :mod:`.cpu`           CPU-heavy calls (review, export) in worker processes, off the event loop
* :mod:`.service`       what the tools share: the start options, settings per call, run slots,
                        the ``--allow-dir`` check
* :mod:`.tools`         ``research`` and ``review_report``, and the list of every tool
* :mod:`.memory_tools`  ``memory_lessons``, ``memory_list``, ``memory_show``
* :mod:`.resources`     ``report://{id}`` and ``critique://{id}``
* :mod:`.answers`       the error boundary: a tool's data, or a tool error with the CLI's message
* :mod:`.running`       a research call: cancellation unwinds the run as Ctrl-C does
* :mod:`.progress`      the run's stages as MCP progress notifications
* :mod:`.shapes`        the output schema of every tool

Importing this package needs the ``mcp`` SDK (2.x).
"""

from .http import HttpBind, is_loopback
from .server import build_server, serve
from .service import ServerOptions, resolve_allowed_dirs

__all__ = ["build_server", "serve", "ServerOptions", "resolve_allowed_dirs", "HttpBind", "is_loopback"]
