"""What the reports pages show, read from the reports folder: a row per report, and one run's record.

Everything comes from files the run wrote (``<id>.md`` and ``meta/run-<id>.yaml``), found by id
in the folder's listing and read as the rest of the tool reads them: a run record size-capped,
schema-checked and never through a symlink. A row is kept while its record file is unchanged
(:class:`ReportRows`), so a list of hundreds of reports reads only what is new. Nothing here is
HTML: the templates escape every string.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ...errors import ResearchError, error_message
from ...ids import id_timestamp
from ...record import RunRecord, SourceSummary, read_run_record
from ...run_refs import Runs, run_file
from ...text.controls import one_line

__all__ = ["ReportRow", "ReportRows", "read_record", "sources_in_order", "when"]

MAX_ROWS = 500


def when(run_id: str) -> str:
    """The run's start as ``YYYY-MM-DD HH:MM UTC`` (from its id), or ""."""
    stamp = id_timestamp(run_id)
    return stamp.strftime("%Y-%m-%d %H:%M UTC") if stamp is not None else ""


@dataclass(frozen=True)
class ReportRow:
    """One report as the list shows it; ``problem``: why its run record could not be read."""

    id: str
    short: str
    question: str
    date: str
    mode: str = ""
    review: str = ""
    gate: str = ""
    claims_checked: int | None = None
    unsupported_share: float | None = None
    lessons: tuple[str, ...] = ()
    problem: str = ""

    def matches(self, words: str) -> bool:
        """Whether every word of ``words`` is in the question, mode, review, evidence or a lesson key."""
        text = " ".join((self.question, self.mode, self.review, self.gate, self.short, *self.lessons)).lower()
        return all(word in text for word in words.lower().split())


def read_record(reports_dir: Path, run_id: str) -> RunRecord:
    """The run record of ``run_id`` in ``reports_dir`` (InputError naming the file and the problem)."""
    return read_run_record(run_file(reports_dir, "record", run_id), allow_symlink=False)


def _row(reports_dir: Path, run_id: str, short: str) -> ReportRow:
    try:
        record = read_record(reports_dir, run_id)
    except ResearchError as exc:
        question = run_id.rsplit("_", 1)[0].replace("-", " ")
        return ReportRow(run_id, short, question, when(run_id), problem=one_line(error_message(exc)))
    facts = record.claim_check.facts() if record.claim_check is not None else None
    return ReportRow(
        run_id, short, record.query, when(run_id), record.mode, record.review.status if record.review else "",
        record.gate_decision, facts.checked if facts else None, facts.unsupported_share if facts else None,
        tuple(lesson.key for lesson in record.lessons.applied if lesson.key),
    )  # fmt: skip


class ReportRows:
    """The rows of a reports folder, newest first, each read again only when its record changed."""

    def __init__(self, reports_dir: Path) -> None:
        self.reports_dir = Path(reports_dir)
        self._rows: dict[str, tuple[tuple[int, int], ReportRow]] = {}
        self._lock = threading.Lock()

    def rows(self, limit: int = MAX_ROWS) -> list[ReportRow]:
        """The newest ``limit`` reports (blocking: call it in a thread)."""
        runs = Runs.scan(self.reports_dir)
        shorts = runs.shorts()
        wanted = runs.ids("report")[:limit]
        rows = []
        for run_id in wanted:
            record = run_file(self.reports_dir, "record", run_id)
            try:
                stat = record.lstat()
                version = (stat.st_mtime_ns, stat.st_size)
            except OSError:
                version = (0, -1)
            with self._lock:
                kept = self._rows.get(run_id)
            if kept is None or kept[0] != version or kept[1].short != shorts[run_id]:
                kept = (version, _row(self.reports_dir, run_id, shorts[run_id]))
                with self._lock:
                    self._rows[run_id] = kept
            rows.append(kept[1])
        with self._lock:
            for gone in set(self._rows) - set(wanted):
                del self._rows[gone]
        return rows


def sources_in_order(sources: Sequence[SourceSummary]) -> list[SourceSummary]:
    """Cited sources by their number, then the kept, dropped and unscored ones, best score first."""
    rank = {"kept": 0, "dropped": 1, "unscored": 2}
    return sorted(
        sources,
        key=lambda s: (s.n is None, s.n or 0, rank.get(s.status, 3), -(s.score or 0), s.title.lower()),
    )
