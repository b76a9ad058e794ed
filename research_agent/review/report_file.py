"""Reviewing a finished markdown report on its own: read it safely, lint it at its mode's length.

The ``review`` command and the MCP server's ``review_report`` tool both come here, so a
report gets the same verdict however it is asked for. The mode whose target length
applies is the one given, else the one in the report's front matter, else none (no
length check).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..config import MODES
from ..errors import InputError
from .markdown import parse_front_matter
from .review import Review, review_draft
from .rules import Rule, load_rules

__all__ = ["review_file", "review_markdown", "read_report", "MAX_REPORT_BYTES"]

MAX_REPORT_BYTES = 20 * 1024 * 1024


def read_report(path: Path) -> str:
    """The report's text with newlines normalized; InputError with a one-line reason otherwise."""
    try:
        if not path.exists():
            raise InputError(f"report {path}: no such file")
        if not path.is_file():
            raise InputError(f"report {path}: not a file")
        if path.stat().st_size > MAX_REPORT_BYTES:
            raise InputError(f"report {path}: larger than {MAX_REPORT_BYTES // (1024 * 1024)} MiB")
        data = path.read_bytes()
        if b"\x00" in data:
            raise InputError(f"report {path}: a binary file, not markdown text")
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(f"report {path}: not UTF-8 text") from None
    except OSError as exc:
        raise InputError(f"report {path}: cannot read ({exc.strerror or exc})") from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _target_words(markdown: str, mode: str | None) -> int | None:
    name = mode if mode is not None else parse_front_matter(markdown).get("mode")
    if name is None:
        return None
    name = str(name).strip().lower()
    if name not in MODES:
        if mode is not None:
            raise InputError(f"unknown mode {mode!r}: choose one of {', '.join(MODES)}")
        return None  # a front matter we do not understand: no length check
    return MODES[name].target_words


def review_markdown(markdown: str, *, rules: Sequence[Rule] = (), mode: str | None = None) -> Review:
    """Review report text with lint only (no skeptic, viability unscored)."""
    return review_draft(markdown, target_words=_target_words(markdown, mode), rules=rules)


def review_file(report: Path, *, rules: Path | None = None, mode: str | None = None) -> Review:
    """Review the markdown file ``report`` with lint only (no skeptic, viability unscored)."""
    markdown = read_report(report)
    loaded = load_rules(rules) if rules is not None else ()
    return review_markdown(markdown, rules=loaded, mode=mode)
