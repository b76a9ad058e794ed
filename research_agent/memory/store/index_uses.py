"""Sums over the index's use rows, made in Python from rows whose MACs were checked.

SQL could sum the rows itself, but then nothing would check them: the effects queries of
:class:`~research_agent.memory.store.index.CritiqueIndex` fetch the rows they need, check each
row's MAC, and hand the good ones here.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from .index_rows import ARMS, MAX_VALUE

__all__ = ["arm_sums_of", "newest_texts_of", "ArmSum"]

# (domain, key, arm, count, sum, sum of squares) of one key's target in one arm
ArmSum = tuple[str, str, str, int, float, float]
# a use row as read (USE_READ in .index_db): name, key, arm, stage, text, value, mac, domain, stamp, created
UseValues = Sequence[object]


def arm_sums_of(rows: Iterable[UseValues]) -> list[ArmSum]:
    """``(domain, key, arm, count, sum, sum of squares)`` of the rows' values per domain, key
    and arm; a row whose target does not apply (value None) counts for nothing, and a value
    beyond :data:`MAX_VALUE` leaves its row out."""
    values: dict[tuple[object, object, object], list[float]] = {}
    for _name, key, arm, _stage, _text, value, _mac, domain, _stamp, _created in rows:
        if value is not None and not (isinstance(value, int | float) and abs(value) <= MAX_VALUE):
            continue
        group = values.get((domain, key, arm))
        if group is None:
            if arm not in ARMS:
                continue
            group = values[(domain, key, arm)] = []
        if value is not None:
            group.append(float(value))
    return [
        (str(domain), str(key), str(arm), len(found), math.fsum(found), math.fsum(v * v for v in found))
        for (domain, key, arm), found in values.items()
    ]


def newest_texts_of(rows: Iterable[UseValues]) -> dict[tuple[str, str], str]:
    """``(domain, key) -> text`` of the newest row that applied each key with a text."""
    newest: dict[tuple[str, str], tuple[str, str]] = {}
    for _name, key, arm, _stage, text, _value, _mac, domain, stamp, _created in rows:
        if arm != "applied" or not text:
            continue
        where = (str(domain), str(key))
        if where not in newest or str(stamp) > newest[where][0]:
            newest[where] = (str(stamp), str(text))
    return {where: text for where, (_, text) in newest.items()}
