"""How deeply a YAML, TOML or JSON text nests, measured before any parser sees it.

Parsers recurse once per level of nesting. libyaml's composer (reached through
PyYAML's ``CSafeLoader``) overflows the C stack and kills the process at about 30,000
levels; PyYAML's pure-Python loader, ``tomllib`` and ``json`` raise RecursionError.
The scanners here walk the text once, in linear time, and count:

* flow collections (``[`` and ``{``) outside quoted scalars, strings and comments;
* in YAML, block nesting too: the open indentation levels of a line plus the ``-``,
  ``?`` and ``:`` indicators that open a nested node on the same line (``- - - x``).
  Block scalars (``|``, ``>``) are skipped the way libyaml skips them.

Where the text is ambiguous the count errs high: a harmless text may read a level or
two deeper than it is, a deep one never reads shallower than the parser will find it.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable

__all__ = ["MAX_NESTING", "yaml_depth", "toml_depth", "json_depth", "nesting_problem"]

MAX_NESTING = 100

_BREAKS = re.compile(r"\r\n?|[\x85\u2028\u2029]")  # libyaml's line breaks, made "\n"
_SPACES = re.compile(r" *")
_PLAIN_STOP = re.compile(r":(?=[ \t\n]|\Z)|[ \t]#")  # ends a plain scalar in block context
_FLOW_SPECIAL = re.compile(r"[\[\]{},'\"#:?!&]")
_TOKEN_END = re.compile(r"[ \t\n,\[\]{}]|\Z")


class _Deep(Exception):
    """Raised inside a scan once the depth reaches the caller's stop value."""


def _closing_double_quote(text: str, start: int) -> int:
    """Index just past the ``"`` closing a string opened before ``start``; len(text) if none."""
    i = start
    while True:
        j = text.find('"', i)
        if j < 0:
            return len(text)
        k = j - 1
        while k >= start and text[k] == "\\":
            k -= 1
        if (j - 1 - k) % 2 == 0:  # an even run of backslashes: the quote is not escaped
            return j + 1
        i = j + 1


def _closing_single_quote(text: str, start: int) -> int:
    """Index just past the ``'`` closing a YAML single-quoted scalar (``''`` is a quote)."""
    i = start
    while True:
        j = text.find("'", i)
        if j < 0:
            return len(text)
        if text.startswith("''", j):
            i = j + 2
            continue
        return j + 1


_BLANK_OR_END = ("", " ", "\t", "\n")
_VALUE_END = ("", " ", "\t", "\n", ",", "[", "]", "{", "}")  # after ":" in a flow


def _open(stack: list[tuple[int, bool]], column: int, seq: bool) -> bool:
    """Update the open block collections for a node at ``column`` (``seq``: it starts with ``- ``).

    Deeper collections close. A sequence may sit at its parent key's column (``key:``
    then ``- x`` below it): it opens on top of that mapping, and closes at the next key.
    Return whether an entry was added for the node.
    """
    while stack and stack[-1][0] > column:
        stack.pop()
    if not stack or stack[-1][0] < column or (seq and not stack[-1][1]):
        stack.append((column, seq))
        return True
    if not seq and stack[-1][1] and len(stack) > 1 and stack[-2][0] == column:
        stack.pop()
    return False


def _starts_sequence(text: str, pos: int) -> bool:
    return text[pos : pos + 1] == "-" and text[pos + 1 : pos + 2] in _BLANK_OR_END


