"""The trial ledger, ``reports/meta/trials.jsonl``: every run's evidence about its lessons, kept
whatever retention deletes. Pruning critiques removes text, not evidence.

One compact row per run (:class:`~.rows.TrialRow`, a few hundred bytes): its domain and question,
its kind (ordinary, whole-run control, ``--no-lessons``, an arm of ``memory ab``), whether a person
gave or edited its plan, each lesson it was given or withheld (and why, at which trial
probability), the critique's scores, mean, pass and review verdict, whether the critique is
suspect, the facts lessons target, a hash of the outcome as recorded, and the ground-truth grade
of an eval run. Beside the rows, events: decisions (``retired``, ``helpful``) as they were taken,
and a person's ``reinstated``, which starts a new trial. Lessons' arms, their decisions and the
domain's suspension read the ledger, never the window of critique files that retention keeps.

* ``rows``    a row, made from a critique or a run record, read back checked;
  :class:`~.rows.Grade`, an eval's grade of a run
* ``events``  a decision as it was taken, a person's reinstatement
* ``texts``   a built lesson's text as a run was first given it in its trial, so that selection
  can keep offering the lesson while its trial is undecided after retention removed its critiques
* ``ledger``  the file: signed lines, appended under a lock, read back line by line (a line
  whose MAC does not check is ignored: a planted line can neither add evidence, retire nor
  reinstate a lesson)
* ``record``  rows rebuilt from the critiques that still exist where the ledger lacks them, rows
  amended where a critique's scores were edited (and the rule for what an edit may change: its
  docstring), :func:`~.record.record_grades`, each lesson's current trial from the events, and a
  person's reinstatement of a retired lesson (:func:`~.record.reinstate_lesson`)

Interfaces other parts rely on:

* ``Grade(world, eval_id, question_id, fact_recall, cited_precision, unsupported, stale,
  checkpoints, declined)`` and ``record_grades(meta_dir, state_dir, {run_id: grade})`` (one:
  ``record_grade``): an eval records each graded run's grade; the run's row is amended, or made
  from its critique, or from its run record (``run-<id>.yaml``) when it was never critiqued
  (``eval run --no-critique``: lessons from the record, scores null). Rows read back carry their
  grade (``TrialRow.grade``); a critique made after the grade keeps it.
* ``TrialRow.kind`` (:data:`~.rows.KINDS`) and ``TrialRow.plan_by_person`` (from the run record's
  ``plan_by_person``, carried into the critique): a run whose plan a person gave or edited counts
  in no planning lesson's arms, and still in judging lessons'.
* ``TrialRow.digest``: a hash of the run's scores as recorded; :func:`~.record.sync_ledger` amends
  a row whose critique's scores changed (any score edit, by the hash the summary index keeps of
  each file's scores) and names the edit (``TrialRow.edit``).
"""

from .events import DECISIONS, TrialEvent
from .ledger import LEDGER_NAME, TrialLedger
from .record import (
    TrialState,
    amended,
    critique_lines,
    new_texts,
    open_ledger,
    record_grade,
    record_grades,
    reinstate_lesson,
    retired_in,
    sync_ledger,
    trial_states,
)
from .rows import KINDS, Edit, Grade, TrialRow, Use, row_from_critique, row_from_record
from .texts import LessonText

__all__ = [
    "LEDGER_NAME", "TrialLedger", "TrialState", "amended", "critique_lines", "new_texts", "open_ledger", "record_grade", "record_grades",
    "reinstate_lesson", "retired_in", "sync_ledger", "trial_states",
    "DECISIONS", "KINDS", "Edit", "Grade", "LessonText", "TrialEvent", "TrialRow", "Use", "row_from_critique", "row_from_record",
]  # fmt: skip
