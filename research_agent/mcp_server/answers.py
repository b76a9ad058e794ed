"""The one error boundary of the MCP server: every tool body runs inside :func:`answered`; and
:func:`service_of`, the shared :class:`~research_agent.service.Service` a call came to.

A tool body returns plain data (its TypedDict); the caller gets it as structured content,
and as text a short summary for a person (the tool's ``summary``, see :mod:`.summaries`). A :class:`~research_agent.errors.ResearchError` (a bad
argument, a missing endpoint, a provider failure, busy) becomes a tool error
(``isError``) whose text is the one line the CLI prints for it; anything else becomes
the CLI's "unexpected" line, its traceback only in the server's log (``-v``). The server
never dies of a tool, and no traceback reaches a client. Cancellation is not an error:
it passes through.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any, ParamSpec

from mcp.types import CallToolResult, TextContent

from ..errors import ResearchError, error_message
from ..service import Service
from ..text.controls import one_line

__all__ = ["answered", "error_result", "data_result", "service_of"]

log = logging.getLogger(__name__)

P = ParamSpec("P")


def error_text(exc: BaseException) -> str:
    """``error: <message>`` on one line, as the CLI prints it."""
    return "error: " + one_line(error_message(exc))


def error_result(exc: BaseException) -> CallToolResult:
    """A tool error carrying :func:`error_text` of ``exc``."""
    return CallToolResult(content=[TextContent(type="text", text=error_text(exc))], is_error=True)


def data_result(data: Any, text: str) -> CallToolResult:
    """A tool's answer: ``data`` as structured content, ``text`` (its summary) as text content."""
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def answered(
    *, summary: Callable[[Any], str]
) -> Callable[[Callable[P, Awaitable[Any]]], Callable[P, Awaitable[CallToolResult]]]:
    """Wrap a tool body in the boundary; ``summary(data)`` is its answer's text content. The wrapper
    keeps the body's signature (arguments, Context parameter and return TypedDict), which is what
    the SDK reads for the schemas."""

    def wrap(body: Callable[P, Awaitable[Any]]) -> Callable[P, Awaitable[CallToolResult]]:
        @functools.wraps(body)
        async def tool(*args: P.args, **kwargs: P.kwargs) -> CallToolResult:
            try:
                data = await body(*args, **kwargs)
            except ResearchError as exc:
                log.info("tool %s: %s", body.__name__, error_text(exc))
                return error_result(exc)
            except Exception as exc:
                log.error("tool %s: %s", body.__name__, error_text(exc))
                log.debug("tool %s failed", body.__name__, exc_info=exc)
                return error_result(exc)
            return data_result(data, summary(data))

        return tool

    return wrap


def service_of(ctx: Any) -> Service:
    """The Service of the server a tool call came to (its lifespan hands it to every request)."""
    service = ctx.request_context.lifespan_context
    if not isinstance(service, Service):
        raise TypeError(f"the server's lifespan gave {type(service).__name__}, not a Service")
    return service
