"""What ``run --resume ID`` (and a batch question's next attempt) continues: the run a reference
names among the journal's entries, its question, and its settings as its entry kept them."""

from __future__ import annotations

from pathlib import Path

from ..config import Settings, load_settings
from ..errors import InputError
from ..run_refs import resolve_run
from .entries import RESUMABLE, read_entry, signed_entry
from .run_journal import NOT_SIGNED
from .settings_snapshot import restored
from .signing import user_key

__all__ = ["resume_settings", "check_signed"]


def resume_settings(ref: str, reports_dir: Path | None = None) -> tuple[str, str, Settings]:
    """The id, question and settings of the run ``ref`` names (an id, a unique prefix, ``latest``...)
    in ``reports_dir`` (by default the settings'); InputError when there is none to resume."""
    base = load_settings()
    folder = Path(reports_dir) if reports_dir is not None else base.reports_dir
    run_id = resolve_run(folder, ref, "journal")
    entry = read_entry(folder / "meta", run_id)
    if entry is None:
        raise InputError(f"run {run_id}: its journal entry cannot be read")
    if entry.status not in RESUMABLE:
        why = "it is still running" if entry.status == "running" else f"it is done: {entry.report}"
        raise InputError(f"run {run_id} cannot be resumed: {why}")
    check_signed(folder / "meta", run_id, base.state_dir)
    return run_id, entry.question, restored(entry.settings, reports_dir=folder)


def check_signed(meta_dir: Path, run_id: str, state_dir: Path) -> None:
    """InputError unless the entry of ``run_id`` is signed with the user's key (in ``state_dir``):
    checked before its settings are read, since a planted entry could name any folder or provider."""
    if not signed_entry(meta_dir, run_id, user_key(state_dir)):
        raise InputError(NOT_SIGNED.format(run_id=run_id))
