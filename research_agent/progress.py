"""Where a run says what it is doing: the Progress protocol, the clock of its stages, and
the token count of a streamed answer (:class:`TokenMeter`, shown by :func:`stream_text`)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Protocol

__all__ = ["Progress", "NoProgress", "StageClock", "TokenMeter", "stream_text"]

log = logging.getLogger(__name__)


class Progress(Protocol):
    """Where a run reports what it is doing. The CLI draws it with rich.

    ``counts`` carries running numbers by name: ``sub_queries``, ``found``, ``scored``,
    ``kept``, ``tokens``, ``waiting`` (seconds the oldest model call has waited), and while
    the writer streams, ``streamed`` (tokens so far; 0 when the stream ended) with
    ``streamed_ms`` (milliseconds since its first token), and ``reading`` (1 from the moment a
    writer's request is sent until its first token: the server is reading the prompt); after the
    skeptic, ``findings``, ``findings_critical`` and ``viability`` (when it gave one), and the claim
    check's ``claims_cited``, ``claims_checked``, ``claims_supported``, ``claims_partial`` and
    ``claims_unsupported`` (the verdicts only when the check was made).

    A progress that shows the writer's text as it comes (the web workbench's) also has
    ``streamed_text(piece, *, new=False)``; :class:`TokenMeter` gives it each piece when it has one.
    """

    def stage(self, name: str, detail: str = "") -> None: ...

    def counts(self, **values: int) -> None: ...

    def note(self, message: str) -> None: ...


class NoProgress:
    """A Progress that shows nothing (library use without a display)."""

    def stage(self, name: str, detail: str = "") -> None:
        return None

    def counts(self, **values: int) -> None:
        return None

    def note(self, message: str) -> None:
        return None


class StageClock:
    """Stage timings, and the name of the stage in progress (for deadline messages)."""

    def __init__(self, progress: Progress) -> None:
        self.timings: dict[str, float] = {}
        self.current = "starting"
        self.progress = progress

    @contextmanager
    def stage(self, name: str, detail: str = "") -> Iterator[None]:
        """Announce stage ``name`` and add the time spent in the block to its timing."""
        self.current = name
        self.progress.stage(name, detail)
        start = time.perf_counter()
        try:
            yield
        finally:
            spent = time.perf_counter() - start
            self.timings[name] = self.timings.get(name, 0.0) + spent
            log.debug("stage %s took %.2f s", name, spent)


def stream_text(tokens: int, milliseconds: int) -> str:
    """A streamed answer's progress, e.g. ``812 tokens, 9.6 tok/s`` (no rate before a second has passed)."""
    if tokens <= 0:
        return ""
    if milliseconds < 1000:
        return f"{tokens} tokens"
    return f"{tokens} tokens, {tokens * 1000 / milliseconds:.1f} tok/s"


class TokenMeter:
    """Hears a stream's running token count and puts it on ``progress`` as ``streamed`` and
    ``streamed_ms`` (time from the first token, on the clock ``now``); a count of 0 (a request
    sent, nothing come yet) as ``reading`` 1 until the first token. :meth:`finish` puts
    ``streamed`` back to 0; :attr:`rate` is the last rate seen (tokens per second). The text itself
    goes to the progress's ``streamed_text`` when it has one (``new`` where an answer begins)."""

    def __init__(self, progress: Progress, now: Callable[[], float]) -> None:
        self._progress = progress
        self._text: Callable[..., None] | None = getattr(progress, "streamed_text", None)
        self._now = now
        self._first: float | None = None
        self._reading = False
        self.tokens = 0
        self.milliseconds = 0

    def __call__(self, tokens: int, piece: str = "") -> None:
        now = self._now()
        if tokens <= 0:  # a request was sent: the server reads the prompt
            self._first, self.tokens, self._reading = None, 0, True
            self._progress.counts(streamed=0, reading=1)
            if self._text is not None:
                self._text("", new=True)
            return
        new = self._first is None or (tokens < self.tokens and bool(piece))
        if new:  # a new stream (the writer asked again)
            self._first = now
        assert self._first is not None  # set above if it was not
        if self._text is not None and piece:
            self._text(piece, new=new)
        self.tokens, self.milliseconds = tokens, int((now - self._first) * 1000)
        read = {"reading": 0} if self._reading else {}
        self._reading = False
        self._progress.counts(streamed=tokens, streamed_ms=self.milliseconds, **read)

    @property
    def rate(self) -> float | None:
        return self.tokens * 1000 / self.milliseconds if self.milliseconds > 0 else None

    def finish(self) -> None:
        """The stream is over (a retry starts counting afresh)."""
        if self._first is not None:
            self._progress.counts(streamed=0, streamed_ms=self.milliseconds)
        if self._reading:
            self._progress.counts(reading=0)
        self._first, self._reading = None, False
