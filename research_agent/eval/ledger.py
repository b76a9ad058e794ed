"""An eval's grades in the trial ledger: ground truth beside each run's lessons, kept past retention.

Each graded run's grade (fact recall, cited precision, unsupported and stale facts, how many
checkpoints its question has, whether it declined) goes into the run's row of the trial ledger
(:func:`~research_agent.memory.store.trials.record_grades`), never into its critique: critiques are
pruned, and ``--no-critique`` writes none. A row made before the run's critique (the critique comes
later, in the background) keeps its grade when the critique fills it in. ``memory effects`` reads
them back: each lesson's effect on fact recall beside its effect on the critic's score, and how far
the critic tracks ground truth (:mod:`research_agent.memory.effects.truth`).

Recording never stops an eval: where the ledger cannot be written (or the user state folder that
holds its key cannot be used), the scorecard is written all the same and one warning says why.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path

from ..errors import ResearchError
from ..memory.store.trials import Grade, record_grades
from .graded import GradedRun

__all__ = ["ledger_grade", "record_eval_grades"]

log = logging.getLogger(__name__)


def ledger_grade(world: str, eval_id: str, run: GradedRun) -> Grade:
    """The ledger's :class:`~research_agent.memory.store.trials.Grade` of one graded run."""
    grade = run.grade
    return Grade(
        world, eval_id, grade.question_id, grade.recall, grade.cited_precision, len(grade.unsupported),
        len(grade.stale), len(grade.checkpoints), bool(grade.declined),
    )  # fmt: skip


def record_eval_grades(
    meta_dir: Path, state_dir: Path, world: str, eval_id: str, runs: Mapping[str, GradedRun]
) -> str:
    """Record the grade of every run in ``runs`` in the trial ledger of ``meta_dir``; return '' or,
    where that failed, why (the others are recorded all the same where the file can be written)."""
    grades = {run.run_id: ledger_grade(world, eval_id, run) for run in runs.values()}
    if not grades:
        return ""
    try:
        record_grades(Path(meta_dir), Path(state_dir), grades)
    except ResearchError as exc:
        log.warning("the eval's grades are not all in the trial ledger: %s", exc)
        return f"the grades are not all in the trial ledger: {exc}"
    return ""
