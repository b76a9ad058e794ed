"""The trial ledger as a file: ``reports/meta/trials.jsonl``, one signed JSON line per row or event.

Lines are only ever appended (``O_APPEND``, under an exclusive ``flock`` on the file itself,
fsynced), so concurrent runs and critique workers never lose each other's rows and a crash
leaves at most one torn last line, which reading skips (the next append starts on a line of
its own). Three kinds of line: a run's row, an event (a decision, a reinstatement), and a built
lesson's text as a run was first given it in its trial (:mod:`.texts`). A run's latest row wins: a grade, or a critique made after a grade, is recorded by
appending the run's row again, amended. Retention never touches this file; only ``memory
ledger --clear`` deletes it.

Each line carries a MAC keyed by the user's secret key (:mod:`..index.sign`, the key that signs
the summary index's rows, kept in the user state folder outside ``reports/``): a line whose MAC
does not check (planted, edited, or written under another user's key) is ignored and counted
in :attr:`TrialLedger.refused`, so a planted line can neither add evidence, retire a lesson nor
reinstate one. Without the user's key (no state folder) the ledger lives in memory only.

A ledger file that is not a regular file (a symlink, a FIFO) is left alone: the ledger then
lives in memory, and :attr:`TrialLedger.problem` says why.
"""

from __future__ import annotations

import fcntl
import json
import os
import stat
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from ....errors import StorageError
from ....files.atomic import file_kind
from ....files.safefile import UnsafeFile, read_text_capped
from ..index.sign import RowSigner
from .events import TrialEvent, event_from_json
from .rows import TrialRow, row_from_json
from .texts import LessonText, text_from_json

__all__ = ["LEDGER_NAME", "MAX_LEDGER_BYTES", "TrialLedger"]

LEDGER_NAME = "trials.jsonl"
MAX_LEDGER_BYTES = 512 * 1024 * 1024  # about a million runs
_TABLE = "trials"
Item = TrialRow | TrialEvent | LessonText
_KINDS: dict[type, str] = {TrialRow: "row", TrialEvent: "event", LessonText: "lesson"}


def _canonical(payload: dict[str, Any]) -> str:
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


