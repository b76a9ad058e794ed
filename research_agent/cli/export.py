"""``research-agent export REPORT --format html|pdf``: a report as one HTML page, or as PDF.

REPORT is a path or a run reference (full or short id, a unique prefix, ``latest``,
``latest~N``) looked up in the reports folder. The page is written beside
the report unless ``--output`` says where; its path is printed on stdout. A report whose
passages were not stored still exports, without citation previews, and says so in one
line on stderr. PDF needs Chromium: without one, one line says what to install (exit 2).
:func:`export_after_run` is ``run --format``'s step after the run.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from ..config import load_settings
from ..errors import InputError, ResearchError, StorageError, error_message
from ..files.output import check_output_path
from .boundary import guarded, stderr_console
from .terminal import echo, markup, visible_line

if TYPE_CHECKING:
    from ..export import Exported

__all__ = [
    "export_command",
    "ExportPlan",
    "plan_export",
    "export_after_run",
    "print_note",
    "Format",
    "Browser",
    "FORMAT_HELP",
    "BROWSER_HELP",
]

RunFormat = Literal["md", "html", "pdf"]  # what run --format writes: md is the report alone
_RUN_FORMATS: dict[str, RunFormat] = {"md": "md", "html": "html", "pdf": "pdf"}
FORMAT_HELP = "html (one self-contained page) or pdf (printed by headless Chromium)."
BROWSER_HELP = "The Chromium to print PDF with (default: chromium on PATH)."
Format = Annotated[str, typer.Option("--format", "-f", help=FORMAT_HELP)]
Browser = Annotated[Path | None, typer.Option("--browser", help=BROWSER_HELP, show_default=False)]


@guarded
def export_command(
    report: Annotated[
        str, typer.Argument(help="The report: a path to its markdown, or its run's id, short id, prefix or latest.")
    ],
    fmt: Format = "html",
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Write here (default: beside the report).", show_default=False),
    ] = None,
    browser: Browser = None,
    reports_dir: Annotated[
        Path | None,
        typer.Option("--reports-dir", help="Where run ids are looked up (RESEARCH_AGENT_REPORTS_DIR)."),
    ] = None,
) -> None:
    """Export a report as one self-contained HTML page whose citations preview their passage, or as PDF."""
    # imported when used, here and below: every command starts lighter
    from ..export import export_path, export_report, find_report

    settings = load_settings({"reports_dir": reports_dir})
    path = find_report(settings.reports_dir, report)
    if output is not None and output.resolve() != path.resolve():  # (onto the report itself: export says so)
        check_output_path(output, reports_dir=settings.reports_dir, cache_dir=settings.cache_dir,
                          own=[export_path(path, fmt.lower())])  # fmt: skip
    exported = export_report(
        path, fmt=fmt.lower(), reports_dir=settings.reports_dir, output=output, browser=browser
    )
    echo(exported.path)
    print_note(exported)


def print_note(exported: Exported) -> None:
    """The one line on stderr saying why citations show no passage, when they do not."""
    if exported.note:
        stderr_console().print(
            f"[yellow]note:[/yellow] {markup(visible_line(exported.note))}", markup=True, soft_wrap=True
        )


@dataclass(frozen=True)
class ExportPlan:
    """What ``run --format`` will export once the report is written: checked before the run."""

    format: RunFormat
    output: Path | None  # where the export goes (default: beside the report)
    browser: Path | None  # the Chromium found for pdf


def plan_export(fmt: str, output: Path | None, browser: Path | None) -> ExportPlan:
    """Check ``run --format`` before any model call: a known format, a usable output, and for
    pdf a Chromium to print with (ConfigError, exit 2, saying what to install)."""
    fmt = fmt.lower()
    chosen = _RUN_FORMATS.get(fmt)
    if chosen is None:
        raise InputError(f"unknown format {fmt[:20]!r}: choose md, html or pdf")
    if chosen == "md":
        return ExportPlan(chosen, output, None)
    from ..export import check_destination, find_browser

    found = find_browser(browser) if chosen == "pdf" else None
    if output is not None:
        check_destination(output)
    return ExportPlan(chosen, output, found)


def export_after_run(plan: ExportPlan, report: Path, reports_dir: Path) -> Exported:
    """Export the report a run wrote; StorageError naming the written markdown when that fails."""
    from ..export import export_path, export_report

    output = plan.output if plan.output is not None else export_path(report, plan.format)
    try:
        return export_report(
            report, fmt=plan.format, reports_dir=reports_dir, output=output, browser=plan.browser
        )
    except ResearchError as exc:
        raise StorageError(
            f"the report is written ({report}), but its {plan.format} export failed: {error_message(exc)}"
        ) from None
