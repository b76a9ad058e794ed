"""Bytes to text: ONE set of rules for web pages and corpus files.

A fetched page and a corpus file holding the same bytes give the same title and
text. :func:`extract` is a plain function of picklable values with no I/O (it can
run in a thread or in a worker process); the caller says what the bytes are
(:func:`kind_for_mime`, :func:`kind_for_suffix`) and maps an :class:`Unreadable`
to its own vocabulary of failures.

The rules:

* **binary**: a known file signature, a NUL byte or more than 5% control characters
  in the first 8 KB means the bytes are not text (UTF-16 with a BOM excepted);
* **decoding** (:func:`decode_body`): a byte-order mark, then the declared charset
  (the HTTP header, then for HTML a ``<meta>`` charset or an XML declaration), then
  UTF-8, then windows-1252 (the WHATWG default), with ``latin-1``/``ascii`` labels
  read as windows-1252 and UTF-7 never honoured; undecodable bytes become U+FFFD,
  and text that is more than 30% U+FFFD is :data:`UNDECODABLE`;
* **HTML** (:mod:`.html_text`): the title from the page's own metadata, the main text
  from trafilatura, the visible text when that is tiny or the page is huge;
* **plain text**: a Markdown file's first heading (``# Title`` or ``Title`` over ``===``), a reStructuredText file's first
  underlined heading, or a text file's first line when it is short enough to be a
  title; whitespace collapsed within lines;
* **PDF**: pypdf's text of every page (or the first ``max_pdf_pages``) and the
  document's title, when the optional ``pypdf`` is installed.

In every kind, paragraphs are separated by blank lines (what passage splitting
relies on) and titles are one line of at most 300 characters. The title is kept apart
from the text: a Markdown or reST document that opens with its title heading, or a page
whose text opens with its title or ``<h1>``, has that line only as its title, unless it is
all the text (a text file's first line stays in its text: it may be a sentence). And no text carries markup
that would change the structure of a report quoting it (:func:`.html_text.plain_paragraphs`):
heading marks are cut from the start of every line (``# Setup`` reads ``Setup``), and lines
of rule or underline characters alone (``---``, ``***``, ``=====``) are dropped.
"""

from __future__ import annotations

import codecs
import functools
import importlib.util
import io
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType, ModuleType

from ..sources import Document
from ..text.controls import one_line
from .html_text import html_document, plain_paragraphs, unmarked

__all__ = [
    "Unreadable",
    "extract",
    "decode_body",
    "looks_binary",
    "kind_for_mime",
    "kind_for_suffix",
    "pdf_supported",
    "HTML",
    "PDF",
    "TEXT",
    "MARKDOWN",
    "RST",
    "BINARY",
    "UNDECODABLE",
    "BAD_PDF",
    "PDF_UNSUPPORTED",
    "BINARY_SAMPLE",
    "SUFFIX_KINDS",
]

log = logging.getLogger(__name__)

# What the bytes are.
HTML, PDF, TEXT, MARKDOWN, RST = "html", "pdf", "text", "markdown", "rst"
# Why they give no text (Unreadable.reason).
BINARY, UNDECODABLE, BAD_PDF, PDF_UNSUPPORTED = "binary", "undecodable", "bad_pdf", "pdf_unsupported"

