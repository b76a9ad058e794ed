"""A run's progress as MCP progress notifications, one per stage and note, each with a total;
while the writer streams, one per ``STREAM_STEP`` tokens (and one when its stream ends) with the
token count and rate, as the CLI's progress line shows them.

The events and their numbers come from :class:`~research_agent.service.events.EventLog` (the
stream every front end shares); this only sends them. A client that asked for no progress gets
none (the SDK drops them), and a failure to send never touches the run. The last notification
("done", at ``TOTAL``) comes once the run has finished; a failed run sends none.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

from ..service.events import STEPS, TOTAL, EndOutcome, EventLog

__all__ = ["NotifyingProgress", "Send", "STEPS", "TOTAL"]

log = logging.getLogger(__name__)

Send = Callable[[float, float, str], Awaitable[None]]  # (progress, total, message) -> sent


class NotifyingProgress(EventLog):
    """An EventLog whose stages, notes and streamed counts :meth:`forwarding` sends as notifications."""

    @asynccontextmanager
    async def forwarding(self, send: Send) -> AsyncIterator[NotifyingProgress]:
        """Send what the block reports, in order; what is queued when it ends is still sent, and
        when the block finished without an error, a last "done" at the total."""
        forwarder = asyncio.ensure_future(self._forward(send))
        outcome: EndOutcome = "failed"
        try:
            yield self
            outcome = "done"
        except asyncio.CancelledError:
            outcome = "cancelled"
            raise
        finally:
            self.end(outcome)
            try:
                await forwarder
            except asyncio.CancelledError:
                forwarder.cancel()
                raise

    async def _forward(self, send: Send) -> None:
        async for event in self.follow():
            if event.kind == "counts" or (event.kind == "end" and event.outcome != "done"):
                continue
            try:
                await send(event.place, TOTAL, "done" if event.kind == "end" else event.message)
            except Exception as exc:  # the client went away, or its stream closed: the run goes on
                log.debug("progress notification not sent: %s", exc)
