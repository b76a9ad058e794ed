"""A report as one self-contained HTML page: the template and style from the package, the body
from :mod:`.markup`, and a small header of what the front matter says about the run.

The page needs nothing from outside: the CSS is inline, there is no script, font or image,
and its Content-Security-Policy forbids loading any (defence in depth: nothing outside is
rendered live in the first place). Every front matter value is escaped, and the finished page
holds no control character (:func:`research_agent.text.controls.without_controls`: NUL, escape
sequences, C1 controls, bidi overrides), whatever the report, its passages or a numeric
character reference in it held.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from html import escape
from importlib import resources
from string import Template
from typing import Any

from ..record.passages import PassageStore
from ..review.markdown import split_front_matter
from ..text.controls import one_line, without_controls
from ..version import __version__
from .markup import MAX_SHOWN_CHARS, render_body

__all__ = ["Page", "render_page", "NO_PASSAGES"]

# What the header says when a report's passages cannot be shown (the reason follows).
NO_PASSAGES = "Citation previews are not available"

# Front matter keys shown in the header, in order, with their labels.
_FACTS = (
    ("query", "Question"),
    ("date", "Date"),
    ("mode", "Mode"),
    ("model", "Model"),
    ("gate_decision", "Evidence"),
    ("review", "Review"),
    ("id", "Run"),
)
_MAX_VALUE_CHARS = 600


@dataclass(frozen=True)
class Page:
    """The page's HTML, and what it shows: citation links made, with a preview, unresolved."""

    html: str
    citations: int
    previews: int
    unresolved: tuple[int, ...]


@cache
def _asset(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def _value(value: Any) -> str:
    """A front matter value as one line of text (a nested value is not shown)."""
    if isinstance(value, bool) or value is None or isinstance(value, dict | list):
        return ""
    text = one_line(value)
    return text if len(text) <= _MAX_VALUE_CHARS else text[: _MAX_VALUE_CHARS - 1] + "\u2026"


def _facts_html(front: Mapping[str, Any]) -> str:
    rows = []
    for key, label in _FACTS:
        text = _value(front.get(key))
        if not text:
            continue
        if key == "gate_decision":
            text = text.replace("_", " ")
        shown = escape(text)
        if key == "review":
            status = "".join(c for c in text.lower() if c.isalnum())[:20]
            shown = f'<span class="status status-{status}">{shown}</span>'
        rows.append(f"<dt>{escape(label)}</dt><dd>{shown}</dd>")
    return f'<dl class="facts">{"".join(rows)}</dl>' if rows else ""


def render_page(
    markdown: str, passages: PassageStore | None, *, notes: tuple[str, ...] = (), local_files: bool = False
) -> Page:
    """The page of the report ``markdown``; citations preview their passage from ``passages``
    (None: no previews). ``notes`` are lines shown under the header (escaped). ``local_files``:
    the report was written by this tool, so its local paths may be ``file:///`` links."""
    front, body_text = split_front_matter(markdown)
    body = render_body(body_text, passages.passage if passages is not None else None, local_files=local_files)
    title_text = body.heading_text.strip() or _value(front.get("query")) or "Research report"
    if len(title_text) > MAX_SHOWN_CHARS:
        title_text = title_text[: MAX_SHOWN_CHARS - 1].rstrip() + "\u2026"
    page = Template(_asset("report.html")).substitute(
        title=escape(title_text),
        heading=body.heading_html or escape(title_text),
        style=_asset("report.css").strip() + ("\n" + body.tips_css if body.tips_css else ""),
        facts=_facts_html(front),
        notes="".join(f'<p class="note">{escape(note)}</p>' for note in notes),
        body=body.html,
        tips=f'<aside class="previews">{body.tips_html}</aside>' if body.tips_html else "",
        footer=escape(
            f"Exported by research-agent {__version__}. Hover over or focus a citation to read the passage "
            "of its source that the writer was given."
            if body.previews
            else f"Exported by research-agent {__version__}."
        ),
        generator=escape(f"research-agent {__version__}"),
    )
    return Page(without_controls(page), body.citations, body.previews, tuple(dict.fromkeys(body.unresolved)))
