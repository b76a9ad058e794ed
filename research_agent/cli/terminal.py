"""Printing outside text on a terminal without letting it drive the terminal.

Everything research-agent prints may carry text it did not write: an endpoint's error
message, a model's answer, a page title, a file name, a critique's query. Such text
must never be taken for rich markup (``[/red]`` would crash the printer, ``[link=...]``
would plant a hyperlink) nor reach the terminal as control sequences (ANSI colours,
OSC-8 hyperlinks, cursor movement, a carriage return that overwrites the line, bidi
overrides that reorder it). Every printing site in the CLI goes through this module:

* :func:`visible` - control characters become visible escapes (``\\x1b``, ``\\u202e``);
* :func:`markup` - :func:`visible`, then rich markup escaped, for rich consoles and tables;
* :func:`visible_line` - :func:`visible` on one line, for error messages;
* :func:`echo` - print through typer with the above applied (errors: :mod:`.boundary`);
* :func:`dumps_json` - JSON whose strings cannot carry C1 controls or bidi overrides either;
* :class:`VisibleFormatter` - log records (which quote URLs, paths and errors) the same way.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from typing import Any

import typer

from ..text.controls import hide_keys, one_line

__all__ = ["visible", "markup", "visible_line", "echo", "dumps_json", "dumps_json_records", "VisibleFormatter"]

# C0 controls (except tab and newline), DEL, C1 controls, and the Unicode format
# characters that reorder or hide text: bidi embeddings/overrides/isolates, marks,
# zero-width joiners aside (they are harmless and common in some scripts).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
_JSON_UNSAFE = re.compile(r"[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]")


def _escape_char(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: object) -> str:
    """``text`` with every control character shown as an inert escape; newlines and tabs kept."""
    return _CONTROL.sub(_escape_char, str(text))


def visible_line(text: object) -> str:
    """:func:`visible` on a single line: runs of whitespace (newlines included) become one space."""
    return one_line(visible(text))


# rich's own escape pattern, anchored at the start of a run of backslashes: rich.markup.escape
# searches from every backslash of a run, which is quadratic in the run's length.
_RICH_TAG = re.compile(r"(?<!\\)(\\*+)(\[[a-z#/@][^[]*?])")


def markup(text: object) -> str:
    """Outside text for a rich console, table cell or status line: controls shown, markup escaped
    (as ``rich.markup.escape`` does it)."""
    escaped = _RICH_TAG.sub(lambda m: f"{m.group(1)}{m.group(1)}\\{m.group(2)}", visible(text))
    if escaped.endswith("\\") and not escaped.endswith("\\\\"):
        return escaped + "\\"
    return escaped


def echo(text: object = "", *, err: bool = False) -> None:
    """``typer.echo`` of outside text with its control characters made visible."""
    typer.echo(visible(text), err=err)


def dumps_json(data: Any, **options: Any) -> str:
    """``json.dumps`` (UTF-8 kept) whose strings escape C1 controls and bidi characters too.

    JSON already escapes C0 controls; the rest can only occur inside strings, where a
    ``\\uXXXX`` escape means the same character, so the document is unchanged as data.
    """
    options.setdefault("ensure_ascii", False)
    text = json.dumps(data, **options)
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


def dumps_json_records(lists: Mapping[str, Sequence[Any]]) -> str:
    """``lists`` (name -> records) as one JSON object whose records sit one to a line.

    For thousands of records: indented JSON is written by Python's slow encoder, a record
    on one line by the C one (5,000 critiques: about 1 s less), and a line per record still
    reads with ``grep`` and ``head``. Strings are escaped as :func:`dumps_json` does.
    """
    names = []
    for name, records in lists.items():
        lines = ",\n    ".join(dumps_json(record, default=str, separators=(", ", ": ")) for record in records)
        names.append(f"  {dumps_json(name)}: " + (f"[\n    {lines}\n  ]" if records else "[]"))
    return "{\n" + ",\n".join(names) + "\n}"


class VisibleFormatter(logging.Formatter):
    """A logging formatter whose output (tracebacks included) shows control characters as escapes,
    and no key: a key-like query parameter or a bearer token is shown as ``***``."""

    def format(self, record: logging.LogRecord) -> str:
        return hide_keys(visible(super().format(record)))