class _YamlScan:
    """One pass over a YAML text (line breaks already normalised to ``\\n``)."""

    def __init__(self, text: str, stop: int) -> None:
        self.text = text
        self.n = len(text)
        self.stop = stop
        self.best = 0

    def note(self, depth: int) -> None:
        if depth > self.best:
            self.best = depth
            if depth >= self.stop:
                raise _Deep

    def eol(self, pos: int) -> int:
        end = self.text.find("\n", pos)
        return self.n if end < 0 else end

    def run(self) -> int:
        stack: list[tuple[int, bool]] = []
        pos = 0
        try:
            while pos < self.n:
                pos = self.line(pos, stack)
        except _Deep:
            pass
        return self.best

    def line(self, start: int, stack: list[tuple[int, bool]]) -> int:
        """Scan the line starting at ``start``; return where the next line starts."""
        text, end = self.text, self.eol(start)
        pos = _SPACES.match(text, start, end).end()  # type: ignore[union-attr]  # " *" always matches
        indent = pos - start
        if pos == end or text[pos] == "#":
            return end + 1
        if indent == 0 and text[pos] == "%":  # a directive
            return end + 1
        if indent == 0 and text.startswith(("---", "..."), pos) and text[pos + 3 : pos + 4] in ("", " ", "\t", "\n"):
            stack.clear()
            return self.nodes(pos + 3, end, stack, False, start)
        pushed = _open(stack, indent, _starts_sequence(text, pos))
        return self.nodes(pos, end, stack, pushed, start)

    def nodes(self, pos: int, end: int, stack: list[tuple[int, bool]], pushed: bool, line_start: int) -> int:
        """Scan the nodes of a block-context line from ``pos``; return the next line's start.

        ``stack`` holds the open block collections as (column, is a sequence); the node
        after a ``-``, ``?`` or ``:`` indicator on the line opens one more at its column.
        ``pushed`` says whether the current node has an entry of its own on ``stack``.
        """
        text = self.text
        depth = len(stack)
        self.note(depth)
        while True:
            while pos < end and text[pos] in " \t":
                pos += 1
            if pos >= end:
                return end + 1
            c = text[pos]
            if c == "#":  # at the start of a token, "#" always opens a comment
                return end + 1
            if c in "-?:" and text[pos + 1 : pos + 2] in _BLANK_OR_END:
                pos += 1
                while pos < end and text[pos] in " \t":
                    pos += 1
                if pos < end and text[pos] != "#":
                    pushed = _open(stack, pos - line_start, _starts_sequence(text, pos))
                depth = max(depth + 1, len(stack))
                self.note(depth)
                continue
            if c in "&!*":  # anchor, tag or alias: a token up to the next blank
                pos = _TOKEN_END.search(text, pos + 1).start()  # type: ignore[union-attr]  # "|\Z" always matches
                continue
            if c in "[{":
                pos = self.flow(pos, depth)
            elif c in "'\"":
                pos = _closing_single_quote(text, pos + 1) if c == "'" else _closing_double_quote(text, pos + 1)
            elif c in "|>":
                # libyaml measures a block scalar's indentation from the innermost block
                # collection that holds it, not from the scalar's own column.
                holder = stack[:-1] if pushed else stack
                return self.block_scalar(end, holder[-1][0] if holder else -1, text[pos + 1 : end])
            else:
                stop = _PLAIN_STOP.search(text, pos, end)
                if stop is None or stop.group().endswith("#"):
                    return end + 1
                pos = stop.end()
                pushed = False
                depth += 1
                self.note(depth)
                continue
            if pos > end:  # a flow collection or quoted scalar ran onto a later line
                end = self.eol(pos)
                line_start = text.rfind("\n", 0, pos) + 1

    def flow(self, pos: int, depth: int) -> int:
        """Skip the flow collection opening at ``pos``, counting its depth; return the index after it."""
        text = self.text
        # One entry per open collection: 1, or 2 for a sequence holding a "key: value" pair,
        # which libyaml turns into a mapping of its own ([a: [b: c]] nests four deep).
        weights: list[int] = []
        kinds: list[str] = []
        in_plain = False  # inside a plain scalar: quotes and tag marks are ordinary characters
        while True:
            match = _FLOW_SPECIAL.search(text, pos)
            if match is None:
                return self.n
            i = match.start()
            if text[pos:i].strip(" \t\n"):
                in_plain = True
            c = text[i]
            nxt = text[i + 1 : i + 2]
            pos = i + 1
            if c in "[{":
                weights.append(1)
                kinds.append(c)
                depth += 1
                self.note(depth)
                in_plain = False
            elif c in "]}":
                depth -= weights.pop()
                kinds.pop()
                in_plain = False
                if not weights:
                    return pos
            elif c == ",":
                in_plain = False
            elif c == "#" and (not in_plain or text[i - 1] in " \t\n"):  # a comment
                pos = self.eol(i)
                in_plain = False
            elif c in "'\"" and not in_plain:
                pos = _closing_single_quote(text, pos) if c == "'" else _closing_double_quote(text, pos)
            elif c in ":?" and (not in_plain or (c == ":" and nxt in _VALUE_END)):
                in_plain = False
                if kinds[-1] == "[" and weights[-1] == 1:
                    weights[-1] = 2
                    depth += 1
                    self.note(depth)
            elif c in "!&" and not in_plain:
                pos = _TOKEN_END.search(text, pos).start()  # type: ignore[union-attr]  # "|\Z" always matches
            else:
                in_plain = True

    def block_scalar(self, end: int, parent_col: int, header: str) -> int:
        """Skip a block scalar's content lines (libyaml's rules, erring toward fewer lines)."""
        text = self.text
        digits = [int(ch) for ch in header[:2] if ch in "123456789"]
        first = end + 1
        if digits:
            content = parent_col + digits[0] if parent_col >= 0 else digits[0]
        else:
            most, i = 0, first
            while i < self.n:
                line_end = self.eol(i)
                spaces = _SPACES.match(text, i, line_end).end() - i  # type: ignore[union-attr]  # " *" always matches
                most = max(most, spaces)
                if i + spaces != line_end:
                    break
                i = line_end + 1
            content = max(most, parent_col + 1, 1)
        i = first
        while i < self.n:
            line_end = self.eol(i)
            spaces = _SPACES.match(text, i, line_end).end() - i  # type: ignore[union-attr]  # " *" always matches
            if i + spaces != line_end and spaces < content:
                break
            i = line_end + 1
        return i


