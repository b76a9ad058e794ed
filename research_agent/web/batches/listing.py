"""The batches of the reports folder as the list shows them, each state file read again only when
it changed; whether a process runs one is asked of its lock on every look (a batch this server
runs is shown from its live state, which is ahead of the file)."""

from __future__ import annotations

import threading
from pathlib import Path

from ...batch.start import BatchListing, listing_of, running_now
from ...batch.state import BatchState, batch_ids, state_path
from ...errors import InputError
from ...text.controls import one_line
from .board import BatchBoard

__all__ = ["BatchRows", "MAX_LISTED"]

MAX_LISTED = 100


class BatchRows:
    """The newest batches of a reports folder's ``meta/``, read again only when a state file changed."""

    def __init__(self, meta_dir: Path) -> None:
        self.meta_dir = Path(meta_dir)
        self._kept: dict[str, tuple[tuple[int, int], BatchState | str]] = {}
        self._lock = threading.Lock()

    def rows(self, board: BatchBoard, limit: int = MAX_LISTED) -> list[BatchListing]:
        """The newest ``limit`` batches (blocking: call it in a thread)."""
        wanted = batch_ids(self.meta_dir)[:limit]
        listed = []
        for batch_id in wanted:
            job = board.get(batch_id)
            if job is not None and job.outcome == "running":
                listed.append(listing_of(job.batch.state, True))
                continue
            state = self._state(batch_id)
            if isinstance(state, str):
                listed.append(BatchListing(batch_id, problem=state))
            else:
                listed.append(listing_of(state, running_now(self.meta_dir, batch_id)))
        with self._lock:
            for gone in set(self._kept) - set(wanted):
                del self._kept[gone]
        return listed

    def _state(self, batch_id: str) -> BatchState | str:
        """The batch's state as its file holds it now, or why it cannot be read."""
        try:
            stat = state_path(self.meta_dir, batch_id).lstat()
            version = (stat.st_mtime_ns, stat.st_size)
        except OSError:
            version = (0, -1)
        with self._lock:
            kept = self._kept.get(batch_id)
        if kept is not None and kept[0] == version:
            return kept[1]
        try:
            state: BatchState | str = BatchState.load(self.meta_dir, batch_id)
        except InputError as exc:
            state = one_line(exc)
        with self._lock:
            self._kept[batch_id] = (version, state)
        return state
