"""``research-agent doctor``: check the setup before a long run finds out the hard way.

The checks are :mod:`research_agent.service.setup.checks` (the workbench's settings page runs the
same ones); this command shows them as a table and exits 1 when one failed. A missing optional
extra ("missing"), a model that did not answer within ``--llm-timeout`` ("slow") or a web search
provider doctor sends no query ("untried") is no failure.
Doctor changes nothing, and with ``--offline`` it asks no scholarly search provider a test query.
"""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from ..config import load_settings
from ..service.setup.checks import SLOW, UNTRIED, failed, run_checks
from .boundary import console, guarded
from .run_options import MODEL, SOURCES, LlmTimeout, ReportsDir
from .terminal import markup

__all__ = ["doctor_command"]

_STATUS = {True: "[green]ok[/green]", False: "[red]fail[/red]", None: "[yellow]missing[/yellow]",
           SLOW: "[yellow]slow[/yellow]", UNTRIED: "[yellow]untried[/yellow]"}  # fmt: skip


@guarded
def doctor_command(
    timeout: Annotated[
        float, typer.Option("--timeout", metavar="SECONDS", help="How long to wait for the endpoint.",
                            rich_help_panel=MODEL)
    ] = 5.0,
    reports_dir: ReportsDir = None,
    offline: Annotated[
        bool, typer.Option("--offline", help="Do not ask the scholarly search providers a test query.",
                           rich_help_panel=SOURCES)
    ] = False,
    llm_timeout: LlmTimeout = None,
) -> None:
    """Check settings, the model endpoint, folders, search providers and optional extras; exit 1 if
    something is wrong.

    A model the server does not list is tried with a one-token completion, waited for as long
    as --llm-timeout: a busy one-slot server is "slow", not a model it does not serve."""
    import httpx

    out = console(stderr=False, highlight=False)
    settings = load_settings({"reports_dir": reports_dir, "llm_timeout": llm_timeout})
    with httpx.Client(timeout=timeout) as client:
        checks = run_checks(settings, client=client, offline=offline, timeout=timeout)
    table = Table(show_header=True, header_style="bold")
    for column in ("check", "status", "detail"):
        table.add_column(column)
    for what, ok, detail in checks:
        table.add_row(markup(what), _STATUS[ok], markup(detail))
    out.print(table)
    raise typer.Exit(1 if failed(checks) else 0)