def yaml_depth(text: str, *, stop: int = sys.maxsize) -> int:
    """The nesting depth of a YAML text as its parser will meet it (an upper estimate).

    Scanning ends early once the depth reaches ``stop``.
    """
    return _YamlScan(_BREAKS.sub("\n", text.removeprefix("\ufeff")), stop).run()


def _json_depth(text: str, stop: int) -> int:
    level = best = 0
    pos = 0
    while True:
        match = _JSON_SPECIAL.search(text, pos)
        if match is None:
            return best
        i = match.start()
        c = text[i]
        if c in "[{":
            level += 1
            if level > best:
                best = level
                if best >= stop:
                    return best
            pos = i + 1
        elif c in "]}":
            level = max(0, level - 1)
            pos = i + 1
        else:
            pos = _closing_double_quote(text, i + 1)


def _closing_triple(text: str, start: int, quote: str) -> int:
    """Index just past the unescaped triple quote closing a TOML multi-line string."""
    i = start
    while True:
        j = text.find(quote * 3, i)
        if j < 0:
            return len(text)
        k = j - 1
        while quote == '"' and k >= start and text[k] == "\\":
            k -= 1
        if (j - 1 - k) % 2 == 0:
            return j + 3
        i = j + 1


def _toml_skip(text: str, i: int) -> int:
    """Index after the TOML string or comment starting at ``i``."""
    c = text[i]
    if c == "#":
        end = text.find("\n", i)
        return len(text) if end < 0 else end
    if text.startswith(c * 3, i):  # a multi-line string; up to two more quotes belong to it
        end = _closing_triple(text, i + 3, c)
        extra = 0
        while end < len(text) and text[end] == c and extra < 2:
            end += 1
            extra += 1
        return end
    line_end = text.find("\n", i + 1)
    line_end = len(text) if line_end < 0 else line_end
    if c == "'":
        end = text.find("'", i + 1, line_end)
        return line_end if end < 0 else end + 1
    return min(_closing_double_quote(text, i + 1), line_end)


_TOML_SPECIAL = re.compile(r"[\[\]{}\"'#=.,\n]")
_JSON_SPECIAL = re.compile(r"[\[\]{}\"]")


def toml_depth(text: str, *, stop: int = sys.maxsize) -> int:
    """The deepest nesting in a TOML text: arrays, inline tables, and dotted keys.

    ``a.b.c = 1`` and ``[a.b.c]`` nest as deeply as brackets do, so every dot of a key
    (outside strings) counts as a level too.
    """
    opened: list[str] = []  # "h" (a table header), "[" or "{" for each open bracket
    dots = [0]  # dots in the key being read, at each level
    dotted = 0  # sum(dots), kept as it changes: summing at every character would be quadratic
    base = 0  # the depth of the current table, set by its [header]
    in_key, in_header, best, pos = True, False, 0, 0
    while (match := _TOML_SPECIAL.search(text, pos)) is not None:
        i = match.start()
        c, pos = text[i], i + 1
        if c in "\"'#":
            pos = _toml_skip(text, i)
        elif c == "\n":
            if not opened:
                dotted -= dots[0]
                dots[0], in_key = 0, True
        elif c == "=":
            in_key = False
        elif c == "," and opened and opened[-1] == "{":
            dotted -= dots[-1]
            dots[-1], in_key = 0, True
        elif c == "." and in_key:
            dots[-1] += 1
            dotted += 1
        elif c in "[{":
            header = c == "[" and in_key and (not opened or opened[-1] == "h")
            if header and not opened:
                base, in_header = 0, True
            opened.append("h" if header else c)
            dots.append(0)
            in_key = header or c == "{"
        elif c in "]}" and opened:
            if opened[-1] == "h" and in_header:
                base, in_header = len(opened) + dotted, False
            opened.pop()
            dotted -= dots.pop()
        else:
            continue
        depth = base + len(opened) + dotted
        if depth > best:
            best = depth
            if best >= stop:
                break
    return best


def json_depth(text: str, *, stop: int = sys.maxsize) -> int:
    """The deepest nesting of arrays and objects in a JSON text."""
    return _json_depth(text, stop)


_SCANNERS: dict[str, Callable[..., int]] = {"yaml": yaml_depth, "toml": toml_depth, "json": json_depth}


def nesting_problem(text: str, kind: str, *, limit: int = MAX_NESTING) -> str | None:
    """``"nested too deeply (more than N levels)"`` when ``text`` nests past ``limit``; else None.

    ``kind`` is ``yaml``, ``toml`` or ``json``.
    """
    if _SCANNERS[kind](text, stop=limit + 1) > limit:
        return f"nested too deeply (more than {limit} levels)"
    return None
