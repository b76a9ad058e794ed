"""Markdown reports for the review tests: front matter, a title, a body and a Sources list."""

from __future__ import annotations

FRONT = """---
query: "Do heat pumps work in cold climates?"
mode: standard
date: 2026-11-22
model: gpt-4o-mini
gate_decision: full_report
---
"""

SOURCES = """## Sources
1. Cold climate field study — https://example.com/study-2024
2. Department of Energy report — https://energy.gov/report
3. Installer survey — /home/me/docs/survey.md
"""


def report(body: str, *, sources: str = SOURCES, front: str = FRONT) -> str:
    """A full report: front matter, title, ``body`` (markdown sections) and a Sources list."""
    return f"{front}\n# Heat pumps in cold climates\n\n{body.strip()}\n\n{sources}"


CLEAN_BODY = """
## Executive Summary
Modern cold-climate heat pumps keep heating well below freezing [1]. Field trials found they cut energy use by 40% against oil boilers [2].

## Key Findings
- Performance holds down to -25 °C in tested units [1][2].
- Installers report that sizing mistakes cause most complaints [3].

## Adversarial Analysis
Critics point out that grid capacity and electricity prices decide the economics [2, 3].

## Limitations & Gaps
The sources cover few very cold regions, so conclusions there are tentative [1-3].
"""


def extra(text: str, *, sources: str = SOURCES) -> str:
    """The clean report with ``text`` as one more section (``## Extra``) before the Sources list."""
    return report(CLEAN_BODY + f"\n## Extra\n{text}\n", sources=sources)


def line_of(markdown: str, needle: str) -> int:
    """The 1-based number of the first line of ``markdown`` that contains ``needle``."""
    for number, line in enumerate(markdown.split("\n"), start=1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in report")


_WORDS = ("sizing", "noise", "defrost", "tariffs", "ducts", "insulation", "refrigerant", "controls")


def long_body(words: int) -> str:
    """Distinct cited paragraphs adding up to about ``words`` words of prose."""
    paragraphs = []
    count = 0
    i = 0
    while count < words:
        a, b = _WORDS[i % len(_WORDS)], _WORDS[(i // len(_WORDS)) % len(_WORDS)]
        text = (
            f"Paragraph {'x' * (i + 1)} explains how {a} interacts with {b} in real homes, "
            f"why installers care about {a}, and what owners notice about {b} over a winter [1]."
        )
        paragraphs.append(text)
        count += len(text.split()) - 1
        i += 1
    return CLEAN_BODY + "\n## Details\n" + "\n\n".join(paragraphs) + "\n"
