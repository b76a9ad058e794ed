"""What a stage does when the model's answers cannot be read: degrade, and say so.

Every structured call already had its attempts (``llm.STRUCTURED_ATTEMPTS``, each
showing the model its error). A stage that can go on without the answer then falls
back to a plain default instead of ending a run whose earlier calls were paid for;
the message goes to the log and to ``notify`` (the pipeline puts it on the progress
line and in the run record's warnings). Only the draft has no fallback.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

from ..errors import InvalidModelOutput

__all__ = ["Notify", "or_fallback", "degraded_message"]

log = logging.getLogger(__name__)

T = TypeVar("T")
Notify = Callable[[str], None]


def degraded_message(exc: InvalidModelOutput, outcome: str, notify: Notify | None) -> str:
    """Log and announce that a stage degraded; return the message."""
    message = f"{exc}; {outcome}"
    if notify is None:
        log.warning("%s", message)
    else:  # the caller shows it; a log line at warning level would print it twice
        log.info("%s", message)
        notify(message)
    return message


async def or_fallback(call: Awaitable[T], fallback: Callable[[], T], *, outcome: str, notify: Notify | None) -> T:
    """``await call``; when its answers never validated, ``fallback()`` (announced)."""
    try:
        return await call
    except InvalidModelOutput as exc:
        degraded_message(exc, outcome, notify)
        return fallback()
