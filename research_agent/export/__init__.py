"""Reports people read and click: one self-contained HTML page per report, and PDF through Chromium.

* :mod:`.markup`   the markdown body as HTML (markdown-it-py): citations link to their source
  entries and preview the cited passage; sources link to their URL or file
* :mod:`.page`     the page: template and style from the package, the front matter's facts
* :mod:`.files`    finding a report and its passages, writing HTML or PDF atomically
* :mod:`.browser`  headless Chromium, off the network: print to PDF, dump the DOM, screenshot
* :mod:`.budget`   what a PDF may cost (pages, seconds, bytes) in proportion to its report

The passages come from the run's store (:mod:`research_agent.record.passages`); a citation's
passage is :func:`research_agent.text.passage_window.best_window`.
"""

from .browser import find_browser
from .files import FORMATS, Exported, check_destination, export_path, export_report, find_report, report_page
from .page import Page, render_page

__all__ = [
    "FORMATS",
    "Exported",
    "Page",
    "check_destination",
    "export_path",
    "export_report",
    "find_browser",
    "find_report",
    "render_page",
    "report_page",
]
