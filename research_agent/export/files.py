"""Exporting a report file: find it, find its passages, render the page, write HTML or PDF.

``research-agent export`` and ``run --format`` both come here. A report finds its run by
the ``id:`` of its front matter (or its file name, for reports written before ``id:``),
and its passage store in the ``meta/`` folder beside it, else in the reports folder's
``meta/``; a report whose passages are missing or unreadable still exports, without
previews, and the result says why in one line. Every file is written atomically.

Only a markdown report is exported (a ``.md`` file with front matter): ``export /etc/passwd``
is refused before anything is read, so it can never write ``/etc/passwd.html``. A report
this tool wrote (its ``id:`` has a run record in the reports folder it came from) links its
local sources as ``file:///`` paths; any other report gets no ``file:`` link at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError, StorageError
from ..files.atomic import atomic_write_bytes, ensure_writable_dir, existing_file_mode
from ..ids import is_run_id
from ..record.passages import (
    PassageStore,
    looked_in,
    read_passage_store,
    report_run_id,
    run_meta_dirs,
    why_no_run,
)
from ..review.markdown import parse_front_matter, split_front_matter
from ..review.report_file import read_report
from ..run_refs import resolve_run, run_file
from .browser import PDF_TIMEOUT, find_browser
from .budget import pdf_budget, print_within
from .page import NO_PASSAGES, Page, render_page

__all__ = [
    "FORMATS",
    "Exported",
    "find_report",
    "report_passages",
    "report_page",
    "written_here",
    "check_markdown_report",
    "export_report",
    "export_path",
    "check_destination",
]

FORMATS = ("md", "html", "pdf")
MARKDOWN_SUFFIXES = (".md", ".markdown")


@dataclass(frozen=True)
class Exported:
    """What an export wrote: the file, its format, the citations linked and previewed, and
    ``note``: one line on why citations show no passage ("" when they do)."""

    path: Path
    format: str
    citations: int
    previews: int
    note: str = ""


def find_report(reports_dir: Path, name: str) -> Path:
    """The report file ``name`` stands for: a path to a file, or any run reference in ``reports_dir``
    (full id, short id, a unique prefix, ``latest``, ``latest~N``: :mod:`research_agent.run_refs`)."""
    path = Path(name).expanduser()
    if path.exists() or path.is_symlink():
        return path
    if len(path.parts) > 1 or path.suffix.lower() in (".md", ".markdown"):
        raise InputError(f"report {name[:200]}: no such file")
    return run_file(reports_dir, "report", resolve_run(reports_dir, name, "report"))


def report_passages(report: Path, markdown: str, reports_dir: Path) -> tuple[PassageStore | None, str]:
    """The passage store of the report at ``report``, or None and one line saying why not."""
    front = parse_front_matter(markdown)
    run_id = report_run_id(front, report)
    if run_id is None:
        return None, f"{NO_PASSAGES}: the report names no run ({why_no_run(front)})."
    folders = run_meta_dirs(report, reports_dir)
    for meta in folders:
        try:
            store = read_passage_store(meta, run_id)
        except InputError as exc:
            return None, f"{NO_PASSAGES}: {exc}."
        if store is not None:
            return store, ""
    return None, (
        f"{NO_PASSAGES}: the passages of run {run_id} are not there ({looked_in(folders)}): an older run, "
        "pruned, or a copy away from its reports folder (name that folder with --reports-dir)"
    )


def written_here(report: Path, markdown: str, reports_dir: Path) -> bool:
    """Whether this tool wrote the report at ``report``: its front matter's ``id:`` has a run
    record in the ``meta/`` folder beside it or in ``reports_dir``."""
    run_id = parse_front_matter(markdown).get("id")
    if not is_run_id(run_id):
        return False
    folders = dict.fromkeys((Path(report).parent, Path(reports_dir)))
    return any(run_file(folder, "record", run_id).is_file() for folder in folders)


def report_page(report: Path, markdown: str, reports_dir: Path) -> tuple[Page, str]:
    """The HTML page of ``markdown`` (the report at ``report``), and the note on its previews."""
    store, note = report_passages(report, markdown, reports_dir)
    local = written_here(report, markdown, reports_dir)
    return render_page(markdown, store, notes=(note,) if note else (), local_files=local), note


def check_markdown_report(report: Path, markdown: str | None = None) -> None:
    """InputError (one line) unless ``report`` is a markdown report: a ``.md`` (or ``.markdown``)
    file, and once read (``markdown``), one with front matter."""
    if Path(report).suffix.lower() not in MARKDOWN_SUFFIXES:
        raise InputError(f"report {report}: not a markdown report (export reads .md files this tool wrote)")
    if markdown is not None and not split_front_matter(markdown)[0]:
        raise InputError(f"report {report}: not a research-agent report (it has no front matter)")


def export_path(report: Path, fmt: str) -> Path:
    """Where an export of ``report`` goes unless told: beside it, ``<name>.<fmt>``."""
    return Path(report).with_suffix(f".{fmt}")


def check_destination(path: Path) -> Path:
    """Refuse (InputError) an output that is a symlink, a directory or a special file, or
    whose folder cannot be written, before any work is done; return ``path``."""
    try:
        existing_file_mode(path)
        ensure_writable_dir(Path(path).parent)
    except StorageError as exc:
        raise InputError(f"output file: {exc}") from None
    return Path(path)


def export_report(
    report: Path,
    *,
    fmt: str,
    reports_dir: Path,
    output: Path | None = None,
    browser: Path | None = None,
    timeout: float = PDF_TIMEOUT,
) -> Exported:
    """Write the report at ``report`` as ``fmt`` (html or pdf) to ``output`` (default: beside it).
    A PDF is printed within a budget in proportion to the report (:mod:`.budget`; ``timeout``
    seconds at most): one too long to print is refused before Chromium starts (InputError), a
    print past its time or size is stopped (StorageError), each in one line, nothing written."""
    if fmt not in ("html", "pdf"):
        raise InputError(f"unknown export format {fmt[:20]!r}: choose html or pdf")
    check_markdown_report(report)
    chromium = find_browser(browser) if fmt == "pdf" else None
    target = check_destination(output if output is not None else export_path(report, fmt))
    if target.absolute() == Path(report).absolute():
        raise InputError(f"output file {target}: it is the report itself")
    markdown = read_report(Path(report))
    check_markdown_report(report, markdown)
    budget = pdf_budget(markdown, report, timeout=timeout) if chromium is not None else None
    page, note = report_page(Path(report), markdown, reports_dir)
    if chromium is not None and budget is not None:
        data = print_within(chromium, page.html, budget, report)
    else:
        data = page.html.encode("utf-8")
    atomic_write_bytes(target, data)
    return Exported(target, fmt, page.citations, page.previews, note)
