"""What printing a report to PDF may cost: pages, seconds and bytes in proportion to the report.

Chromium prints a citation-dense report at about 0.1 s and 150 KB a page (every citation is a link
annotation), so a report of 873 KB (13,000 lines of six citations each) printed to 72 MB in 48 s
at 1.4 GB of memory, just inside a fixed one-minute limit. The budget is set from the report
itself, before Chromium starts:

* **pages**: estimated from the markdown (a block's lines at :data:`LINE_CHARS` characters, a line
  between blocks, :data:`PAGE_LINES` lines a page); past :data:`MAX_PDF_PAGES` the report is refused
  at once (InputError, one line: export it as HTML), so no request holds a worker for a minute;
* **seconds**: :data:`BASE_SECONDS` plus :data:`SECONDS_A_PAGE` an estimated page, at most
  :data:`~.browser.PDF_TIMEOUT`: a print that overruns its own report's time is stopped;
* **bytes**: :data:`BASE_BYTES` plus :data:`BYTES_A_PAGE` an estimated page: a PDF past it (a page
  the estimate could not see) is refused, and nothing is written.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError, StorageError
from .browser import PDF_TIMEOUT, BrowserTimeout, print_pdf

__all__ = ["PdfBudget", "pdf_budget", "print_within", "MAX_PDF_PAGES"]

LINE_CHARS = 90
PAGE_LINES = 45
MAX_PDF_PAGES = 120  # a deep report prints to about 10-30; 120 pages take about 15 s
BASE_SECONDS = 20.0  # Chromium's start on a loaded machine
SECONDS_A_PAGE = 0.2
BASE_BYTES = 1 << 20
BYTES_A_PAGE = 300 * 1024


@dataclass(frozen=True)
class PdfBudget:
    """What the PDF of one report may take: ``pages`` (estimated), ``seconds`` and ``bytes``."""

    pages: int
    seconds: float
    bytes: int


def estimated_pages(markdown: str) -> int:
    """The pages ``markdown`` prints to, roughly: each line at :data:`LINE_CHARS` characters a
    printed line (a heading as two), a line between blocks, :data:`PAGE_LINES` lines a page."""
    lines = 0
    for line in markdown.splitlines():
        text = line.strip()
        if not text:
            lines += 1
            continue
        lines += -(-len(text) // LINE_CHARS) * (2 if text.startswith("#") else 1)
    return max(1, -(-lines // PAGE_LINES))


def pdf_budget(markdown: str, report: Path | str, *, timeout: float = PDF_TIMEOUT) -> PdfBudget:
    """The budget of the report at ``report`` (for messages), ``timeout`` at most; InputError when
    it would print to more than :data:`MAX_PDF_PAGES` pages."""
    pages = estimated_pages(markdown)
    if pages > MAX_PDF_PAGES:
        raise InputError(
            f"report {report}: too long to print as PDF (about {pages} pages; a PDF is printed up to "
            f"{MAX_PDF_PAGES}): export it as HTML instead (--format html)"
        )
    seconds = min(timeout, BASE_SECONDS + SECONDS_A_PAGE * pages)
    return PdfBudget(pages, seconds, BASE_BYTES + BYTES_A_PAGE * pages)


def print_within(browser: Path, html: str, budget: PdfBudget, report: Path | str) -> bytes:
    """The page ``html`` printed to PDF within ``budget``; StorageError (one line) past its time or size."""
    try:
        data = print_pdf(browser, html, timeout=budget.seconds)
    except BrowserTimeout as exc:
        raise BrowserTimeout(f"{exc} (the time a report of about {budget.pages} page(s) may take)") from None
    if len(data) > budget.bytes:
        raise StorageError(
            f"the PDF of report {report} came out at {len(data) / 1e6:.1f} MB, past the {budget.bytes / 1e6:.1f} MB "
            f"a report of about {budget.pages} page(s) may take; nothing was written (export it as HTML instead)"
        )
    return data
