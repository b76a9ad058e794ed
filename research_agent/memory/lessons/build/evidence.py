"""The evidence behind one lesson before it is written: its key, the critiques that show
it, and the validated values its template needs.

Builders (:mod:`.planning`, :mod:`.judging`) turn eligible critiques into
:class:`Evidence`; :mod:`.settle` merges and settles it; :mod:`.text` writes
the text. Slots hold only counts, shares and years (integers) and site names that passed
:func:`research_agent.memory.store.names.valid_site`: never critique free text.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ...store.critique_types import Critique

__all__ = ["Evidence", "Need", "need", "shown", "stamp_of_id"]

Slot = tuple[str, int | str]


def need(n: int, fraction: float = 1 / 3) -> int:
    """How many of ``n`` critiques must show a weakness before it becomes a lesson (at least 2)."""
    return max(2, math.ceil(n * fraction))


def stamp_of_id(run_id: str) -> str:
    """The sortable UTC time in a run id (``<slug>_<stamp>``)."""
    return run_id.rsplit("_", 1)[-1]


@dataclass(frozen=True)
class Evidence:
    """What shows a lesson: ``ids`` of the critiques behind it (newest first), the template's
    ``slots``, and a ``weight`` for ranking within its stage (higher first)."""

    key: str
    ids: tuple[str, ...]
    slots: tuple[Slot, ...]
    weight: float

    def slot(self, name: str) -> int | str:
        return dict(self.slots)[name]

    @property
    def newest(self) -> str:
        """The run time of the newest critique behind it (sortable text)."""
        return max(stamp_of_id(i) for i in self.ids)


Need = Callable[[int], int]  # n critiques counted -> how many must show a weakness


def shown(key: str, hits: Sequence[Critique], n: int, threshold: Need | None = None, **slots: int | str) -> list[Evidence]:
    """One piece of evidence for ``key`` when at least ``threshold(n)`` (default :func:`need`)
    of ``n`` critiques show it."""
    if n == 0 or len(hits) < (need if threshold is None else threshold)(n):
        return []
    ordered = sorted(hits, key=lambda c: stamp_of_id(c.id), reverse=True)
    values = tuple(sorted({**slots, "n": n}.items()))
    return [Evidence(key, tuple(c.id for c in ordered), values, len(hits) / n)]
