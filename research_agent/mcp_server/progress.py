"""A run's progress as MCP progress notifications, one per stage and note, and while the
writer streams, one per ``STREAM_STEP`` tokens (and one when its stream ends) with the
token count and rate, as the CLI's progress line shows them.

The pipeline reports through a plain, synchronous :class:`~research_agent.progress.Progress`,
sometimes from a worker thread (corpus indexing). :class:`NotifyingProgress` only queues
each line, thread-safely, on the server's event loop; one forwarder task sends them in
order with increasing progress numbers. A client that asked for no progress gets none
(the SDK drops them), and a failure to send never touches the run.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

from ..progress import stream_text

__all__ = ["NotifyingProgress", "Send"]

log = logging.getLogger(__name__)

Send = Callable[[float, str], Awaitable[None]]  # (progress number, message) -> sent

_DONE = None
STREAM_STEP = 100  # tokens between two notifications of a streamed answer


class NotifyingProgress:
    """A Progress whose stages and notes become notifications sent by :meth:`forwarding`."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._queue: asyncio.Queue[str | None] = asyncio.Queue()
        self.counts_seen: dict[str, int] = {}
        self._stage = ""

    def stage(self, name: str, detail: str = "") -> None:
        self._stage = name
        self._push(f"{name}: {detail}" if detail else name)

    def counts(self, **values: int) -> None:
        """Kept; only a streamed answer's progress is sent (every STREAM_STEP tokens, and at its end),
        not the tick every second while the model works."""
        before = self.counts_seen.get("streamed", 0)
        self.counts_seen.update(values)
        if "streamed" not in values:
            return
        now, milliseconds = values["streamed"], self.counts_seen.get("streamed_ms", 0)
        if now == 0 and before > 0:
            self._push(f"{self._stage}: {stream_text(before, milliseconds)}")
        elif now // STREAM_STEP > before // STREAM_STEP:
            self._push(f"{self._stage}: {stream_text(now, milliseconds)}")

    def note(self, message: str) -> None:
        self._push(f"note: {message}")

    def _push(self, message: str | None) -> None:
        self._loop.call_soon_threadsafe(self._queue.put_nowait, message)

    @asynccontextmanager
    async def forwarding(self, send: Send) -> AsyncIterator[NotifyingProgress]:
        """Send what the block reports, in order; what is queued when it ends is still sent."""
        forwarder = asyncio.ensure_future(self._forward(send))
        try:
            yield self
        finally:
            self._push(_DONE)
            try:
                await forwarder
            except asyncio.CancelledError:
                forwarder.cancel()
                raise

    async def _forward(self, send: Send) -> None:
        number = 0
        while (message := await self._queue.get()) is not _DONE:
            number += 1
            try:
                await send(number, message)
            except Exception as exc:  # the client went away, or its stream closed: the run goes on
                log.debug("progress notification not sent: %s", exc)
