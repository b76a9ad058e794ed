"""A report's page: the export's self-contained HTML, as ``research-agent export`` writes it, with
the workbench's bar above it and the run record's details beside it.

The export's page is used as it is (its citations preview their passage on hover and focus,
its own Content Security Policy allows no script); the bar and the details, made by the
templates, go in at the page's fixed landmarks: after ``<body>``, before ``<footer>``, and
their style (inline, as the export's own: that policy allows no style sheet from a URL)
before ``</head>``.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

__all__ = ["with_details", "LANDMARKS"]

LANDMARKS = ("</head>", "<body>", "<footer>")


@cache
def _style() -> str:
    return resources.files("research_agent.web").joinpath("static", "report-page.css").read_text(encoding="utf-8")


def with_details(page: str, bar: str, details: str) -> str:
    """``page`` (the export's HTML) with ``bar`` at its top and ``details`` after its body."""
    missing = [mark for mark in LANDMARKS if mark not in page]
    if missing:
        raise ValueError(f"the export's page has no {missing[0]}")
    head, rest = page.split("</head>", 1)
    start, rest = rest.split("<body>", 1)
    body, end = rest.rsplit("<footer>", 1)
    return (
        f"{head}<link rel=\"icon\" href=\"data:,\">\n<style>\n{_style()}</style>\n</head>{start}<body class=\"workbench-report\">\n{bar}\n"
        f"{body}{details}\n<footer>{end}"
    )