class TrialLedger:
    """The rows (one per run: its latest) and events of one ledger, as read, and the way to add
    to it. Open it with :meth:`open`."""

    def __init__(self, path: Path | None, signer: RowSigner, *, problem: str = "") -> None:
        self.path = path  # None: in memory only
        self.problem = problem  # why a ledger file there is not used ('' when it is, or none is kept)
        self._signer = signer
        self.rows: dict[str, TrialRow] = {}
        self.events: list[TrialEvent] = []
        self.texts: dict[tuple[str, str], LessonText] = {}  # (domain, key) -> the latest text recorded
        self.refused = 0  # lines that are not this user's tool's (bad MAC, torn, not a row or event)
        self.lines = 0
        self.size = 0
        self._ordered: dict[str | None, list[TrialRow]] = {}

    @classmethod
    def open(cls, meta_dir: Path, key: bytes | None) -> TrialLedger:
        """The ledger of ``meta_dir`` as it stands, checked line by line; in memory without ``key``."""
        if key is None:
            return cls(None, RowSigner(None))
        path = Path(meta_dir) / LEDGER_NAME
        try:
            os.lstat(path)
            text = read_text_capped(path, max_bytes=MAX_LEDGER_BYTES, inside=Path(meta_dir), errors="replace")
        except FileNotFoundError:
            return cls(path, RowSigner(key))
        except (UnsafeFile, OSError) as exc:
            return cls(None, RowSigner(None), problem=f"{path} is not used: {exc}")
        ledger = cls(path, RowSigner(key))
        ledger.size = len(text.encode("utf-8", "surrogatepass"))
        ledger._take_lines(text.splitlines())
        return ledger

    @property
    def on_disk(self) -> bool:
        return self.path is not None

    def _take_lines(self, lines: Iterable[str]) -> None:
        for line in lines:
            if not line.strip():
                continue
            self.lines += 1
            try:
                data = json.loads(line)
                kind = next((k for k in _READERS if k in data), "event")
                payload, mac = data[kind], data["mac"]
                if not isinstance(payload, dict) or not isinstance(mac, str):
                    raise ValueError("not a line of the ledger")
                if self._signer.sign(_TABLE, (kind, _canonical(payload))).hex() != mac:
                    raise ValueError("its MAC does not check")
                self._keep(_READERS[kind](payload))
            except (ValueError, TypeError, KeyError, AttributeError):
                self.refused += 1

    def _keep(self, item: Item) -> None:
        if isinstance(item, LessonText):
            self.texts[(item.domain, item.key)] = item
            return
        if not isinstance(item, TrialRow):
            self.events.append(item)
            return
        old = self.rows.get(item.run)
        row = self.rows[item.run] = item if old is None else old.with_outcome_of(item)
        for domain in (None, row.domain):  # a new newest run extends the orders kept; anything else resets them
            found = self._ordered.get(domain)
            if found is not None and old is None and (not found or (found[-1].stamp, found[-1].run) <= (row.stamp, row.run)):
                found.append(row)
            else:
                self._ordered.pop(domain, None)

    def _line(self, item: Item) -> str:
        kind = _KINDS[type(item)]
        payload = item.as_json()
        mac = self._signer.sign(_TABLE, (kind, _canonical(payload))).hex()
        return _canonical({kind: payload, "mac": mac}) + "\n"

    def add(self, items: Sequence[Item]) -> None:
        """Append ``items`` (rows, events, lesson texts) and keep them; a row keeps the grade its run had
        where it brings none. StorageError when the file cannot be written (they are kept in
        memory all the same)."""
        if not items:
            return
        kept = []
        for item in items:
            old = self.rows.get(item.run) if isinstance(item, TrialRow) else None
            kept.append(item if old is None or not isinstance(item, TrialRow) else old.with_outcome_of(item))
        try:
            if self.path is not None:
                _append(self.path, "".join(self._line(item) for item in kept))
        finally:  # kept for this look even when the file could not take them
            for item in kept:
                self._keep(item)

    def clear(self) -> None:
        """Delete the ledger file (``memory ledger --clear``) and forget every row and event."""
        if self.path is not None:
            try:
                os.unlink(self.path)
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise StorageError(f"cannot remove {self.path}: {exc.strerror or exc}") from None
        self.rows.clear()
        self.events.clear()
        self.texts.clear()
        self._ordered.clear()
        self.refused = self.lines = self.size = 0

    def ordered(self, domain: str | None = None) -> list[TrialRow]:
        """The rows (of ``domain``, or all), oldest run first."""
        found = self._ordered.get(domain)
        if found is None:
            rows = (row for row in self.rows.values() if domain is None or row.domain == domain)
            found = self._ordered[domain] = sorted(rows, key=lambda row: (row.stamp, row.run))
        return found

    def numbers(self, domain: str) -> dict[str, int]:
        """Each run of ``domain`` and its number there (1 for the domain's first run in the ledger)."""
        return {row.run: n for n, row in enumerate(self.ordered(domain), start=1)}

    def domains(self) -> dict[str, int]:
        """Runs per domain."""
        counts: dict[str, int] = defaultdict(int)
        for row in self.rows.values():
            counts[row.domain] += 1
        return dict(sorted(counts.items()))


_READERS: dict[str, Callable[[Any], Item]] = {"row": row_from_json, "lesson": text_from_json, "event": event_from_json}


def _append(path: Path, text: str) -> None:
    """Append ``text`` to ``path`` under an exclusive lock on it, starting on a line of its own."""
    flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        raise StorageError(f"cannot write {path}: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise StorageError(f"cannot write {path}: it is {file_kind(info.st_mode)}, not a regular file")
        fcntl.flock(fd, fcntl.LOCK_EX)
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            text = "\n" + text  # a torn last line stays a line of its own (and is skipped when read)
        data = text.encode("utf-8", "surrogatepass")
        while data:
            written = os.write(fd, data)
            data = data[written:]
        os.fsync(fd)
    except OSError as exc:
        raise StorageError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)  # closing releases the lock
