"""A run's progress as a stream of events, for any front end: MCP turns them into progress
notifications, a web page into server-sent events, the batch into its running questions' lines.

The pipeline reports through a plain, synchronous :class:`~research_agent.progress.Progress`,
sometimes from a worker thread (corpus indexing). :class:`EventLog` is such a Progress: each
call is handed, thread-safely, to the event loop the log was made on, and there becomes a
:class:`RunEvent` in order:

* ``stage``  a stage began (or said more): ``draft: 6 sources``
* ``note``   something the user should know: ``note: corpus docs: skipped 1 binary``
* ``stream`` a streamed answer's progress, every :data:`STREAM_STEP` tokens and once at its
  end: ``draft: 200 tokens, 10.0 tok/s``
* ``counts`` the running numbers (``found``, ``scored``, ``kept``, ``tokens``, ``waiting``...),
  all of those seen so far; frequent, so never kept in the history
* ``end``    the run is over: ``outcome`` is ``done``, ``failed`` or ``cancelled``

Every event carries ``place``: how far the run is, out of :data:`TOTAL`. A stage's place is
its position in :data:`STEPS`; a note, a repeated stage, a streamed answer's count, a replan
or a revision (which go back to an earlier stage) only creep towards the next step's place:
the number always grows and never passes ``TOTAL``, which only a run that ended ``done`` reaches.

:meth:`EventLog.follow` gives the events so far (at most :data:`HISTORY` of them, the last
counts included) and then every new one until the end, so a page reloaded mid-run, or opened
after it ended, shows the same story.
"""

from __future__ import annotations

import asyncio
import collections
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from ..progress import stream_text

__all__ = ["RunEvent", "EventLog", "STEPS", "TOTAL", "STREAM_STEP", "HISTORY"]

STEPS = ("index", "decompose", "search", "fetch", "relevance", "draft", "skeptic", "revise", "report", "write")
TOTAL = float(len(STEPS) + 1)  # the last step is the end of a run that is done
STREAM_STEP = 100  # tokens between two events of a streamed answer
HISTORY = 500  # events kept for a follower that comes late (the newest)

Kind = Literal["stage", "note", "stream", "counts", "end"]


@dataclass(frozen=True)
class RunEvent:
    """One thing a run said. ``message`` is one line for a person; ``stage`` the stage in progress."""

    kind: Kind
    message: str
    stage: str = ""
    place: float = 0.0
    counts: Mapping[str, int] = field(default_factory=dict)
    outcome: str = ""  # for "end": done, failed or cancelled
    at: float = 0.0  # time.time() when it happened


class EventLog:
    """A Progress whose calls become :class:`RunEvent` s on ``loop``, kept and sent to followers."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._history: collections.deque[RunEvent] = collections.deque(maxlen=HISTORY)
        self._followers: list[asyncio.Queue[RunEvent | None]] = []
        self.counts_seen: dict[str, int] = {}
        self._last_counts: RunEvent | None = None
        self._step = 0
        self._repeats = 0
        self._stage = ""
        self.ended: RunEvent | None = None

    # --- Progress (any thread) ------------------------------------------------------------

    def stage(self, name: str, detail: str = "") -> None:
        self._push(self._on_stage, name, detail)

    def counts(self, **values: int) -> None:
        self._push(self._on_counts, values)

    def note(self, message: str) -> None:
        self._push(self._on_note, message)

    def end(self, outcome: str, message: str = "") -> None:
        """The run is over (``done``, ``failed`` or ``cancelled``); followers get this last event."""
        self._push(self._on_end, outcome, message)

    def _push(self, handler: Callable[..., None], *args: object) -> None:
        self._loop.call_soon_threadsafe(handler, *args)

    # --- what a follower sees (the loop's thread) -----------------------------------------

    @property
    def current(self) -> str:
        """The latest stage or streamed line ("" before the first)."""
        for event in reversed(self._history):
            if event.kind in ("stage", "stream"):
                return event.message
        return ""

    @property
    def history(self) -> tuple[RunEvent, ...]:
        """The events kept so far, oldest first (counts not among them)."""
        return tuple(self._history)

    def follow(self) -> AsyncIterator[RunEvent]:
        """The events so far, then each new one, until the end event (included). The follower is
        registered at once, so nothing said after this call is missed."""
        queue: asyncio.Queue[RunEvent | None] = asyncio.Queue()
        so_far = list(self._history)
        if self._last_counts is not None:  # the numbers as they stood, before the end if it came
            so_far.insert(len(so_far) - (self.ended is not None), self._last_counts)
        for event in so_far:
            queue.put_nowait(event)
        if self.ended is not None:
            queue.put_nowait(None)
        else:
            self._followers.append(queue)
        return self._drain(queue)

    async def _drain(self, queue: asyncio.Queue[RunEvent | None]) -> AsyncIterator[RunEvent]:
        try:
            while (event := await queue.get()) is not None:
                yield event
        finally:
            if queue in self._followers:
                self._followers.remove(queue)

    # --- turning calls into events (the loop's thread, in order) --------------------------

    def _on_stage(self, name: str, detail: str) -> None:
        self._stage = name
        self._publish("stage", f"{name}: {detail}" if detail else name, self._advance(name))

    def _on_note(self, message: str) -> None:
        self._publish("note", f"note: {message}", self._advance(""))

    def _on_counts(self, values: dict[str, int]) -> None:
        before = self.counts_seen.get("streamed", 0)
        self.counts_seen.update(values)
        self._publish("counts", "", self._place(), counts=dict(self.counts_seen))
        if "streamed" not in values:
            return
        now, milliseconds = values["streamed"], self.counts_seen.get("streamed_ms", 0)
        if now == 0 and before > 0:  # the stream ended: its last count
            self._publish("stream", f"{self._stage}: {stream_text(before, milliseconds)}", self._advance(""))
        elif now // STREAM_STEP > before // STREAM_STEP:
            self._publish("stream", f"{self._stage}: {stream_text(now, milliseconds)}", self._advance(""))

    def _on_end(self, outcome: str, message: str) -> None:
        if self.ended is not None:
            return
        place = TOTAL if outcome == "done" else self._place()
        self._publish("end", message or outcome, place, outcome=outcome)
        for queue in self._followers:
            queue.put_nowait(None)
        self._followers.clear()

    def _publish(self, kind: Kind, message: str, place: float, **more: object) -> None:
        event = RunEvent(kind, message, self._stage, place, at=time.time(), **more)  # type: ignore[arg-type]
        if kind == "counts":
            self._last_counts = event
        else:
            self._history.append(event)
        if kind == "end":
            self.ended = event
        for queue in self._followers:
            queue.put_nowait(event)

    def _place(self) -> float:
        return self._step + self._repeats / (self._repeats + 1)

    def _advance(self, stage: str) -> float:
        """The next place: the stage's own when that is further on, else a little more, never
        reaching the next step's place."""
        place = STEPS.index(stage) + 1 if stage in STEPS else 0
        if place > self._step:
            self._step, self._repeats = place, 0
        else:
            self._repeats += 1  # n/(n+1) grows with every repeat and stays below 1
        return self._place()
