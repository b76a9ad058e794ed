"""The questions file of a batch, read without trusting it, and refused whole before any model call.

Three forms, by the file's extension:

* text (any other extension): one question per line; blank lines and ``#`` comments skipped;
* CSV (``.csv``): a header row with a ``question`` column;
* JSONL (``.jsonl``, ``.ndjson``): one JSON object per line with a ``question`` key.

A CSV or JSONL row may also set ``mode`` (quick, standard, deep), ``corpus`` (folders: a
list in JSONL, ``;``-separated in CSV; relative to the file's folder), ``search`` (providers:
a list, or comma-separated) and ``max_sources`` (1-200) for its question. Anything else is
refused. :func:`read_batch_file` raises one :class:`~research_agent.errors.InputError` line
naming the file, the line and the problem: a file that is missing, not a regular file,
larger than :data:`MAX_FILE_BYTES`, binary or not UTF-8; no question; more than
:data:`MAX_ROWS`; a question too long or too short; the same question (with the same
options) twice; a column or key not allowed; a value that no run could use.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import MODES
from ..errors import InputError
from ..files.safefile import UnsafeFile, read_text_capped
from ..memory.effects.ab_questions import looks_binary
from ..run.assembly import validate_query
from ..search.registry import KNOWN_PROVIDERS
from ..search.scholarly import ACADEMIC
from ..text.controls import has_controls, one_line
from .state import question_key

__all__ = ["BatchQuestion", "read_batch_file", "questions_in_text", "questions_in_bytes", "questions_from_list",
           "MAX_ROWS", "MAX_FILE_BYTES", "ROW_KEYS", "question_key"]  # fmt: skip

MAX_ROWS = 10_000
MAX_FILE_BYTES = 32 * 1024 * 1024
MAX_SOURCES = 200
ROW_KEYS = ("question", "mode", "corpus", "search", "max_sources")
_PROBLEM = "\x00"  # a row's key for what is wrong with it (no file that is read holds a NUL)


@dataclass(frozen=True)
class BatchQuestion:
    """One question of a batch and what its row set (None: the batch's own option)."""

    line: int
    question: str
    mode: str | None = None
    corpus: tuple[str, ...] | None = None  # resolved folders
    search: tuple[str, ...] | None = None
    max_sources: int | None = None

    def row(self) -> dict[str, Any]:
        """What the row set, as plain data (the state file keeps it)."""
        options = {"mode": self.mode, "corpus": list(self.corpus) if self.corpus is not None else None,
                   "search": list(self.search) if self.search is not None else None,
                   "max_sources": self.max_sources}  # fmt: skip
        return {key: value for key, value in options.items() if value is not None}


class _Refused(Exception):
    """A problem with one line; read_batch_file adds the file and the line."""


def read_batch_file(path: Path) -> tuple[BatchQuestion, ...]:
    """The questions in the file at ``path``, in order (see the module docstring)."""
    path = Path(path)
    return questions_in_text(_read(path), path.name, source=f"questions file {path}", folder=path.parent)


def questions_in_bytes(data: bytes, name: str, *, source: str, folder: Path) -> tuple[BatchQuestion, ...]:
    """The questions in ``data``, a questions file's content sent some other way (a web form's
    upload): refused as the file at a path would be, its form told by ``name`` 's extension."""
    if len(data) > MAX_FILE_BYTES:
        raise InputError(f"{source}: larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
    text = data.decode("utf-8", errors="surrogateescape")
    return questions_in_text(text, name, source=source, folder=folder)


def questions_in_text(text: str, name: str, *, source: str, folder: Path) -> tuple[BatchQuestion, ...]:
    """The questions in ``text``, in the form ``name`` 's extension says (text, CSV or JSONL);
    ``source`` names it in a refusal, ``folder`` is what a row's relative corpus folder is below."""
    kind = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl"}.get(Path(name).suffix.lower(), "text")
    rows = {"csv": _csv_rows, "jsonl": _jsonl_rows, "text": _text_rows}[kind](_checked(text, source))
    questions = _collect(rows, folder, source, "line", MAX_ROWS)
    if not questions:
        raise InputError(f"{source}: no questions ({_HOW[kind]})")
    return questions


def questions_from_list(questions: Sequence[str], limit: int) -> tuple[BatchQuestion, ...]:
    """Questions given as a list (the MCP tool), checked as a file's lines are; each is numbered
    by its place in the list."""
    found = _collect(((n, {"question": q}) for n, q in enumerate(questions, start=1)), Path.cwd(), "questions",
                     "question", limit)  # fmt: skip
    if not found:
        raise InputError("questions: none given")
    return found


def _collect(
    rows: Iterable[tuple[int, Mapping[str, Any]]], folder: Path, source: str, unit: str, limit: int
) -> tuple[BatchQuestion, ...]:
    """Each row as a BatchQuestion; InputError naming ``source``, the row's ``unit`` and number and
    the problem, for the first row that is refused."""
    questions: list[BatchQuestion] = []
    seen: dict[tuple[str, str], int] = {}
    number = 0
    try:
        for number, fields in rows:
            if len(questions) >= limit:
                raise _Refused(f"more than {limit:,} questions; the limit is {limit:,}")
            question = _question(fields, folder, number)
            same = (question_key(question.question), json.dumps(question.row(), sort_keys=True))
            if same in seen:
                raise _Refused(f"the same question as {unit} {seen[same]}")
            seen[same] = number
            questions.append(question)
    except _Refused as exc:
        raise InputError(f"{source}: {unit} {number}: {exc}") from None
    return tuple(questions)


_HOW = {
    "text": "write one per line; blank lines and # comments are skipped",
    "csv": "a header row with a question column, then one row per question",
    "jsonl": 'one JSON object per line, such as {"question": "..."}',
}


def _read(path: Path) -> str:
    try:
        return read_text_capped(path, max_bytes=MAX_FILE_BYTES, follow_symlinks=True, errors="surrogateescape")
    except UnsafeFile as exc:
        raise InputError(f"questions file {path}: {str(exc).removeprefix(f'{path}: ')}") from None


def _checked(text: str, source: str) -> str:
    """``text`` without its byte-order mark, once it is known to be UTF-8 text (decoded with
    surrogateescape: a byte that is not UTF-8 shows as a lone surrogate) without binary data."""
    for number, line in enumerate(text.splitlines(), start=1):
        if any("\udc80" <= ch <= "\udcff" for ch in line):
            raise InputError(f"{source}: line {number}: not UTF-8 text")
        if "\x00" in line:
            raise InputError(f"{source}: line {number}: binary data (a NUL byte), not a text file")
    if looks_binary(text):
        raise InputError(f"{source}: binary data (control characters), not a text file of questions")
    return text.removeprefix("\ufeff")


def _text_rows(text: str) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            yield number, {"question": stripped}


def _csv_rows(text: str) -> Iterator[tuple[int, dict[str, Any]]]:
    reader = csv.reader(io.StringIO(text, newline=""))
    header: list[str] | None = None
    start = 1
    try:
        for cells in reader:
            number, start = start, reader.line_num + 1  # a quoted cell may span lines: the row's first
            if not any(cell.strip() for cell in cells):
                continue
            if header is None:
                header = [cell.strip().lower() for cell in cells]
                problem = _header_problem(header)
                if problem:
                    yield number, {_PROBLEM: problem}
                    return
                continue
            if len(cells) > len(header):
                yield number, {_PROBLEM: "a row with more cells than the header has columns"}
                continue
            yield number, {name: cell for name, cell in zip(header, cells, strict=False) if cell.strip()}
    except csv.Error as exc:
        yield start, {_PROBLEM: f"not valid CSV ({exc})"}


def _header_problem(names: list[str]) -> str:
    for number, name in enumerate(names):
        if name not in ROW_KEYS:
            return f"unknown column {name[:60] or '(empty)'!r} (a row may set {', '.join(ROW_KEYS)})"
        if name in names[:number]:
            return f"the column {name!r} appears twice in the header (which one would count is a guess)"
    if "question" not in names:
        return "no question column in the header"
    return ""


class _RepeatedKey(ValueError):
    """A JSON object that names one key twice (``json`` would keep the last silently)."""


def _no_repeated_key(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for key, item in pairs:
        if key in value:
            raise _RepeatedKey(key)
        value[key] = item
    return value


def _jsonl_rows(text: str) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line, object_pairs_hook=_no_repeated_key)
        except _RepeatedKey as exc:
            yield number, {_PROBLEM: f"the key {str(exc)[:60]!r} appears twice in the object (which one would count is a guess)"}
            continue
        except (ValueError, RecursionError) as exc:
            yield number, {_PROBLEM: f"not JSON ({str(exc)[:80]})"}
            continue
        if not isinstance(value, dict):
            value = {_PROBLEM: "not a JSON object"}
        elif _PROBLEM in value:
            value = {_PROBLEM: "unknown key '\\u0000'"}
        yield number, value


def _question(fields: Mapping[str, Any], folder: Path, line: int) -> BatchQuestion:
    if _PROBLEM in fields:
        raise _Refused(fields[_PROBLEM])
    unknown = [key for key in fields if key not in ROW_KEYS]
    if unknown:
        raise _Refused(f"unknown key {str(unknown[0])[:60]!r} (a row may set {', '.join(ROW_KEYS)})")
    raw = fields.get("question")
    if not isinstance(raw, str) or not raw.strip():
        raise _Refused("no question")
    if has_controls(raw):
        raise _Refused("control characters in the question (terminal escapes, bidi overrides)")
    try:
        question = validate_query(one_line(raw))  # a CSV cell may span lines
    except InputError as exc:
        raise _Refused(str(exc)) from None
    return BatchQuestion(
        line, question, _mode(fields.get("mode")), _corpus(fields.get("corpus"), folder),
        _search(fields.get("search")), _max_sources(fields.get("max_sources")),
    )  # fmt: skip


def _strings(value: Any, separator: str, what: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        parts = [part.strip() for part in value.split(separator)]
    elif isinstance(value, list) and all(isinstance(part, str) for part in value):
        parts = [part.strip() for part in value]
    else:
        raise _Refused(f"{what} must be text or a list of text")
    if not all(parts):
        raise _Refused(f"{what} has an empty entry")
    return tuple(parts)


def _mode(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or value.strip().lower() not in MODES:
        raise _Refused(f"mode must be one of {', '.join(MODES)}")
    return value.strip().lower()


def _corpus(value: Any, folder: Path) -> tuple[str, ...] | None:
    names = _strings(value, ";", "corpus")
    if names is None:
        return None
    resolved = []
    for name in names:
        real = (folder / Path(name).expanduser()).resolve()
        if not real.is_dir():
            raise _Refused(f"corpus folder {name[:200]!r} is not a folder")
        resolved.append(str(real))
    return tuple(dict.fromkeys(resolved))


def _search(value: Any) -> tuple[str, ...] | None:
    names = _strings(value, ",", "search")
    if names is None:
        return None
    known = (*KNOWN_PROVIDERS, ACADEMIC)
    unknown = [name for name in names if name not in known]
    if unknown:
        raise _Refused(f"unknown search provider {unknown[0][:40]!r}: choose from {', '.join(known)}")
    return tuple(dict.fromkeys(names))


def _max_sources(value: Any) -> int | None:
    if value is None:
        return None
    number = value.strip() if isinstance(value, str) else value
    if isinstance(number, str) and number.isdigit():
        number = int(number)
    if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= MAX_SOURCES:
        raise _Refused(f"max_sources must be a whole number from 1 to {MAX_SOURCES}")
    return number
