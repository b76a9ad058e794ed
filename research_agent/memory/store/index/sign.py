"""Signing the summary index's rows: the index is a cache, never an authority.

The index lives in ``reports/meta``, where whoever planted a critique can also edit a row.
A row's stat signature does not stop that (the forger edits the row, not the file), and
neither would a content hash. So every row carries a MAC over its values, keyed by the
user's secret key (:func:`research_agent.files.state.secret_key`, kept in the user state
folder outside ``reports/``): a row whose MAC does not match was not written by this user's
tool from the file it names, and is rebuilt from that file (:mod:`.summary`).

The MAC is keyed BLAKE2b (a MAC by design, like HMAC, and about twice as fast on rows this
short), personalised per table so that a row of one table never passes for another's. It
covers a row's values as SQLite hands them back (``stored()`` of :mod:`.rows`), so the
same row read back checks. An index built in memory is signed with a key of its own.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Sequence
from typing import Any

__all__ = ["RowSigner", "MAC_BYTES"]

MAC_BYTES = 16


class RowSigner:
    """Signs and checks rows with one secret ``key`` (None: a fresh random key, for an index
    that lives in memory only)."""

    def __init__(self, key: bytes | None) -> None:
        self._key = key if key is not None else secrets.token_bytes(32)
        self._keyed: dict[str, Any] = {}  # a hasher per table with the key already taken in

    def _hasher(self, table: str) -> Any:
        keyed = self._keyed.get(table)
        if keyed is None:
            keyed = hashlib.blake2b(key=self._key, digest_size=MAC_BYTES, person=table.encode())
            self._keyed[table] = keyed
        return keyed.copy()

    def sign(self, table: str, values: Sequence[object]) -> bytes:
        """The MAC of ``values`` (a row as stored, without its MAC) in ``table``."""
        hasher = self._hasher(table)
        hasher.update(repr(tuple(values)).encode("utf-8", "surrogatepass"))
        return hasher.digest()

    def check(self, table: str, row: Sequence[object], width: int) -> bool:
        """Whether ``row`` (as read back: its ``width`` signed values, then their MAC)
        carries the MAC of those values."""
        mac = row[width]
        return isinstance(mac, bytes) and hmac.compare_digest(self.sign(table, row[:width]), mac)

    def good(self, table: str, rows: list[Any], width: int) -> tuple[list[Any], list[Any]]:
        """``rows`` (as read back: ``width`` signed values, their MAC, then anything else)
        split into those whose MAC checks and those that do not. Every read of the index
        pays for this loop, so it is kept tight."""
        keyed = self._hasher(table).copy
        good: list[Any] = []
        bad: list[Any] = []
        for row in rows:
            hasher = keyed()
            hasher.update(repr(row[:width]).encode("utf-8", "surrogatepass"))
            (good if hasher.digest() == row[width] else bad).append(row)
        return good, bad
