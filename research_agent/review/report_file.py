"""Reviewing a finished markdown report on its own: read it safely, lint it at its mode's length.

The ``review`` command and the MCP server's ``review_report`` tool both come here, so a
report gets the same verdict however it is asked for. The lint reads a report the tool wrote
as the run read its draft (:mod:`.markdown`: the parts the tool adds are not prose), and the
``review`` command adds the skeptic's findings its run stored
(:func:`research_agent.run.claims.on_report.run_findings`), so the verdict and the word count
are the run's. The mode whose target length
applies is the one given, else the one in the report's front matter, else none (no
length check). A report is at most ``review_max_bytes`` (a setting, 1 MiB by default: a
report of the deep mode is about 20 KB): the review's time grows with the text, and a
long pathological one would keep a server busy.

A report is text: control characters in it (a NUL, escape sequences, C1 controls, bidi
overrides; :mod:`research_agent.text.controls`) are dropped when it is read, with one warning
naming how many (a file more than a tenth of whose characters are C0 controls other than tab,
newline and ESC, such as UTF-16 or a zip file, is a binary file), so that a report someone else wrote (or an older run's, from a model that
sent them) is reviewed and exported instead of being refused as a binary file.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from pathlib import Path

from ..config import MODES, Settings
from ..errors import InputError
from ..text.controls import has_controls, strip_controls
from .markdown import parse_front_matter
from .review import Review, SkepticFindingLike, review_draft, still_open
from .rules import Rule, load_rules

__all__ = ["review_file", "review_markdown", "read_report", "check_report_size", "MAX_REPORT_BYTES"]

MAX_REPORT_BYTES = Settings.review_max_bytes
BINARY_SHARE = 10  # a file more than a tenth of whose characters are raw controls is no report with a few
_RAW_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f]")  # C0 but tab, newlines and ESC
log = logging.getLogger(__name__)


def _too_large(name: str, max_bytes: int) -> InputError:
    shown = f"{max_bytes / (1024 * 1024):g} MiB" if max_bytes >= 1024 * 1024 else f"{max_bytes // 1024} KiB"
    return InputError(f"{name} is larger than the review limit of {shown} (setting review_max_bytes)")


def check_report_size(markdown: str, max_bytes: int = MAX_REPORT_BYTES) -> None:
    """InputError, one line, when report text given as text is over ``max_bytes`` in UTF-8."""
    if len(markdown) > max_bytes or len(markdown.encode("utf-8", "replace")) > max_bytes:
        raise _too_large("the report", max_bytes)


def read_report(path: Path, max_bytes: int = MAX_REPORT_BYTES) -> str:
    """The report's text with newlines normalized and control characters dropped (one warning
    says how many); InputError with a one-line reason otherwise."""
    try:
        if not path.exists():
            raise InputError(f"report {path}: no such file")
        if not path.is_file():
            raise InputError(f"report {path}: not a file")
        with path.open("rb") as handle:
            data = handle.read(max_bytes + 1)  # not the stat size: the file may grow meanwhile
        if len(data) > max_bytes:
            raise _too_large(f"report {path}", max_bytes)
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(f"report {path}: not UTF-8 text") from None
    except OSError as exc:
        raise InputError(f"report {path}: cannot read ({exc.strerror or exc})") from None
    raw = len(text) - len(_RAW_CONTROL.sub("", text)) if has_controls(text) else 0
    if raw * BINARY_SHARE > len(text):
        raise InputError(f"report {path}: a binary file, not markdown text")
    text, dropped = strip_controls(text)
    if dropped:
        log.warning("report %s: %d control character(s) dropped (NUL, escape sequences, bidi controls)", path, dropped)
    return text  # strip_controls made every line end "\n"


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


def review_markdown(
    markdown: str,
    *,
    rules: Sequence[Rule] = (),
    mode: str | None = None,
    findings: Sequence[SkepticFindingLike] = (),
) -> Review:
    """Review report text with the lint (viability unscored); ``findings`` are the skeptic's
    findings of the run that wrote it, of which those whose claim still stands are issues."""
    return review_draft(
        markdown, target_words=_target_words(markdown, mode), rules=rules, findings=still_open(findings, markdown)
    )


def review_file(
    report: Path,
    *,
    rules: Path | None = None,
    mode: str | None = None,
    max_bytes: int = MAX_REPORT_BYTES,
    findings: Sequence[SkepticFindingLike] = (),
) -> Review:
    """Review the markdown file ``report`` as :func:`review_markdown` does."""
    markdown = read_report(report, max_bytes)
    loaded = load_rules(rules) if rules is not None else ()
    return review_markdown(markdown, rules=loaded, mode=mode, findings=findings)
