"""The ``research-agent`` command line: one module per command group.

* :mod:`.app`       the root app (``-v``, ``--version``, logging) with every group mounted
* :mod:`.run`       ``run``: options to settings, the run with progress, the result, the critique asked for
  (:mod:`.run_options`: the options themselves, shared with ``memory ab``)
* :mod:`.critique`  ``critique``, and how a run's critique is told
* :mod:`.review`    ``review``: lint any markdown report
* :mod:`.memory`    ``memory list|show|lessons|validate|prune|stats``; :mod:`.memory_ab` ``memory ab``
* :mod:`.mcp`       ``mcp``: the MCP server's options (the server is :mod:`research_agent.mcp_server`)
* :mod:`.corpus`    ``corpus index|search``;  :mod:`.cache`  ``cache clear``;  :mod:`.doctor`  ``doctor``
* :mod:`.boundary`  the one error boundary every command runs in
* :mod:`.progress`  the progress line;  :mod:`.terminal`  printing outside text inertly

The console script is ``research_agent.cli:main``; ``python -m research_agent`` runs it too.
"""

from .startup import importing

with importing():
    from .app import app, main

__all__ = ["app", "main"]