BINARY_SAMPLE = 8192
_TITLE_MAX = 300
_TEXT_TITLE_MAX = 200  # a first line longer than this is prose, not a title
_UNDECODABLE_SHARE = 0.3
_MIME_KINDS = {"text/html": HTML, "application/xhtml+xml": HTML, "text/plain": TEXT, "application/pdf": PDF}
SUFFIX_KINDS: Mapping[str, str] = MappingProxyType({
    ".html": HTML, ".htm": HTML, ".txt": TEXT, ".md": MARKDOWN, ".markdown": MARKDOWN, ".rst": RST, ".pdf": PDF,
})  # fmt: skip
_MAGIC = (b"\x89PNG", b"GIF8", b"\xff\xd8\xff", b"PK\x03\x04", b"\x7fELF", b"\x1f\x8b", b"BZh", b"MZ\x90")
_CTRL = bytes(b for b in range(32) if b not in (9, 10, 12, 13)) + b"\x7f"
_META_CHARSET = re.compile(rb"""<meta[^<>]+?charset\s*=\s*["']?\s*([A-Za-z0-9_\-:.]+)""", re.IGNORECASE)
_XML_ENCODING = re.compile(rb"""<\?xml[^<>]+?encoding\s*=\s*["']([A-Za-z0-9_.\-]+)""", re.IGNORECASE)
# WHATWG: these labels mean windows-1252 in practice.
_WINDOWS_1252 = {"latin-1", "latin1", "iso-8859-1", "iso8859-1", "l1", "ascii", "us-ascii", "iso-ir-100"}
_BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
_MD_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]++(.*\S.*)$", re.MULTILINE)  # closing "#"s cut in code
_MD_SETEXT = re.compile(r"^[ \t]{0,3}(\S[^\n]*)\n[ \t]{0,3}(?:=+|-+)[ \t]*$", re.MULTILINE)  # Title\n=====
_RST_UNDERLINE = re.compile(r"^([=\-~^#*+`'\".:_])\1{2,}\s*$")


@dataclass(frozen=True)
class Unreadable:
    """Why bytes give no text: ``reason`` is BINARY, UNDECODABLE, BAD_PDF or PDF_UNSUPPORTED."""

    reason: str
    detail: str = ""


def kind_for_mime(mime: str) -> str | None:
    """The kind of a body served as ``mime`` (no parameters), or None when not text."""
    return _MIME_KINDS.get(mime.strip().lower())


def kind_for_suffix(suffix: str) -> str | None:
    """The kind of a file whose name ends in ``suffix`` (".md"), or None when not indexable."""
    return SUFFIX_KINDS.get(suffix.lower())


def pdf_supported() -> bool:
    """True when the optional ``pypdf`` dependency is installed."""
    return importlib.util.find_spec("pypdf") is not None


def looks_binary(sample: bytes, charset: str | None = None) -> bool:
    """Whether the first bytes of a body are not text, whatever it claims to be."""
    if not sample:
        return False
    if charset and charset.lower().replace("_", "-").startswith(("utf-16", "utf-32")):
        return False
    if sample.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return False
    if sample.startswith(_MAGIC) or b"\x00" in sample:
        return True
    controls = len(sample) - len(sample.translate(None, _CTRL))
    return controls / len(sample) > 0.05


def _codec(label: str | None) -> str | None:
    if not label:
        return None
    label = label.strip().lower()
    if label in _WINDOWS_1252:
        return "cp1252"
    try:
        name = codecs.lookup(label).name
    except LookupError:
        return None
    return None if name == "utf-7" else name


def _declared_in_document(data: bytes) -> str | None:
    """The charset an HTML document declares for itself (``<meta>``, else ``<?xml ... ?>``)."""
    head = data[:4096]
    match = _META_CHARSET.search(head) or _XML_ENCODING.search(head)
    declared = _codec(match.group(1).decode("ascii", "ignore")) if match else None
    # WHATWG: a UTF-16/32 label found by reading the bytes as ASCII cannot be true.
    if declared is not None and declared.startswith(("utf-16", "utf-32")):
        return "utf-8"
    return declared


