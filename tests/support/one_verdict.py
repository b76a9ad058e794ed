"""One verdict: ``review`` of a report the tool wrote agrees with the run that wrote it.

:func:`verdict_disagreements` finds every run record under a folder, reviews the report it
names as ``research-agent review`` does (:func:`research_agent.review.report_file.review_file`),
and says where the two differ: the words of prose, or the critical issues still open (their
number and kinds, as the run's front matter and warning name them). conftest.py runs it after
every test on the test's own ``tmp_path``, so every report a pipeline or CLI test writes is
checked, whatever the test was about.
"""

from __future__ import annotations

from pathlib import Path

from research_agent.errors import InputError
from research_agent.record import read_run_record
from research_agent.review.feedback import issue_title
from research_agent.review.report_file import read_report, review_markdown
from research_agent.review.review import open_critical_issues
from research_agent.run.stored import run_findings

__all__ = ["verdict_disagreements"]


def verdict_disagreements(root: Path) -> list[str]:
    """One line per report under ``root`` whose review differs from its run's verdict."""
    found: list[str] = []
    for record_path in sorted(root.rglob("meta/run-*.yaml")):
        try:
            record = read_run_record(record_path, allow_symlink=False)
        except InputError:
            continue  # a test that plants a broken record
        report = Path(record.report_path)
        if record.review is None or record.review.words is None or not report.is_file():
            continue
        if record_path.stat().st_mtime_ns < report.stat().st_mtime_ns:
            continue  # the test edited the report after its run wrote it
        markdown = read_report(report)
        review = review_markdown(markdown, findings=run_findings(report, markdown, record_path.parent.parent))
        open_issues = open_critical_issues(review)
        kinds = tuple(dict.fromkeys(issue_title(i.type).lower() for i in open_issues))
        said = (record.review.words, record.review.open_critical, record.review.reasons)
        seen = (review.words, len(open_issues), kinds)
        if said != seen:
            found.append(f"{report.name}: the run said (words, critical, kinds) {said}, review says {seen}")
    return found
