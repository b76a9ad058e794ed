"""Retention of the journal: the entries and checkpoints of done runs beyond the newest ``keep``.

A done run's checkpoints serve nothing once it is done but the resume it no longer needs; they go
with its other files (its passages, its critique) when retention prunes them: at the end of every
run (``max_critiques``) and with ``memory prune``. The entries of runs not done (running, failed,
cancelled, interrupted) are never pruned here: they are what a person resumes or looks into.
"""

from __future__ import annotations

from pathlib import Path

from .checkpoints import checkpoint_dir, remove_checkpoints
from .entries import entry_path, iter_ids, read_entry, remove_entry

__all__ = ["prune_journal"]


def prune_journal(meta_dir: Path, keep: int, *, protect: tuple[str, ...] = (), dry_run: bool = False) -> list[Path]:
    """Remove the entries (and checkpoint folders) of done runs beyond the newest ``keep`` runs of the
    journal (0 keeps all); return what was removed (with ``dry_run``, what would be, removing none)."""
    if keep <= 0:
        return []
    removed: list[Path] = []
    for run_id in list(iter_ids(meta_dir))[keep:]:
        entry = read_entry(meta_dir, run_id)
        if entry is None or entry.status != "done" or run_id in protect:
            continue
        folder = checkpoint_dir(meta_dir, run_id)
        doomed = [entry_path(meta_dir, run_id), *([folder] if folder.is_dir() else [])]
        if not dry_run:
            remove_checkpoints(meta_dir, run_id)
            remove_entry(meta_dir, run_id)
        removed += doomed
    return removed
