"""Run slots: at most so many research runs at once in one front end; one more is refused, never queued.

A front end (the MCP server, the web workbench) answers several callers on one event loop;
each run holds a slot while it works. A caller that finds every slot taken gets
:class:`Busy` at once, with the limit in its message, and tries again later.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from ..errors import Busy

__all__ = ["Busy", "RunSlots"]


class RunSlots:
    """At most ``limit`` research runs at once; one more is refused at once with :class:`Busy`.

    Callers run on one event loop, so the check and the count are one step: no lock needed.
    ``flag`` names the option that sets the limit, for the message.
    """

    def __init__(self, limit: int, *, flag: str = "--max-runs") -> None:
        self.limit = limit
        self.active = 0
        self.flag = flag

    @property
    def free(self) -> int:
        """Slots not taken now."""
        return max(0, self.limit - self.active)

    @contextmanager
    def take(self, wanted: int = 1) -> Iterator[int]:
        """Hold up to ``wanted`` slots for the block (as many as are free, at least one) and give
        how many were taken; Busy when none is free."""
        if self.active >= self.limit:
            raise Busy(
                f"busy: {self.active} research run(s) already in progress, the most this server takes "
                f"({self.flag} {self.limit}); try again when one has finished"
            )
        taken = max(1, min(wanted, self.free))
        self.active += taken
        try:
            yield taken
        finally:
            self.active -= taken
