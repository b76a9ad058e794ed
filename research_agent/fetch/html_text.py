"""HTML to text, for web pages and corpus files alike (see :mod:`.extract` for all the rules).

* The **title** and **site name** come from the page's own metadata (``og:title``,
  ``twitter:title``, ``<title>``, the first ``<h1>``; ``og:site_name``,
  ``application-name``); the **date**, when asked for, from htmldate restricted to
  markup (no guessing from prose, never a download).
* The **main text** comes from trafilatura in its fast mode (it skips the
  readability/justext second opinions: about 3x faster on long pages, and it keeps the
  lists that its recall mode drops from tables of contents and indexes).
* When that text is under 200 characters, the page's **visible text** (without
  scripts, styles and ``<head>``) is used instead if it is longer. Pages over
  :data:`TRAFILATURA_MAX_CHARS` (generated indexes) cost trafilatura seconds and tens
  of MB each for little gain: they get the visible text straight away. So does every
  page when trafilatura cannot be imported (logged once).
* Every line of text is one paragraph, separated from the next by a blank line.
* The page's heading is kept apart from its text: a first line that repeats the title or the first
  ``<h1>`` is dropped (:func:`plain_paragraphs`, which also keeps markdown structure out).
* Permalink marks (Sphinx's and MkDocs' ``¶`` after each heading) are dropped before any of
  it is read: they are no text, and showed in search snippets and citation previews.

lxml, trafilatura and htmldate are imported on first use, never at module import.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Iterable
from typing import Any

from ..sources import Document
from ..text.controls import one_line

__all__ = ["html_document", "clean_lines", "plain_paragraphs", "unmarked", "TRAFILATURA_MAX_CHARS"]

log = logging.getLogger(__name__)

TRAFILATURA_MAX_CHARS = 1_000_000
_FALLBACK_MIN_CHARS = 200
_BLOCK_TAGS = (
    "p", "div", "br", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "table",
    "section", "article", "header", "footer", "blockquote", "pre", "dd", "dt", "dl", "main",
)  # fmt: skip
_DROP_TAGS = ("script", "style", "noscript", "template", "svg", "iframe", "object", "head")


def clean_lines(text: str) -> str:
    """Whitespace collapsed within each line, runs of blank lines cut to one, ends trimmed."""
    lines = [one_line(line) for line in text.splitlines()]
    out: list[str] = []
    for line in lines:
        if line or (out and out[-1]):
            out.append(line)
    return "\n".join(out).strip().replace("\n\n\n", "\n\n")


# On a cleaned line (no leading blanks): a markdown heading's marks, and its closing marks after a blank.
_HEADING_MARKS = re.compile(r"^#{1,6}(?:\s+|$)")
_CLOSING_MARKS = re.compile(r"\s+#+$")
# A line of nothing but rule or underline characters: a markdown rule or setext underline, a reST adornment.
_RULE_LINE = re.compile(r"^[-=_*~^`'\".:+#\s]+$")


def unmarked(line: str) -> str:
    """One cleaned line without the marks that would make it a markdown heading (its words kept)."""
    if not _HEADING_MARKS.match(line):
        return line
    return _CLOSING_MARKS.sub("", _HEADING_MARKS.sub("", line, count=1)).strip()


def plain_paragraphs(text: str, *, titles: Iterable[str] = ()) -> str:
    """``text`` as :func:`clean_lines` makes it, with nothing that would change the structure of a
    report it is quoted in: no heading marks at the start of a line (its words stay), no line of
    rule or underline characters alone; and without a first line that only repeats one of ``titles``
    (the document's title is kept apart from its text), unless nothing else is left."""
    lines = [line for line in map(unmarked, clean_lines(text).split("\n")) if not _RULE_LINE.match(line)]
    repeated = {one_line(t).casefold() for t in titles if t.strip()}
    if any(lines[1:]) and lines[0].casefold() in repeated:  # a page that is only its title keeps it
        lines = lines[1:]
    return clean_lines("\n".join(lines))


def _parse(markup: str) -> Any:
    """An lxml tree of ``markup`` without its permalink marks, or None when there is no document to parse."""
    import lxml.html
    from lxml.etree import ParserError

    try:
        tree = lxml.html.document_fromstring(markup)
    except (ParserError, ValueError):
        return None
    for link in tree.xpath(_PERMALINKS):
        link.drop_tree()  # its tail (the text after it) stays
    return tree


# The marks documentation generators put after a heading to link to it (Sphinx's and MkDocs'
# "¶", "#" or "§"): a link into the page whose text is only the mark, or Sphinx's headerlink class.
_PERMALINKS = (
    "//a[contains(concat(' ', normalize-space(@class), ' '), ' headerlink ')"
    " or (starts-with(@href, '#') and (normalize-space(.) = '\u00b6' or normalize-space(.) = '#'"
    " or normalize-space(.) = '\u00a7'))]"
)


@functools.cache
def _trafilatura() -> Any:
    try:
        import trafilatura
    except ImportError as exc:
        log.warning("trafilatura cannot be imported (%s); HTML is read as its visible text", exc)
        return None
    return trafilatura


def _meta_content(tree: Any, *names: str) -> str:
    for name in names:
        for value in tree.xpath(f'//meta[@property="{name}" or @name="{name}"]/@content'):
            text = one_line(value)
            if text:
                return text
    return ""


def _first_text(tree: Any, xpath: str) -> str:
    for el in tree.xpath(xpath):
        text = one_line(el.text_content())
        if text:
            return text
    return ""


def _page_date(tree: Any) -> str | None:
    from htmldate import find_date

    try:
        # Always a parsed tree, never a string: given a string that looks like a URL,
        # htmldate would download it.
        date = find_date(tree, extensive_search=False, original_date=True, outputformat="%Y-%m-%d")
    except Exception:  # htmldate raises assorted errors on odd markup; a page without a date is fine
        log.debug("date extraction failed", exc_info=True)
        date = None
    return date or None


def _visible_text(tree: Any) -> str:
    """The text a reader sees: no scripts, styles or head, blocks as paragraphs (``tree`` is changed)."""
    if tree is None:
        return ""
    for bad in tree.xpath("|".join(f"//{t}" for t in _DROP_TAGS)):
        bad.drop_tree()
    for el in tree.iter(*_BLOCK_TAGS):
        el.tail = "\n\n" + (el.tail or "")
    return clean_lines(tree.text_content())


def _trafilatura_text(tree: Any, url: str) -> str:
    trafilatura = _trafilatura()
    if trafilatura is None:
        return ""
    try:
        doc = trafilatura.bare_extraction(
            tree,
            url=url or None,
            fast=True,
            with_metadata=False,
            include_comments=False,
            include_tables=True,
            include_images=False,
            include_links=False,
        )
    except Exception as exc:  # trafilatura/lxml raise many kinds on odd markup
        log.debug("trafilatura failed on a page (%s); using its visible text", exc)
        return ""
    text = (getattr(doc, "text", None) or "") if doc is not None else ""
    # trafilatura separates blocks with single newlines; passages split on blank lines.
    return "\n\n".join(line for line in (one_line(x) for x in text.splitlines()) if line)


def _without_xml_declaration(markup: str) -> str:
    """``markup`` without a leading ``<?xml ...>`` (up to its first ``>``, or all of it when there is
    none): lxml refuses a str with an encoding declaration, and libxml2 takes time quadratic in
    the blanks of one (2 s for 40 KB of them)."""
    start = len(markup) - len(markup.lstrip())
    if markup[start : start + 5].lower() != "<?xml":
        return markup
    end = markup.find(">", start)
    return "" if end < 0 else markup[end + 1 :]


def html_document(markup: str, *, url: str = "", with_date: bool = False) -> Document:
    """Title, main text, site name (and date when ``with_date``) of an HTML document."""
    tree = _parse(_without_xml_declaration(markup))
    if tree is None:
        return Document(title="", text="")
    title = (
        _meta_content(tree, "og:title", "twitter:title")
        or _first_text(tree, "//title")
        or _first_text(tree, "//h1")
    )
    site = _meta_content(tree, "og:site_name", "application-name")
    date = _page_date(tree) if with_date else None
    headings = (title, _first_text(tree, "//h1"))
    if len(markup) > TRAFILATURA_MAX_CHARS:
        # Read from the tree already parsed: a second tree of a page this big costs tens of MB.
        text = _visible_text(tree)
    else:
        text = _trafilatura_text(tree, url)
        if len(text) < _FALLBACK_MIN_CHARS:
            del tree  # trafilatura may have changed it; free it before parsing afresh
            visible = _visible_text(_parse(markup))
            if len(visible) > len(text):
                text = visible
    return Document(title=title, text=plain_paragraphs(text, titles=headings), date=date, site_name=site)
