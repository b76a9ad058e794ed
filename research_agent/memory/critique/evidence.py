"""The files behind a critique: the report a run record names, and the sites it cites.

A run record and a report can each be planted or edited by hand, so
:func:`locate_report` accepts only a regular file (not a symlink) inside the reports
folder, whatever ``report_path`` a record names (``/etc/passwd`` is refused). Lessons no
longer read run records or reports: they name sites only from the critique's validated
``facts`` (see :mod:`..lessons.build.judging`).
"""

from __future__ import annotations

import re
from pathlib import Path

from ...errors import InputError
from ...fetch.urls import registrable_domain, url_host
from ...files.safefile import UnsafeFile, read_text_capped, resolves_inside
from ..store.names import valid_hostname

__all__ = [
    "MAX_REPORT_BYTES",
    "locate_report",
    "read_report_file",
    "cited_hosts",
    "valid_hostname",
]

MAX_REPORT_BYTES = 2 * 1024 * 1024

_HEADING = re.compile(r"^#{1,6}\s++(.*)")  # its words: group 1 less the closing "#"s (see cited_hosts)
_URL = re.compile(r"https?://[^\s<>()\[\]]+", re.IGNORECASE)


def _usable_report(candidate: Path, reports_dir: Path) -> bool:
    """Whether ``candidate`` may be read as a report; raise InputError when it exists but may not."""
    if not (candidate.exists() or candidate.is_symlink()):
        return False
    if candidate.is_symlink():
        raise InputError(f"report {candidate}: symlink refused (a report must be a regular file)")
    if not resolves_inside(candidate, reports_dir):
        raise InputError(f"report {candidate}: lies outside the reports folder {reports_dir}")
    if not candidate.is_file():
        raise InputError(f"report {candidate}: not a regular file")
    return True


def locate_report(reports_dir: Path, named: str, run_id: str) -> Path:
    """The report file of run ``run_id``: ``named`` (as written, or by its name in
    ``reports_dir``), else ``<reports_dir>/<run_id>.md``; InputError when none is usable."""
    path = Path(named)
    candidates = [path] if path.is_absolute() else [path, reports_dir / path.name]
    candidates.append(reports_dir / f"{run_id}.md")
    for candidate in candidates:
        if _usable_report(candidate, reports_dir):
            return candidate
    raise InputError(f"report not found: {named[:200]} (looked in {reports_dir})")


def read_report_file(path: Path, reports_dir: Path) -> str:
    """The text of a report found by :func:`locate_report` (size-capped, no symlinks)."""
    try:
        return read_text_capped(path, max_bytes=MAX_REPORT_BYTES, inside=reports_dir)
    except UnsafeFile as exc:
        raise InputError(f"report {path}: {exc}") from None


def cited_hosts(report: str) -> set[str]:
    """Hosts and registrable domains of the http(s) links in the report's Sources section."""
    hosts: set[str] = set()
    in_sources = False
    for line in report.splitlines():
        heading = _HEADING.match(line)
        if heading:
            in_sources = heading.group(1).rstrip().rstrip("#").strip().strip("*_").lower() == "sources"
            continue
        if in_sources:
            for url in _URL.findall(line):
                hosts.update(h for h in (url_host(url), registrable_domain(url)) if h)
    return hosts
