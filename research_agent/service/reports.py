"""A reports folder's reports by run reference, for any front end: never by a path a caller gives.

A reference is anything :mod:`research_agent.run_refs` resolves (the full id, the short id, a
unique prefix of either, ``latest``, ``latest~N``), resolved against the folder's own listing,
so no caller can name a file outside it. A report is read size-capped and never through a
symlink (:func:`~research_agent.memory.critique.evidence.read_report_file`).

:func:`report_html_text` and :func:`report_pdf_bytes` are plain functions of the folder and the
reference, so that a front end can run them in one of its CPU worker processes
(:mod:`.cpu`): rendering holds the GIL, and printing waits on Chromium.
"""

from __future__ import annotations

from pathlib import Path

from ..export import report_page
from ..export.budget import pdf_budget, print_within
from ..memory.critique.evidence import read_report_file
from ..run_refs import Runs, run_file

__all__ = ["report_path", "report_markdown", "report_html_text", "report_pdf_bytes"]


def report_path(reports_dir: Path, ref: str) -> Path:
    """The report a reference names in ``reports_dir``; UnknownRun when there is none."""
    return run_file(reports_dir, "report", Runs.scan(reports_dir).resolve(ref, "report"))


def report_markdown(reports_dir: Path, ref: str) -> str:
    """The markdown of the report ``ref`` names (size-capped, no symlinks)."""
    return read_report_file(report_path(reports_dir, ref), reports_dir)


def report_html_text(reports_dir: Path, ref: str) -> str:
    """The report ``ref`` names as one self-contained HTML page whose citations preview their
    passage, as ``research-agent export`` writes it."""
    path = report_path(reports_dir, ref)
    page, _ = report_page(path, read_report_file(path, reports_dir), reports_dir)
    return page.html


def report_pdf_bytes(reports_dir: Path, ref: str, browser: Path) -> bytes:
    """The page of :func:`report_html_text` printed to PDF by the Chromium at ``browser``, within
    the budget of the report's size (:mod:`research_agent.export.budget`): a report too long to
    print is refused before Chromium starts, so no request holds a worker for long."""
    path = report_path(reports_dir, ref)
    markdown = read_report_file(path, reports_dir)
    budget = pdf_budget(markdown, path.name)
    page, _ = report_page(path, markdown, reports_dir)
    return print_within(browser, page.html, budget, path.name)
