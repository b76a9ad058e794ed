"""The local test servers' base: a threading HTTP server that stays quiet when a client hangs up.

A run cancelled mid-request, or a tool under comparison that drops its connection, makes the
stdlib print a traceback per request into the test or bench output; here that case says nothing,
and any other handler error is printed as the stdlib prints it.
"""

from __future__ import annotations

import sys
from http.server import ThreadingHTTPServer

__all__ = ["QuietServer"]


class QuietServer(ThreadingHTTPServer):
    """:class:`ThreadingHTTPServer` with daemon threads and reused addresses, silent about clients
    that went away (``ConnectionResetError``, ``BrokenPipeError``)."""

    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address) -> None:  # noqa: ANN001 - the stdlib's signature
        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            return
        super().handle_error(request, client_address)
