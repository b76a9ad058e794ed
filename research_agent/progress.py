"""Where a run says what it is doing: the Progress protocol, and the clock of its stages."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

__all__ = ["Progress", "NoProgress", "StageClock"]

log = logging.getLogger(__name__)


class Progress(Protocol):
    """Where a run reports what it is doing. The CLI draws it with rich."""

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
