"""``research-agent review REPORT.md``: lint any markdown report on its own.

Exit codes: 0 when the report would be approved, 1 when it is rejected (an empty or
unstructured file included: it is no report), 2 when the report (missing, unreadable,
binary, or larger than the setting ``review_max_bytes``), the rules file or the mode cannot be used (an InputError, through the CLI's one
error boundary). Reading the file and the verdict are :mod:`research_agent.review.report_file`'s,
which the MCP server's ``review_report`` tool uses too. The main app mounts :func:`review_command` as ``review``; ``app`` here
wraps it alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..config import load_settings
from ..review.feedback import format_feedback
from ..review.report_file import review_file
from .boundary import guarded
from .terminal import dumps_json, echo

__all__ = ["review_command", "review_file", "app"]


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
    review = review_file(report, rules=rules, mode=mode, max_bytes=load_settings().review_max_bytes)
    if json_output:
        typer.echo(dumps_json(review.as_dict(), indent=2))
    else:
        echo(format_feedback(review))
    raise typer.Exit(0 if review.approved else 1)


app = typer.Typer(add_completion=False, help="Review a markdown report.")
app.command("review")(review_command)
