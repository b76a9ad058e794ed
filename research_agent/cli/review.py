"""``research-agent review REPORT.md``: lint any markdown report on its own.

Exit codes: 0 when the report would be approved, 1 when it is rejected (an empty or
unstructured file included: it is no report), 2 when the report (missing, unreadable,
binary), the rules file or the mode cannot be used (an InputError, through the CLI's one
error boundary). The main app mounts :func:`review_command` as ``review``; ``app`` here
wraps it alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..config import MODES
from ..errors import InputError
from ..review.feedback import format_feedback
from ..review.markdown import parse_front_matter
from ..review.review import Review, review_draft
from ..review.rules import load_rules
from .boundary import guarded
from .terminal import dumps_json, echo

__all__ = ["review_command", "review_file", "read_report", "app", "MAX_REPORT_BYTES"]

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


def review_file(report: Path, *, rules: Path | None = None, mode: str | None = None) -> Review:
    """Review the markdown file ``report`` with lint only (no skeptic, viability unscored)."""
    markdown = read_report(report)
    loaded = load_rules(rules) if rules is not None else ()
    return review_draft(markdown, target_words=_target_words(markdown, mode), rules=loaded)


@guarded
def review_command(
    report: Annotated[Path, typer.Argument(help="The markdown report to review.", show_default=False)],
    json_output: Annotated[bool, typer.Option("--json", help="Print the review as JSON.")] = False,
    rules: Annotated[
        Path | None, typer.Option("--rules", help="A YAML file of custom lint rules.", show_default=False)
    ] = None,
    mode: Annotated[
        str | None,
        typer.Option(
            "--mode",
            help="Mode whose target length applies (default: the report's front matter).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Lint a markdown report: exit 0 when it would be approved, 1 when rejected."""
    review = review_file(report, rules=rules, mode=mode)
    if json_output:
        typer.echo(dumps_json(review.as_dict(), indent=2))
    else:
        echo(format_feedback(review))
    raise typer.Exit(0 if review.approved else 1)


app = typer.Typer(add_completion=False, help="Review a markdown report.")
app.command("review")(review_command)
