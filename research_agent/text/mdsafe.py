"""Make outside text inert in a markdown report: no live HTML, and no links but http(s) and file.

Outside text is anything the tool did not write itself: page and file titles, addresses,
the writer's and the skeptic's text (a model that read outside pages), relevance
reasons, provider errors. Three treatments:

- :func:`plain_text` for a title, a heading or a quoted line: tags and link syntax are
  stripped (their words kept), ``javascript:``/``vbscript:``/``data:`` lose their colon,
  and everything markdown or HTML would act on is escaped.
- :func:`defang_markdown` for the writer's markdown (summary, findings, bodies): its
  emphasis, lists and http(s) links stay; raw HTML is escaped, images become their alt
  text, links to any other scheme become their text.
- :func:`location_markdown` for a Sources address: always a link, an autolink
  ``<https://...>`` or, for a local file, ``<file:///...>`` (its absolute path as a URI),
  with every unsafe character percent-encoded.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath, PureWindowsPath
from urllib.parse import quote

from .citations import CITATION
from .controls import one_line
from .sanitize import sanitize

__all__ = ["plain_text", "plain_text_with_citations", "defang_markdown", "location_markdown", "code_span"]

# Every pattern here reads a character a bounded number of times (they run on model output of
# any size): a label stops at the next "[" (where the next attempt starts), so only innermost
# labels match, and a target always matches as far as it goes (possessive, closing paren optional).
_PAREN = r"\((?:[^()\n]|\([^()\n]*+\))*+\)?"  # a link target, one level of nested parentheses
_LABEL = r"\[([^\[\]\n]*+)\]"
_IMAGE = re.compile(r"!" + _LABEL + r"(?:" + _PAREN + r"|\[[^\[\]\n]*+\])")
_LINK = re.compile(_LABEL + r"(?:" + _PAREN + r"|\[[^\[\]\n]*+\])")
_TAG = re.compile(r"<!--.*?(?:-->|$)|</?[A-Za-z!?][^<>\n]*+>?", re.S)
_SCHEME_WORD = re.compile(r"\b(javascript|vbscript|data)(\s*):", re.I)
_ENTITY = re.compile(r"&(?=#?[A-Za-z0-9]+;)")
_SPECIAL = str.maketrans({c: "\\" + c for c in "\\`*_[]~|#!"})  # each one backslash-escaped
_LEADING_MARKER = re.compile(r"^(\d{1,9})([.)])|^([-+=])")


def _strip_markup(text: str) -> str:
    text = _IMAGE.sub(lambda m: f" {m.group(1)} ", text)
    text = _LINK.sub(lambda m: f" {m.group(1)} ", text)
    text = _TAG.sub(" ", text)
    return _SCHEME_WORD.sub(r"\1 ", text)


def _escape(text: str, *, at_start: bool = True) -> str:
    text = _ENTITY.sub("&amp;", text)
    text = text.replace("<", "&lt;").replace(">", "&gt;")
    text = text.translate(_SPECIAL)
    if not at_start:
        return text
    return _LEADING_MARKER.sub(
        lambda m: f"{m.group(1)}\\{m.group(2)}" if m.group(1) else f"\\{m.group(3)}", text
    )


def plain_text(text: str, *, max_chars: int | None = None) -> str:
    """One line of outside text that renders as exactly its words: nothing in it is live."""
    text = one_line(_strip_markup(sanitize(text or "", single_line=True)))
    if max_chars is not None and len(text) > max_chars:
        text = text[: max(0, max_chars - 1)].rstrip() + "…"
    return _escape(text)


def plain_text_with_citations(text: str, *, max_chars: int | None = None) -> str:
    """Like :func:`plain_text`, but citation markers such as ``[3]`` stay citations."""
    text = one_line(_strip_markup(sanitize(text or "", single_line=True)))
    if max_chars is not None and len(text) > max_chars:
        text = text[: max(0, max_chars - 1)].rstrip() + "…"
    pieces: list[str] = []
    last = 0
    for m in CITATION.finditer(text):
        pieces += [_escape(text[last : m.start()], at_start=not last), m.group(0)]
        last = m.end()
    pieces.append(_escape(text[last:], at_start=not last))
    return "".join(pieces)


_ALLOWED_LINK = re.compile(r"(?i)\s*<?\s*(?:https?|file)://")
_LINK_OR_IMAGE = re.compile(r"(!?)" + _LABEL + r"\(((?:[^()\n]|\([^()\n]*+\))*+)\)?")
_TARGET = re.compile(r"\]\(((?:[^()\n]|\([^()\n]*+\))*+)")
_REFERENCE_DEFINITION = re.compile(r"^( {0,3})\[([^\]\n]+)\]:[ \t]*<?(\S*)", re.M)
_RAW_TAG = re.compile(r"<(?=[A-Za-z/!?])")
_AUTOLINK = re.compile(r"<(?:https?|file)://[^\s<>]*+>", re.I)


def defang_markdown(text: str) -> str:
    """The writer's markdown with raw HTML escaped and only http(s)/file links left live."""

    def link(m: re.Match[str]) -> str:
        bang, words, target = m.groups()
        if bang:
            return words  # an image would be fetched from outside when the report is opened
        return m.group(0) if _ALLOWED_LINK.match(target) else words

    def definition(m: re.Match[str]) -> str:
        return (
            m.group(0)
            if _ALLOWED_LINK.match(m.group(3))
            else m.group(1) + "\\" + m.group(0)[len(m.group(1)) :]
        )

    text = _LINK_OR_IMAGE.sub(link, text)
    text = _REFERENCE_DEFINITION.sub(definition, text)
    text = _IMAGE.sub(lambda m: m.group(1), text)  # reference-style images: ![alt][ref]
    text = _unnest(text)
    return _RAW_TAG.sub(lambda m: "<" if _AUTOLINK.match(text, m.start()) else "&lt;", text)


