"""Keeping the trial ledger whole: rows from critiques where missing, edits, grades, and each lesson's trial.

* :func:`open_ledger` opens the ledger of a reports folder with the user's key.
* :func:`sync_ledger` adds the row of every critique that exists and has none (the ledger was new,
  cleared, or a write failed), with the texts of the built lessons it was given that the ledger
  lacks (:func:`new_texts`), and amends a row whose critique's scores changed since they were
  recorded (:func:`amended`): the ledger is rebuilt from critiques only where it is missing. Any
  score edit is seen, even one that leaves the mean and the verdict as they were: the summary
  index keeps a hash of each file's scores, the row the hash of the scores it holds.
* :func:`record_grades` records an eval's grades of runs (:class:`~.rows.Grade`), amending their
  rows, or making each from its critique or its run record when the ledger has none.
* :func:`trial_states` reads the events: for each lesson key in each domain, when its current
  trial began (a person's reinstatement starts a new one) and the decision recorded in it.
* :func:`reinstate_lesson` records a person's reinstatement of a retired lesson (``memory
  reinstate``, the workbench): it is given again, in a new trial whose runs start after it.

**What an edit may change (the trust rule).** Anything under ``reports/`` may have been planted: a
critique file edited by its owner and one planted by someone else look alike. A person editing their
own critique honestly changes how one run was *judged*: its scores. So an edit amends a row's
scores, and what follows from them (the mean score, and the pass under the run's own review
verdict), and nothing else. What the run *was* stays as the ledger first recorded it: its domain,
question, kind, each lesson it was given or withheld and its trial draw, whether a person gave its
plan, whether it could read its memory, its measured facts, its time, and its review verdict (a
report its own review rejected never passes). A critique the program found degenerate (suspect)
stays out of every arm whatever its file says later, while new scores that look degenerate put a run
out. So an edited or planted file can move one run's outcome within the arm it sat in, as the
person's own re-reading of their report may, never which arm it sat in, whether it counts, or what
a lesson's target measured. Each edit is named in the row (:class:`~.rows.Edit`: the scores first
recorded, when the ledger took the change, by hand or by a later critique; ``memory ledger`` shows
it), and scores edited back to those first recorded leave no edit. Decisions already recorded stand:
a retired lesson stays retired until a person reinstates it, which only ``memory reinstate`` (or the
workbench) records, never a file, and a line not signed with the user's key is ignored. A critique
of a run the ledger has no row for is taken as it stands, as it always was: there is nothing first
recorded to keep.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from ....errors import InputError
from ....files.state import secret_key
from ....ids import format_utc, is_run_id
from ..critique_types import Critique
from ..derived import scores_digest
from ..files import critique_path, entry_for_name, load_critique, load_entry
from ..schema import DIMENSIONS, is_pass, mean_of, ramp_reason
from .events import TrialEvent
from .ledger import TrialLedger
from .rows import Edit, Grade, TrialRow, excluded_lessons, row_from_critique, row_from_record
from .texts import LessonText, texts_to_record

__all__ = [
    "open_ledger", "sync_ledger", "amended", "record_grade", "record_grades", "TrialState", "trial_states",
    "Present", "retired_in", "reinstate_lesson", "new_texts", "critique_lines",
]  # fmt: skip

# run id -> (critique file name, the hash of its scores), as the summary index holds them
Present = Mapping[str, tuple[str, str]]


def open_ledger(meta_dir: Path, state_dir: Path | None) -> TrialLedger:
    """The ledger of ``meta_dir``, signed with the key in ``state_dir`` (None: in memory only)."""
    return TrialLedger.open(Path(meta_dir), secret_key(Path(state_dir)) if state_dir is not None else None)


def _read(meta_dir: Path, name: str) -> Critique | None:
    entry = entry_for_name(meta_dir, name)
    return None if entry is None else load_entry(entry, meta_dir=meta_dir).critique


def amended(row: TrialRow, critique: Critique, *, now: float) -> TrialRow:
    """``row`` (the run as first recorded) with the scores of ``critique``, its later critique or the
    same one edited: only the scores and what follows from them change (see the module docstring)."""
    scores = tuple(critique.scores.get(d) for d in DIMENSIONS)
    values = dict(zip(DIMENSIONS, scores, strict=True))
    first = row.edit.was if row.edit is not None else row.scores
    later = row.created is not None and critique.created_at.timestamp() > row.created + 1
    edit = None if first is None or scores == first else Edit(first, round(now, 3), "critique" if later else "hand")
    degenerate = ramp_reason(values) or ""
    return replace(
        row, scores=scores, mean=mean_of(values), passed=is_pass(values, row.review or None),
        suspect=row.suspect or degenerate[:200], digest=scores_digest(scores), edit=edit,
    )  # fmt: skip


def _updated(row: TrialRow | None, critique: Critique, now: float) -> TrialRow | None:
    """The row to record for ``critique``: a new one where the run has none, or none recorded with
    an outcome (a run graded before it was critiqued); ``row`` amended where its scores differ; None
    where nothing changed (an old row's hash written another way is brought up to date)."""
    if row is None:
        return row_from_critique(critique)
    if row.mean is None:  # its first outcome: what the run was stays as its run record gave it
        fresh = row_from_critique(critique)
        return replace(
            row, scores=fresh.scores, mean=fresh.mean, passed=fresh.passed, review=fresh.review, suspect=fresh.suspect,
            facts=fresh.facts, created=fresh.created, digest=fresh.digest, kind="ab" if fresh.kind == "ab" else row.kind,
        )  # fmt: skip
    if row.scores == tuple(critique.scores.get(d) for d in DIMENSIONS):
        return replace(row, digest=critique.scores.digest) if row.digest != critique.scores.digest else None
    return amended(row, critique, now=now)


def sync_ledger(
    ledger: TrialLedger, meta_dir: Path, present: Present, *, load: Callable[[str], Critique | None] | None = None,
    now: float | None = None,
) -> int:  # fmt: skip
    """Add or amend the rows of the critiques in ``present`` that the ledger lacks or holds with
    other scores (see the module docstring); return how many rows were written. ``load``: the
    critique of a file name as the caller already holds it (None: read the file)."""
    rows: list[TrialRow] = []
    texts: dict[tuple[str, str], LessonText] = {}
    when = time.time() if now is None else now
    for run_id, (name, digest) in present.items():
        row = ledger.rows.get(run_id)
        if row is not None and row.mean is not None and row.digest == digest:
            continue
        critique = (load(name) if load is not None else None) or _read(Path(meta_dir), name)
        if critique is not None and critique.id == run_id:
            found = _updated(row, critique, when)
            if found is not None:
                rows.append(found)
            for text in new_texts(ledger, critique) if row is None else ():
                texts.setdefault((text.domain, text.key), text)
    ledger.add([*rows, *texts.values()])
    return len(rows)


def new_texts(ledger: TrialLedger, critique: Critique) -> list[LessonText]:
    """The texts of the built lessons ``critique``'s run was given that ``ledger`` holds none of
    in their current trial (:mod:`.texts`)."""
    since = {where: state.since for where, state in trial_states(ledger.events).items() if state.since}
    return texts_to_record(ledger.texts, since, critique)


def critique_lines(
    ledger: TrialLedger, critique: Critique, excluded: tuple[tuple[str, str], ...] = ()
) -> list[TrialRow | LessonText]:
    """What a new critique adds to ``ledger``: its run's row, and the texts of the built lessons
    it was given that the ledger lacks."""
    return [row_from_critique(critique, excluded), *new_texts(ledger, critique)]


def _critique_of(meta_dir: Path, run_id: str) -> Critique | None:
    try:
        return load_critique(critique_path(meta_dir, run_id), meta_dir=meta_dir)
    except (InputError, OSError):
        return None


def _new_row(meta_dir: Path, run_id: str) -> TrialRow:
    """The row of a graded run the ledger has none for: from its critique where one exists, else
    from its run record (``run-<id>.yaml``: its lessons given and withheld, scores null)."""
    from ....record import read_run_record  # only a grade needs the run record's reader

    path = Path(meta_dir) / f"run-{run_id}.yaml"
    try:
        record = read_run_record(path, allow_symlink=False)
    except InputError as exc:
        raise InputError(f"cannot grade {run_id}: it has no row in the trial ledger, and {exc}") from None
    if record.id != run_id:
        raise InputError(f"cannot grade {run_id}: {path.name} holds run {record.id}")
    critique = _critique_of(Path(meta_dir), run_id)
    if critique is not None and critique.id == run_id:
        return row_from_critique(critique, excluded_lessons(record.lessons.excluded))
    return row_from_record(record)


def record_grades(meta_dir: Path, state_dir: Path, grades: Mapping[str, Grade]) -> dict[str, TrialRow]:
    """Record each ``run id -> grade`` of ``grades`` as the run's ground truth in the ledger of
    ``meta_dir`` (signed with the key in ``state_dir``), opened once, and return their rows: each row
    amended, or made for a run the ledger has none for (:func:`_new_row`). A grade the row already
    holds is not written again. InputError for a run that has neither a row nor a readable run
    record (the others are recorded first)."""
    ledger = open_ledger(meta_dir, state_dir)
    rows: list[TrialRow] = []
    failed: InputError | None = None
    for run_id, grade in grades.items():
        if not is_run_id(run_id):
            failed = InputError(f"not a run id: {run_id[:80]!r}")
            continue
        try:
            row = ledger.rows.get(run_id) or _new_row(meta_dir, run_id)
        except InputError as exc:
            failed = exc
            continue
        if row.grade != grade:
            rows.append(replace(row, grade=grade))
    ledger.add(rows)
    if failed is not None:
        raise failed
    return {run_id: ledger.rows[run_id] for run_id in grades if run_id in ledger.rows}


def record_grade(meta_dir: Path, state_dir: Path, run_id: str, grade: Grade) -> TrialRow:
    """Record one run's ``grade`` (:func:`record_grades`) and return its row."""
    return record_grades(meta_dir, state_dir, {run_id: grade})[run_id]


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
