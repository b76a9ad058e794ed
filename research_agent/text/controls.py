"""Model text is text: terminal and bidi controls stripped from what a model or a stranger wrote.

A model answer (the streamed writer, a structured answer, a critique) or a report someone else
wrote can carry bytes that are not text to a reader: NUL (which makes the tool read its own
report as a binary file), BEL, escape sequences that recolour a terminal or retitle its window
when someone ``cat``\\ s the report (ANSI CSI ``ESC [ … m`` and OSC ``ESC ] … BEL``), the C1
controls, and the bidi overrides and isolates that make text read in another order than it is
stored (U+202E). :func:`strip_controls` removes them and says how many characters went, so a
caller can record the count; newline and tab stay, and a carriage return becomes a newline.

Whole escape sequences go, not only their ESC, so that ``ESC [ 3 1 m`` does not leave ``[31m``
behind. A sequence is bounded (an OSC body by 512 characters, on one line): an unterminated one
loses only its introducer, so a lone ``ESC ]`` can never swallow the rest of a report. Every
pattern here runs in time linear in the text.

:func:`one_line` puts any text on one line (its runs of white space, newlines included, one space);
:func:`hide_keys` shows a key-like query parameter or a bearer token of a logged address or header
as ``***`` (a library's "HTTP Request: GET ...?api_key=..." line).
"""

from __future__ import annotations

import re

__all__ = ["strip_controls", "without_controls", "has_controls", "one_line", "hide_keys"]

# A terminated OSC (ESC ] or the C1 OSC 0x9d, ended by BEL, ST = ESC \ or the C1 ST 0x9c);
# a CSI (ESC [ or the C1 CSI 0x9b: parameters, intermediates, a final byte); any other
# two-character escape (ESC and one byte from @ to _ or a charset designator).
_SEQUENCE = re.compile(
    r"(?:\x1b\]|\x9d)[^\x07\x1b\x9c\n]{0,512}(?:\x07|\x1b\\|\x9c)"
    r"|(?:\x1b\[|\x9b)[0-?]{0,64}[ -/]{0,16}[@-~]"
    r"|\x1b[()*+][0-~]|\x1b[@-Z\\^_]"
)
# C0 except tab and newline (a CR is handled first), DEL and C1; the bidi embeddings,
# overrides, isolates and marks (LRM, RLM, ALM).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# A key in an address's query (``?api_key=...``, ``&token=...``) or an Authorization header's bearer token.
_KEY = re.compile(r"(?i)([?&][\w.-]*(?:key|token|secret|password)[\w.-]*=)[^&\s\"'#]+|(\bbearer\s+)[^\s\"',]+")


def has_controls(text: str) -> bool:
    """True when ``text`` holds a character :func:`strip_controls` would drop or change."""
    return bool(text) and _CONTROL.search(text) is not None


def strip_controls(text: str) -> tuple[str, int]:
    """``text`` without controls, escape sequences and bidi formatting, and how many characters
    were dropped. CRLF and a lone CR become one newline (not counted as dropped)."""
    if not has_controls(text):
        return text, 0
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    before = len(text)
    text = _CONTROL.sub("", _SEQUENCE.sub("", text))
    return text, before - len(text)


def without_controls(text: str) -> str:
    """:func:`strip_controls`'s text alone, for callers that do not count."""
    return strip_controls(text)[0]


def one_line(text: object) -> str:
    """``text`` (``str()`` of anything else) on one line: each run of white space, newlines
    included, one space; none at either end."""
    return " ".join(str(text).split())


def hide_keys(text: str) -> str:
    """``text`` with the value of every key-like query parameter and bearer token shown as ``***``."""
    return _KEY.sub(_hidden, text)


def _hidden(match: re.Match[str]) -> str:
    return f"{match.group(1) or match.group(2)}***"
