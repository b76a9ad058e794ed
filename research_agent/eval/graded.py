"""One finished run of an eval, read back from the reports folder and graded.

The eval's state names each finished run; its run record, report and critique are read from the
reports folder as any other command reads them (the state lies under ``reports/``, where anything
may have been planted: a report is read only inside the reports folder, size-capped), and the
report is graded (:func:`~.grading.grade`). Grades are never stored: they are a pure function of
what is on disk, so a resumed eval grades again exactly what it finished before.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, cast

from ..batch.state import Entry
from ..errors import InputError, ResearchError
from ..files.safefile import read_text_capped
from ..memory.store.files import critique_path, load_critique
from ..record import read_run_record
from .grading import Grade, grade
from .world import Question, World

__all__ = ["GradedRun", "grade_entry", "MAX_REPORT_BYTES"]

log = logging.getLogger(__name__)

MAX_REPORT_BYTES = 8 * 1024 * 1024


Half = Literal["learning", "measured", ""]  # of a --holdout eval's questions ("": no holdout)


@dataclass(frozen=True)
class GradedRun:
    """A finished run of an eval and its grade, with what the scorecard shows beside it: its cost,
    the lessons it was given, and its critique's scores (None: not critiqued)."""

    key: str
    question: Question
    round: int
    half: Half
    run_id: str
    report: str
    grade: Grade
    tokens: int
    cost_usd: float | None
    calls: int
    lessons: tuple[str, ...]
    critic: dict[str, float | None] | None = None

    @property
    def unsupported(self) -> int:
        return len(self.grade.unsupported)


def _critic(meta_dir: Path, entry: Entry) -> dict[str, float | None] | None:
    critique = entry.outcome.get("critique") or {}
    if not critique.get("id"):
        return None
    try:
        loaded = load_critique(critique_path(meta_dir, str(critique["id"])), meta_dir=meta_dir)
    except (ResearchError, OSError) as exc:
        log.info("the critique of %s is not read: %s", entry.run_id, exc)
        return None
    scores = loaded.scores.as_dict()
    return {"coverage": scores.get("coverage"), "claim_support": scores.get("claim_support"),
            "mean": loaded.mean_score}  # fmt: skip


def grade_entry(world: World, entry: Entry, meta_dir: Path, reports_dir: Path) -> GradedRun | None:
    """The graded run of a finished ``entry``; None when it did not finish or its files cannot be read."""
    if entry.state != "done" or not entry.run_id:
        return None
    question = next((q for q in world.questions if q.id == entry.row.get("id")), None)
    if question is None:
        return None
    try:
        record = read_run_record(Path(meta_dir) / f"run-{entry.run_id}.yaml")
        report = read_text_capped(Path(record.report_path), max_bytes=MAX_REPORT_BYTES, inside=Path(reports_dir))
    except (InputError, ResearchError, OSError) as exc:
        log.info("run %s of the eval is not graded: %s", entry.run_id, exc)
        return None
    usage = [u for u in record.usage.values()]
    return GradedRun(
        entry.key, question, int(entry.row.get("round", 1)), cast(Half, str(entry.row.get("half", ""))), record.id,
        record.report_path, grade(world, report, record, question=question),
        sum(u.prompt_tokens + u.completion_tokens for u in usage), record.cost_usd, sum(u.calls for u in usage),
        tuple(lesson.key for lesson in record.lessons.applied if lesson.key), _critic(meta_dir, entry),
    )  # fmt: skip
