"""Exporting a report file: find it, find its passages, render the page, write HTML or PDF.

``research-agent export`` and ``run --format`` both come here. A report finds its run by
the ``id:`` of its front matter (or its file name, for reports written before ``id:``),
and its passage store in the ``meta/`` folder beside it, else in the reports folder's
``meta/``; a report whose passages are missing or unreadable still exports, without
previews, and the result says why in one line. Every file is written atomically.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError, StorageError
from ..files.atomic import atomic_write_bytes, ensure_writable_dir, existing_file_mode
from ..record.passages import PassageStore, read_passage_store, report_run_id
from ..review.markdown import parse_front_matter
from ..review.report_file import read_report
from ..run_refs import resolve_run, run_file
from .browser import find_browser, print_pdf
from .page import NO_PASSAGES, Page, render_page

__all__ = [
    "FORMATS",
    "Exported",
    "find_report",
    "report_passages",
    "report_page",
    "export_report",
    "export_path",
    "check_destination",
]

FORMATS = ("md", "html", "pdf")


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
    run_id = report_run_id(parse_front_matter(markdown), report)
    if run_id is None:
        return None, f"{NO_PASSAGES}: the report names no run (its front matter has no id)."
    for meta in dict.fromkeys((Path(report).parent / "meta", Path(reports_dir) / "meta")):
        try:
            store = read_passage_store(meta, run_id)
        except InputError as exc:
            return None, f"{NO_PASSAGES}: {exc}."
        if store is not None:
            return store, ""
    return None, f"{NO_PASSAGES}: the passages of run {run_id} were not stored (an older run) or were pruned."


def report_page(report: Path, markdown: str, reports_dir: Path) -> tuple[Page, str]:
    """The HTML page of ``markdown`` (the report at ``report``), and the note on its previews."""
    store, note = report_passages(report, markdown, reports_dir)
    return render_page(markdown, store, notes=(note,) if note else ()), note


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
    report: Path, *, fmt: str, reports_dir: Path, output: Path | None = None, browser: Path | None = None
) -> Exported:
    """Write the report at ``report`` as ``fmt`` (html or pdf) to ``output`` (default: beside it)."""
    if fmt not in ("html", "pdf"):
        raise InputError(f"unknown export format {fmt[:20]!r}: choose html or pdf")
    chromium = find_browser(browser) if fmt == "pdf" else None
    target = check_destination(output if output is not None else export_path(report, fmt))
    if target.absolute() == Path(report).absolute():
        raise InputError(f"output file {target}: it is the report itself")
    markdown = read_report(Path(report))
    page, note = report_page(Path(report), markdown, reports_dir)
    data = print_pdf(chromium, page.html) if chromium is not None else page.html.encode("utf-8")
    atomic_write_bytes(target, data)
    return Exported(target, fmt, page.citations, page.previews, note)
