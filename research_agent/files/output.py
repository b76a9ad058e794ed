"""Where a report may be copied (``run --output``, ``export --output``): never onto a file another run owns.

Other runs own the reports in the reports folder (``.md``, ``.html``, ``.pdf``), everything in
``reports/meta`` (run records, critiques, passages, the memory index, lesson files) and the
cache (the corpus index, fetched pages). Writing a report over one of them would break the
record that points there, or the memory built from it. The decision is taken on the resolved
path, so ``..`` and symlinks do not get around it; an existing file elsewhere may still be
replaced, as the user asked.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ..errors import InputError

__all__ = ["REPORT_SUFFIXES", "check_output_path"]

REPORT_SUFFIXES = frozenset({".md", ".html", ".pdf"})


def _real(path: Path) -> Path:
    return Path(path).expanduser().resolve()


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or path.is_relative_to(folder)


def _owner(real: Path, reports_dir: Path, cache_dir: Path | None) -> str | None:
    """What makes ``real`` (resolved) another run's file, or None when it is not."""
    reports = _real(reports_dir)
    metas = {_real(reports_dir / "meta"), reports / "meta"}  # meta itself may be a symlink
    if any(_inside(real, meta) for meta in metas):
        return "it is in the reports' meta folder (run records, critiques, the memory index)"
    if cache_dir is not None and _inside(real, _real(cache_dir)):
        return "it is in the cache folder (the corpus index, fetched pages)"
    if real == reports:
        return "it is the reports folder"
    if _inside(real, reports) and real.suffix.lower() in REPORT_SUFFIXES and (real.exists() or real.is_symlink()):
        return "it is a report in the reports folder"
    return None


def check_output_path(
    output: Path, *, reports_dir: Path, cache_dir: Path | None = None, own: Iterable[Path] = ()
) -> Path:
    """``output`` resolved, or InputError (exit 2, one line) when writing there would replace
    a file another run owns: a report in ``reports_dir``, anything in its ``meta`` folder, or
    anything in ``cache_dir``. ``own`` are the caller's own files, which it may replace (an
    export's default path beside its report). Call it before the run (or the export) starts."""
    real = _real(output)
    if any(real == _real(path) for path in own):
        return real
    reason = _owner(real, reports_dir, cache_dir)
    if reason is not None:
        shown = str(output) if real == Path(output) else f"{output} (that is {real})"
        raise InputError(f"--output {shown} refused: {reason}; name a file of your own")
    return real