def _unnest(text: str) -> str:
    """What one pass over innermost links leaves live when links were nested
    ("[a [b](javascript:x)](javascript:y)"): any other target is made literal
    ("]\\(") and no image syntax remains ("!\\[")."""
    text = _TARGET.sub(lambda m: m.group(0) if _ALLOWED_LINK.match(m.group(1)) else "]\\(" + m.group(1), text)
    return text.replace("![", "!\\[")


# ---------------------------------------------------------------------------------------
# Addresses in Sources
# ---------------------------------------------------------------------------------------

_URL_SAFE = ":/?#[]@!$&'()*+,;=%-._~"


def _quote_url(url: str) -> str:
    scheme, rest = url.split(":", 1)
    rest = quote(rest, safe=_URL_SAFE)
    return scheme.lower() + ":" + _SCHEME_WORD.sub(lambda m: m.group(1) + "%3A", rest)


def location_markdown(location: str) -> str:
    """A source's address as inert markdown, always a link: an http(s) autolink, or a file's
    ``file://`` URI (every path, whatever characters it holds, in the same style)."""
    location = (location or "").strip()
    if re.match(r"(?i)(?:https?|file)://", location):
        return f"<{_quote_url(location)}>"
    if location.startswith("/"):
        return f"<{_quote_url(PurePosixPath(location).as_uri())}>"
    if re.match(r"[A-Za-z]:[\\/]", location):
        return f"<{_quote_url(PureWindowsPath(location).as_uri())}>"
    return "(address not shown: not a web address or an absolute file path)"


def code_span(text: str, *, max_chars: int | None = None) -> str:
    """``text`` as one inline code span, shown as written but for tags and link syntax
    (stripped, words kept) and the colon of ``javascript:``-like schemes."""
    text = one_line(_strip_markup(sanitize(text or "", single_line=True)))
    if max_chars is not None and len(text) > max_chars:
        text = text[: max(0, max_chars - 1)].rstrip() + "…"
    text = text or " "
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"
