"""The critiques a lesson may be built from: for each lesson key, the newest ones in which its
run was *not* given that lesson.

A lesson that works removes the weakness it was built from, in the runs that get it; a lesson
that harms creates its own failures there. Either way, runs that were given a lesson say
nothing about whether it is needed, so they never count toward building it or toward the
numbers in its text (:meth:`EvidencePool.for_key`). The pool holds more critiques than one
lesson's window (``limit``), so that a lesson given in most recent runs still finds its
``limit`` runs without it.

Hysteresis (:meth:`EvidencePool.need`): a lesson is built when ``k`` of its critiques show
the weakness (:func:`.evidence.need`), and once built (eligible in the newest run that
recorded lessons) it stays until the count falls to ``k - 2`` or below, so a count that
wobbles at the threshold does not switch it on and off from run to run.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ...store.critique_types import Critique
from .evidence import need

__all__ = ["EvidencePool", "POOL_FACTOR"]

POOL_FACTOR = 3  # the pool holds this many times a lesson's window


@dataclass(frozen=True)
class EvidencePool:
    """Eligible critiques newest first, each lesson's window size, and the keys that were on."""

    critiques: tuple[Critique, ...]
    limit: int = 10
    on: frozenset[str] = frozenset()
    _given: tuple[frozenset[str], ...] = field(default=(), init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_given", tuple(c.given_keys() for c in self.critiques))

    @classmethod
    def of(cls, critiques: Iterable[Critique], *, limit: int = 10, on: Iterable[str] = ()) -> EvidencePool:
        """The pool of ``critiques``, but those an eval held out (``eval --holdout``: its measured
        half is graded, never learned from)."""
        return cls(tuple(c for c in critiques if c.held_out is None), limit, frozenset(on))

    def for_key(self, key: str) -> list[Critique]:
        """The newest ``limit`` critiques whose run was not given ``key``."""
        out = [c for c, given in zip(self.critiques, self._given, strict=True) if key not in given]
        return out[: self.limit]

    def need(self, key: str, n: int) -> int:
        """How many of ``n`` critiques must show ``key``'s weakness for it to be built now."""
        k = need(n)
        return max(1, k - 1) if key in self.on else k

    @property
    def ids(self) -> tuple[str, ...]:
        """The ids of every critique in the pool that some lesson's window holds."""
        keys = {key for given in self._given for key in given}
        chosen = {c.id for key in keys for c in self.for_key(key)}
        chosen |= {c.id for c in self.critiques[: self.limit]}
        return tuple(c.id for c in self.critiques if c.id in chosen)

