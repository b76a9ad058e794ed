"""Keeping the trial ledger whole: rows from critiques where missing, grades, and each lesson's trial.

* :func:`open_ledger` opens the ledger of a reports folder with the user's key.
* :func:`sync_ledger` adds the row of every critique that exists and has none (the ledger was new,
  cleared, or a write failed), and amends a row whose critique's mean score or pass changed since
  it was recorded (a hand edit): the ledger is rebuilt from critiques only where it is missing.
* :func:`record_grade` records an eval's grade of a run (:class:`~.rows.Grade`), amending its row,
  or making one from its run record when the run was never critiqued.
* :func:`trial_states` reads the events: for each lesson key in each domain, when its current
  trial began (a person's reinstatement starts a new one) and the decision recorded in it.
* :func:`reinstate_lesson` records a person's reinstatement of a retired lesson (``memory
  reinstate``, the workbench): it is given again, in a new trial whose runs start after it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from ....errors import InputError
from ....files.state import secret_key
from ....ids import format_utc, is_run_id
from ..critique_types import Critique
from ..files import entry_for_name, load_entry
from .events import TrialEvent
from .ledger import TrialLedger
from .rows import Grade, TrialRow, row_from_critique, row_from_record

__all__ = [
    "open_ledger", "sync_ledger", "record_grade", "TrialState", "trial_states", "Present", "retired_in",
    "reinstate_lesson",
]  # fmt: skip

# run id -> (critique file name, its mean score, whether it passes), as the summary index holds them
Present = Mapping[str, tuple[str, float | None, bool]]


def open_ledger(meta_dir: Path, state_dir: Path | None) -> TrialLedger:
    """The ledger of ``meta_dir``, signed with the key in ``state_dir`` (None: in memory only)."""
    return TrialLedger.open(Path(meta_dir), secret_key(Path(state_dir)) if state_dir is not None else None)


def _changed(row: TrialRow, mean: float | None, passed: bool) -> bool:
    return row.mean is None or (mean is not None and abs(row.mean - mean) > 1e-9) or row.passed != passed


def _read(meta_dir: Path, name: str) -> Critique | None:
    entry = entry_for_name(meta_dir, name)
    return None if entry is None else load_entry(entry, meta_dir=meta_dir).critique


def sync_ledger(
    ledger: TrialLedger, meta_dir: Path, present: Present, *, load: Callable[[str], Critique | None] | None = None
) -> int:
    """Add or amend the rows of the critiques in ``present`` that the ledger lacks or holds with
    another outcome (see the module docstring); return how many rows were written. ``load``: the
    critique of a file name as the caller already holds it (None: read the file)."""
    rows: list[TrialRow] = []
    for run_id, (name, mean, passed) in present.items():
        row = ledger.rows.get(run_id)
        if row is not None and not _changed(row, mean, passed):
            continue
        critique = (load(name) if load is not None else None) or _read(Path(meta_dir), name)
        if critique is not None and critique.id == run_id:
            rows.append(row_from_critique(critique))
    ledger.add(rows)
    return len(rows)


def record_grade(meta_dir: Path, state_dir: Path, run_id: str, grade: Grade) -> TrialRow:
    """Record ``grade`` as run ``run_id``'s ground truth in the ledger of ``meta_dir`` (signed with
    the key in ``state_dir``) and return its row: its row amended, or, for a run never critiqued,
    a row made from its run record (``run-<id>.yaml``: its lessons given and withheld, scores null).
    InputError when the run has neither a row nor a readable run record."""
    from ....record import read_run_record  # only a grade needs the run record's reader

    if not is_run_id(run_id):
        raise InputError(f"not a run id: {run_id[:80]!r}")
    ledger = open_ledger(meta_dir, state_dir)
    row = ledger.rows.get(run_id)
    if row is None:
        path = Path(meta_dir) / f"run-{run_id}.yaml"
        try:
            record = read_run_record(path, allow_symlink=False)
        except InputError as exc:
            raise InputError(f"cannot grade {run_id}: it has no row in the trial ledger, and {exc}") from None
        if record.id != run_id:
            raise InputError(f"cannot grade {run_id}: {path.name} holds run {record.id}")
        row = row_from_record(record)
    amended = replace(row, grade=grade)
    ledger.add([amended])
    return ledger.rows[run_id]


@dataclass(frozen=True)
class TrialState:
    """One lesson key's current trial in one domain: the stamp from which its runs count (''
    from the start: it was never reinstated), the reinstatement that began it, and the decision
    recorded in it (the latest; a ``retired`` one stands whatever follows)."""

    since: str = ""
    reinstated: TrialEvent | None = None
    decision: TrialEvent | None = None


def trial_states(events: list[TrialEvent]) -> dict[tuple[str, str], TrialState]:
    """Each ``(domain, key)``'s current trial, from the ledger's events in the order recorded."""
    states: dict[tuple[str, str], TrialState] = {}
    for event in events:
        where = (event.domain, event.key)
        state = states.get(where, TrialState())
        if event.event == "reinstated":
            states[where] = TrialState(event.stamp, event, None)
        elif state.decision is None or state.decision.event != "retired":
            states[where] = TrialState(state.since, state.reinstated, event)
    return states


def retired_in(ledger: TrialLedger, key: str | None = None) -> dict[tuple[str, str], TrialEvent]:
    """``(domain, key) -> the decision`` of every lesson retired in its current trial (of ``key`` only)."""
    return {
        where: state.decision
        for where, state in trial_states(ledger.events).items()
        if state.decision is not None and state.decision.event == "retired" and key in (None, where[1])
    }


def reinstate_lesson(
    meta_dir: Path, state_dir: Path, key: str, *, domain: str | None = None, now: datetime
) -> TrialEvent:
    """Record that a person reinstated ``key`` (retired in ``domain``, or in the one domain where it
    is retired) at ``now``; return the event. InputError when it is not retired there, or is
    retired in several domains and none is named."""
    ledger = open_ledger(meta_dir, state_dir)
    found = [where for where in retired_in(ledger, key) if domain is None or where[0] == domain]
    where_words = f" in {domain}" if domain is not None else ""
    if not found:
        raise InputError(f"{key[:120]} is not retired{where_words}: there is nothing to reinstate "
                         "(`research-agent memory effects` shows each lesson's status)")  # fmt: skip
    if len(found) > 1:
        domains = ", ".join(sorted(d for d, _ in found))
        raise InputError(f"{key[:120]} is retired in {domains}: name the domain with --domain")
    event = TrialEvent("reinstated", found[0][0], key, format_utc(now))
    ledger.add([event])
    return event
