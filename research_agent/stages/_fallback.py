"""What a stage does when the model gives it nothing it can use: degrade, and say so.

Every structured call already had its attempts (``llm.STRUCTURED_ATTEMPTS``, each
showing the model its error) and its retries (a timeout once, 5xx and unreadable
answers with backoff). A stage that can go on without the answer then falls back to a
plain default instead of ending a run whose earlier calls were paid for: after invalid
output, a timeout, an unreadable answer or an endpoint that kept failing alike. The
message goes to the log and to ``notify`` (the pipeline puts it on the progress line
and in the run record's warnings). Only the draft has no fallback, and an unknown model
(HTTP 404) or an endpoint that cannot be reached at all is never degraded: it is a setting to
fix, not a slow stage.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

from ..errors import EndpointUnreachable, LLMError, ModelNotFound

__all__ = ["Notify", "or_fallback", "degraded_message", "degrades"]

log = logging.getLogger(__name__)

T = TypeVar("T")
U = TypeVar("U")
Notify = Callable[[str], None]


def degrades(exc: BaseException) -> bool:
    """Whether a stage may go on without the answer that failed with ``exc``."""
    return isinstance(exc, LLMError) and not isinstance(exc, (ModelNotFound, EndpointUnreachable))


def degraded_message(exc: LLMError, outcome: str, notify: Notify | None) -> str:
    """Log and announce that a stage degraded; return the message."""
    message = f"{exc}; {outcome}"
    if notify is None:
        log.warning("%s", message)
    else:  # the caller shows it; a log line at warning level would print it twice
        log.info("%s", message)
        notify(message)
    return message


async def or_fallback(call: Awaitable[T], fallback: Callable[[], U], *, outcome: str, notify: Notify | None) -> T | U:
    """``await call``; when the model gave nothing usable (:func:`degrades`), ``fallback()`` (announced)."""
    try:
        return await call
    except LLMError as exc:
        if not degrades(exc):
            raise
        degraded_message(exc, outcome, notify)
        return fallback()