def decode_body(data: bytes, header_charset: str | None, *, html: bool) -> str:
    """Decode bytes: BOM, then the declared charset (header, then meta/XML declaration
    for HTML), then UTF-8, then windows-1252; undecodable bytes become U+FFFD."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            return data.decode(name, errors="replace")
    declared = _codec(header_charset)
    if declared is None and html:
        declared = _declared_in_document(data)
    if declared is not None:
        return data.decode(declared, errors="replace")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        lenient = data.decode("utf-8", errors="replace")
    # Stray bytes in a text of valid UTF-8 sequences are damage; when invalid bytes
    # outnumber the valid non-ASCII characters (or there are none), it is a single-byte charset.
    bad = lenient.count("\ufffd")
    good = sum(1 for ch in lenient if ord(ch) > 127) - bad
    if good >= bad and good > 0:
        return lenient
    return data.decode("cp1252", errors="replace")


def _title(text: str) -> str:
    return one_line(text)[:_TITLE_MAX]


def _text_title(text: str, kind: str) -> str:
    """A plain-text document's own title: heading (Markdown, reST) or a short first line."""
    head = text[:20_000]
    if kind == MARKDOWN:
        found = [m for m in (_MD_HEADING.search(head), _MD_SETEXT.search(head)) if m is not None]
        if not found:
            return ""
        match = min(found, key=lambda m: m.start())
        return match.group(1).rstrip().rstrip("#").rstrip() or match.group(1).strip()
    if kind == RST:
        lines = head.splitlines()
        for i in range(len(lines) - 1):
            line = lines[i].strip()
            if line and not _RST_UNDERLINE.match(line) and _RST_UNDERLINE.match(lines[i + 1].strip()):
                return line
        return ""
    first = next((line.strip() for line in head.splitlines() if line.strip()), "")
    return first if len(first) <= _TEXT_TITLE_MAX else ""


@functools.cache
def _pypdf() -> ModuleType | None:  # pragma: no cover - depends on the optional extra
    try:
        import pypdf
    except ImportError:
        return None
    return pypdf


def _pdf_document(
    data: bytes, max_pages: int | None
) -> Document | Unreadable:  # pragma: no cover - optional extra
    pypdf = _pypdf()
    if pypdf is None:
        from ..version import extra_hint  # only on this path: workers import extraction alone

        return Unreadable(PDF_UNSUPPORTED, extra_hint("pdf"))
    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        pages = reader.pages if max_pages is None else reader.pages[:max_pages]
        texts = [page.extract_text() or "" for page in pages]
        meta = reader.metadata
        title = str(meta.title) if meta is not None and meta.title else ""
    except Exception as exc:  # pypdf raises a wide variety of errors on damaged files
        log.debug("pypdf could not read a document: %s", exc)
        return Unreadable(BAD_PDF, f"{type(exc).__name__}: {exc}"[:200])
    return Document(title=_title(title), text=plain_paragraphs("\n\n".join(texts), titles=(title,)))


def extract(
    data: bytes,
    kind: str,
    *,
    charset: str | None = None,
    url: str = "",
    with_date: bool = False,
    max_pdf_pages: int | None = None,
) -> Document | Unreadable:
    """The title and text of ``data``, which is of ``kind`` (HTML, PDF, TEXT, MARKDOWN, RST).

    ``charset`` is a declared charset (an HTTP header's); ``url`` where an HTML page
    came from, for trafilatura; ``with_date`` asks for an HTML page's publication date
    (it costs about 10 ms a page). No I/O; never raises for anything the bytes hold.
    """
    if kind == PDF:
        return _pdf_document(data, max_pdf_pages)
    if looks_binary(data[:BINARY_SAMPLE], charset):
        return Unreadable(BINARY)
    text = decode_body(data, charset, html=kind == HTML)
    if text and text.count("\ufffd") > _UNDECODABLE_SHARE * len(text):
        return Unreadable(UNDECODABLE, "mostly undecodable text")
    if kind == HTML:
        page = html_document(text, url=url, with_date=with_date)
        return Document(_title(page.title), page.text, page.date, _title(page.site_name))
    title = _title(unmarked(_text_title(text, kind).strip()))
    return Document(title=title, text=plain_paragraphs(text, titles=(title,) if kind in (MARKDOWN, RST) else ()))
