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
* ``text``   the writer's text as it streams (a draft, a revision), for followers that ask for it:
  ``message`` is the new piece and ``counts["at"]`` where it starts in the answer (0: a new answer
  begins); never kept in the history, which keeps the answer so far instead (:attr:`EventLog.draft`,
  at most :data:`MAX_DRAFT_CHARS`), until the run ends
* ``end``    the run is over: ``outcome`` is ``done``, ``failed`` or ``cancelled``

Every event carries ``place``: how far the run is, out of :data:`TOTAL`. A stage's place is
its position in :data:`STEPS`; a note, a repeated stage, a streamed answer's count, a replan
or a revision (which go back to an earlier stage) only creep towards the next step's place:
the number always grows and never passes ``TOTAL``, which only a run that ended ``done`` reaches.

:meth:`EventLog.follow` gives the events so far (at most :data:`HISTORY` of them, the last
counts included; with ``text``, the answer streamed so far as one ``text`` event) and then every
new one until the end, so a page reloaded mid-run, or opened after it ended, shows the same story.
:class:`Followers` hands what a feed says to each of its followers' streams; the batch's feed
(:mod:`research_agent.web.batches.board`) uses it too.
"""

from __future__ import annotations

import asyncio
import collections
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from ..progress import stream_text

__all__ = ["RunEvent", "EventLog", "Followers", "EndOutcome", "STEPS", "TOTAL", "STREAM_STEP", "HISTORY", "MAX_DRAFT_CHARS"]

STEPS = ("index", "decompose", "search", "fetch", "relevance", "draft", "skeptic", "revise", "report", "write")
TOTAL = float(len(STEPS) + 1)  # the last step is the end of a run that is done
STREAM_STEP = 100  # tokens between two events of a streamed answer
HISTORY = 500  # events kept for a follower that comes late (the newest)
MAX_DRAFT_CHARS = 200_000  # of a streamed answer kept for a follower that comes late (the writer's own cap is lower)

Kind = Literal["stage", "note", "stream", "counts", "text", "end"]
EndOutcome = Literal["done", "failed", "cancelled"]


T = TypeVar("T")


class Followers(Generic[T]):
    """The streams of a feed's followers, on the feed's event loop: what is sent reaches every
    follower still reading (an ``aside`` only those that asked for asides); :meth:`close` ends them all."""

    def __init__(self) -> None:
        self._queues: dict[asyncio.Queue[T | None], bool] = {}  # each follower's queue: whether it takes asides

    def follow(self, so_far: list[T], *, ended: bool = False, asides: bool = False) -> AsyncIterator[T]:
        """A new follower's stream: ``so_far``, then each item sent until :meth:`close`; registered
        at once, so nothing sent after this call is missed. ``ended``: nothing more will come."""
        queue: asyncio.Queue[T | None] = asyncio.Queue()
        for item in so_far:
            queue.put_nowait(item)
        if ended:
            queue.put_nowait(None)
        else:
            self._queues[queue] = asides
        return self._drain(queue)

    def send(self, item: T, *, aside: bool = False) -> None:
        for queue, asides in self._queues.items():
            if asides or not aside:
                queue.put_nowait(item)

    def close(self) -> None:
        """Every follower's stream ends after what it was sent; later followers are told nothing more."""
        for queue in self._queues:
            queue.put_nowait(None)
        self._queues.clear()

    async def _drain(self, queue: asyncio.Queue[T | None]) -> AsyncIterator[T]:
        try:
            while (item := await queue.get()) is not None:
                yield item
        finally:
            self._queues.pop(queue, None)


@dataclass(frozen=True)
class RunEvent:
    """One thing a run said. ``message`` is one line for a person; ``stage`` the stage in progress."""

    kind: Kind
    message: str
    stage: str = ""
    place: float = 0.0
    counts: Mapping[str, int] = field(default_factory=dict)
    outcome: EndOutcome | Literal[""] = ""  # set for "end"
    at: float = 0.0  # time.time() when it happened


class EventLog:
    """A Progress whose calls become :class:`RunEvent` s on ``loop``, kept and sent to followers."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._history: collections.deque[RunEvent] = collections.deque(maxlen=HISTORY)
        self._followers: Followers[RunEvent] = Followers()  # the text events are asides
        self._draft: list[str] = []
        self._draft_chars = 0
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

    def streamed_text(self, piece: str, *, new: bool = False) -> None:
        """The writer's next ``piece`` of text (``new``: a new answer begins with it); see
        :class:`~research_agent.progress.TokenMeter`."""
        self._push(self._on_text, piece, new)

    def end(self, outcome: EndOutcome, message: str = "") -> None:
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
    def draft(self) -> str:
        """The answer streamed so far ("" when none, or once the run ended)."""
        return "".join(self._draft)

    @property
    def history(self) -> tuple[RunEvent, ...]:
        """The events kept so far, oldest first (counts not among them)."""
        return tuple(self._history)

    def follow(self, *, text: bool = False) -> AsyncIterator[RunEvent]:
        """The events so far, then each new one, until the end event (included); ``text``: the
        writer's streamed text too. The follower is registered at once, so nothing said after this
        call is missed."""
        so_far = list(self._history)
        if self._last_counts is not None:  # the numbers as they stood, before the end if it came
            so_far.insert(len(so_far) - (self.ended is not None), self._last_counts)
        if text and self._draft and self.ended is None:
            so_far.append(self._text_event("".join(self._draft), 0))
        return self._followers.follow(so_far, ended=self.ended is not None, asides=text)

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

    def _on_text(self, piece: str, new: bool) -> None:
        if self.ended is not None:
            return
        if new:
            self._draft.clear()
            self._draft_chars = 0
        piece = piece[: max(0, MAX_DRAFT_CHARS - self._draft_chars)]
        if not piece and not new:
            return
        event = self._text_event(piece, self._draft_chars)
        self._draft.append(piece)
        self._draft_chars += len(piece)
        self._followers.send(event, aside=True)

    def _text_event(self, piece: str, at: int) -> RunEvent:
        return RunEvent("text", piece, self._stage, self._place(), {"at": at}, at=time.time())

    def _on_end(self, outcome: EndOutcome, message: str) -> None:
        if self.ended is not None:
            return
        self._draft.clear()  # the report is what counts now (or nothing, for a run that did not end done)
        place = TOTAL if outcome == "done" else self._place()
        self._publish("end", message or outcome, place, outcome=outcome)
        self._followers.close()

    def _publish(self, kind: Kind, message: str, place: float, **more: Any) -> None:
        event = RunEvent(kind, message, self._stage, place, at=time.time(), **more)
        if kind == "counts":
            self._last_counts = event
        else:
            self._history.append(event)
        if kind == "end":
            self.ended = event
        self._followers.send(event)

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
