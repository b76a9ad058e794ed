"""A run's progress as MCP progress notifications, one per stage and note, each with a total;
while the writer streams, one per ``STREAM_STEP`` tokens (and one when its stream ends) with the
token count and rate, as the CLI's progress line shows them.

The pipeline reports through a plain, synchronous :class:`~research_agent.progress.Progress`,
sometimes from a worker thread (corpus indexing). :class:`NotifyingProgress` only queues
each line, thread-safely, on the server's event loop; one forwarder task sends them in
order. A client that asked for no progress gets none (the SDK drops them), and a failure to
send never touches the run.

The progress number is the stage's place in a run (:data:`STEPS`: indexing, decompose,
search, fetch, relevance, draft, skeptic, revise, report, write) out of ``TOTAL``; a note, a
repeated stage, a streamed answer's count, a replan or a revision (which go back to an earlier stage) only creep towards
the next step's place: the number always grows and never passes ``TOTAL``, which the last
notification ("done") reaches once the run has finished.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

from ..progress import stream_text

__all__ = ["NotifyingProgress", "Send", "STEPS", "TOTAL"]

log = logging.getLogger(__name__)

Send = Callable[[float, float, str], Awaitable[None]]  # (progress, total, message) -> sent

STEPS = ("index", "decompose", "search", "fetch", "relevance", "draft", "skeptic", "revise", "report", "write")
TOTAL = float(len(STEPS) + 1)  # the last step is "done"

_DONE = None
STREAM_STEP = 100  # tokens between two notifications of a streamed answer


class NotifyingProgress:
    """A Progress whose stages and notes become notifications sent by :meth:`forwarding`."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._queue: asyncio.Queue[tuple[str, str] | None] = asyncio.Queue()
        self.counts_seen: dict[str, int] = {}
        self._step = 0
        self._repeats = 0
        self._stage = ""

    def stage(self, name: str, detail: str = "") -> None:
        self._stage = name
        self._push((name, f"{name}: {detail}" if detail else name))

    def counts(self, **values: int) -> None:
        """Kept; only a streamed answer's progress is sent (every STREAM_STEP tokens, and at its end),
        not the tick every second while the model works."""
        before = self.counts_seen.get("streamed", 0)
        self.counts_seen.update(values)
        if "streamed" not in values:
            return
        now, milliseconds = values["streamed"], self.counts_seen.get("streamed_ms", 0)
        if now == 0 and before > 0:
            self._push(("", f"{self._stage}: {stream_text(before, milliseconds)}"))
        elif now // STREAM_STEP > before // STREAM_STEP:
            self._push(("", f"{self._stage}: {stream_text(now, milliseconds)}"))

    def note(self, message: str) -> None:
        self._push(("", f"note: {message}"))

    def _push(self, item: tuple[str, str] | None) -> None:
        self._loop.call_soon_threadsafe(self._queue.put_nowait, item)

    def _advance(self, stage: str) -> float:
        """The next progress number: the stage's place when that is further on, else a little more,
        never reaching the next step's place."""
        place = STEPS.index(stage) + 1 if stage in STEPS else 0
        if place > self._step:
            self._step, self._repeats = place, 0
        else:
            self._repeats += 1  # n/(n+1) grows with every repeat and stays below 1
        return self._step + self._repeats / (self._repeats + 1)

    @asynccontextmanager
    async def forwarding(self, send: Send) -> AsyncIterator[NotifyingProgress]:
        """Send what the block reports, in order; what is queued when it ends is still sent, and
        when the block finished without an error, a last "done" at the total."""
        forwarder = asyncio.ensure_future(self._forward(send))
        finished = False
        try:
            yield self
            finished = True
        finally:
            if finished:
                self._push(("", "done"))
            self._push(_DONE)
            try:
                await forwarder
            except asyncio.CancelledError:
                forwarder.cancel()
                raise

    async def _forward(self, send: Send) -> None:
        while (item := await self._queue.get()) is not _DONE:
            stage, message = item
            number = TOTAL if message == "done" and not stage else self._advance(stage)
            try:
                await send(number, TOTAL, message)
            except Exception as exc:  # the client went away, or its stream closed: the run goes on
                log.debug("progress notification not sent: %s", exc)
