"""A reports folder's reports by run reference, for any front end: never by a path a caller gives.

A reference is anything :mod:`research_agent.run_refs` resolves (the full id, the short id, a
unique prefix of either, ``latest``, ``latest~N``), resolved against the folder's own listing,
so no caller can name a file outside it. A report is read size-capped and never through a
symlink (:func:`~research_agent.memory.critique.evidence.read_report_file`).

:func:`report_html_text` and :func:`report_pdf_bytes` are plain functions of the folder and the
reference, so that a front end can run them in one of its CPU worker processes
(:mod:`.cpu`): rendering holds the GIL, and printing waits on Chromium.

:func:`delete_run` deletes a run's files (the report and its exports, the run record, the
passages, the critique or the record of its failure) all or none: each is first renamed aside
in its own folder (a rename is atomic), and only once every one is aside are they removed; a
rename that fails puts back those already moved. Only the names a run id makes, in the reports
folder and its ``meta/``, are ever touched, and neither folder may lead out of the reports folder.
The trial ledger keeps the run's row: evidence is never deleted (as retention never deletes it).
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

from ..errors import InputError, StorageError
from ..export import report_page
from ..export.budget import pdf_budget, print_within
from ..files.atomic import TEMP_SUFFIX, file_kind
from ..files.safefile import check_folder_inside
from ..ids import is_run_id
from ..journal.checkpoints import remove_checkpoints
from ..memory.critique.evidence import read_report_file
from ..record.passages import passages_path
from ..run_refs import KINDS, Runs, run_file

__all__ = ["report_path", "report_markdown", "report_html_text", "report_pdf_bytes", "run_files", "delete_run"]

log = logging.getLogger(__name__)

EXPORTS = (".html", ".pdf")  # what ``export`` and ``run --format`` write beside a report


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


def run_files(reports_dir: Path, run_id: str) -> list[Path]:
    """The files of run ``run_id`` that exist in ``reports_dir``: the report, its exports, the run
    record, the passages, the critique, a failed critique's record. InputError for anything but a
    run id, or when ``meta/`` leads out of the reports folder."""
    if not is_run_id(run_id):
        raise InputError(f"{run_id[:80]!r} is not a run id")
    reports_dir = Path(reports_dir)
    meta = check_folder_inside(reports_dir / "meta", reports_dir)
    names = [run_file(reports_dir, kind, run_id) for kind in KINDS]
    names[1:1] = [reports_dir / f"{run_id}{suffix}" for suffix in EXPORTS]
    names.append(passages_path(meta, run_id))
    return [path for path in names if os.path.lexists(path)]


def delete_run(reports_dir: Path, run_id: str) -> list[Path]:
    """Delete every file of run ``run_id`` (:func:`run_files`), all or none; the paths removed.
    A file that is not a regular file (a folder, a FIFO; a symlink goes as a link) is refused
    before anything moves; StorageError when a file cannot be moved aside (those moved come back)."""
    files = run_files(reports_dir, run_id)
    for path in files:
        mode = path.lstat().st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
            raise InputError(f"{path.name} is {file_kind(mode)}, not a file a run writes: nothing deleted")
    aside: list[tuple[Path, Path]] = []
    try:
        for path in files:
            hidden = path.with_name(f".{path.name}.{os.getpid()}.deleting{TEMP_SUFFIX}")
            os.rename(path, hidden)
            aside.append((path, hidden))
    except OSError as exc:
        for path, hidden in reversed(aside):
            os.rename(hidden, path)
        raise StorageError(f"cannot delete run {run_id}: {exc.strerror or exc}; nothing deleted") from None
    for _, hidden in aside:
        try:
            hidden.unlink()
        except OSError as exc:  # it is hidden already; a later remove_stale_temps takes it
            log.warning("could not remove %s: %s", hidden, exc.strerror or exc)
    remove_checkpoints(reports_dir / "meta", run_id)  # its journal entry is among the files above
    return [path for path, _ in aside]
