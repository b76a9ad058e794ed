"""What the run of a finished report stored, found from the report: its record, and the
skeptic's findings that counted in its verdict.

A report finds its run through its front matter's ``id:`` (or its file name), in the
``meta/`` folders :func:`~research_agent.record.passages.run_meta_dirs` names: beside the
report first, then the reports folder's. ``review`` adds the findings still standing in the
text to its lint, so it gives the verdict of the run that wrote the report; ``review
--check-claims`` takes the question from the record.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError
from ..record import RunRecord, read_run_record
from ..record.passages import report_run_id, run_meta_dirs
from ..review.markdown import parse_front_matter
from ..review.review import counted
from ..stages.skeptic import SkepticFinding, claim_findings, is_debris

__all__ = ["report_record", "run_findings"]


def report_record(report: Path, markdown: str, reports_dir: Path, run_id: str | None = None) -> RunRecord | None:
    """The run record of the report at ``report`` (its text ``markdown``); None when the
    report names no run, or no readable record of it is where its run keeps its files."""
    run_id = run_id or report_run_id(parse_front_matter(markdown), report)
    if run_id is None:
        return None
    for meta in run_meta_dirs(report, reports_dir):
        record = meta / f"run-{run_id}.yaml"
        if record.is_file():
            try:
                return read_run_record(record, allow_symlink=False)
            except InputError:
                continue  # a record that cannot be read is no record
    return None


def run_findings(report: Path, markdown: str, reports_dir: Path) -> tuple[SkepticFinding, ...]:
    """The skeptic's findings (the claim check's among them) that counted in the verdict of the
    run that wrote the report (a critical one too unsure to revise for did not); none without
    its run record. Planted findings could only make ``review`` stricter, never approve a report.
    A finding that is debris (a record written before such findings were dropped) counts for nothing."""
    record = report_record(report, markdown, reports_dir)
    if record is None:
        return ()
    findings = (*record.skeptic.findings, *claim_findings(record.claim_check))
    return tuple(f for f in findings if counted(f) and not is_debris(f))
