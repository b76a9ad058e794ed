"""``research-agent review REPORT.md``: lint any markdown report on its own, and check its claims.

Exit codes: 0 when the report would be approved, 1 when it is rejected (an empty or
unstructured file included: it is no report), 2 when the report (missing, unreadable,
not UTF-8 text, or larger than the setting ``review_max_bytes``), the rules file or the mode cannot be used (an InputError, through the CLI's one
error boundary). A report the tool wrote gets its run's verdict: the lint reads it as the run read
its draft, and the skeptic's findings its run record keeps (beside the report, else in the reports
folder) count while their claims still stand in the text. Reading the file and the verdict are :mod:`research_agent.review.report_file`'s,
which the MCP server's ``review_report`` tool uses too. The main app mounts :func:`review_command` as ``review``; ``app`` here
wraps it alone.

``--check-claims`` also checks every cited sentence against its stored passage with the
configured model (:mod:`research_agent.run.claims.on_report`): without an endpoint it says what to
set (exit 2); an unsupported claim the report does not mark "[Disputed]" rejects it (exit 1).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..config import Settings, load_settings
from ..interrupts import run_interruptibly
from ..review.feedback import format_feedback
from ..review.report_file import read_report, review_file, review_markdown
from ..review.rules import load_rules
from ..run.stored import run_findings
from .boundary import guarded
from .terminal import dumps_json, echo

if TYPE_CHECKING:
    from ..run.claims.on_report import ReportClaims

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
    check_claims: Annotated[
        bool,
        typer.Option(
            "--check-claims",
            help="Also check each cited sentence against its stored passage with the model "
            "(needs an endpoint); an unmarked unsupported claim rejects the report.",
        ),
    ] = False,
    reports_dir: Annotated[
        Path | None,
        typer.Option(
            "--reports-dir",
            help="Where a copied report's run is looked up (RESEARCH_AGENT_REPORTS_DIR).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Lint a markdown report: exit 0 when it would be approved, 1 when rejected."""
    settings = load_settings({"reports_dir": reports_dir})
    markdown = read_report(report, settings.review_max_bytes)
    review = review_markdown(
        markdown,
        rules=load_rules(rules) if rules is not None else (),
        mode=mode,
        findings=run_findings(report, markdown, settings.reports_dir),
    )
    claims = _check_claims(report, settings) if check_claims else None
    approved = review.approved and (claims is None or not claims.open_unsupported)
    if json_output:
        data = review.as_dict()
        if claims is not None:
            data["claims"] = claims.as_dict()
        typer.echo(dumps_json(data, indent=2))
    else:
        echo(format_feedback(review))
        if claims is not None:
            echo("\n" + "\n".join(claims.lines()))
    raise typer.Exit(0 if approved else 1)


def _check_claims(report: Path, settings: Settings) -> ReportClaims:
    """The claim check of the report at ``report``; without an endpoint, the usual ConfigError first."""
    from ..llm import OpenAIChatModel
    from ..run.claims.on_report import (  # the model layer loads only when asked
        check_report_claims,
        report_evidence,
    )

    model = OpenAIChatModel.from_settings(settings)

    async def check() -> ReportClaims:
        async with model:
            markdown = read_report(report, settings.review_max_bytes)
            store, query = report_evidence(report, markdown, settings.reports_dir)
            return await check_report_claims(model, markdown, store, query=query, budget=settings.claim_tokens)

    return run_interruptibly(check())


app = typer.Typer(add_completion=False, help="Review a markdown report.")
app.command("review")(review_command)
