"""Critique files on disk: naming, listing, safe loading, atomic writing, retention, log.

Files live in ``<reports>/meta`` as ``critique-<id>.yaml``. Listing orders them by the
UTC timestamp in the *file name* (no ``stat``, no parse), so callers can decide which
files matter before opening any. Loading never raises for a bad file: it returns a
:class:`LoadedCritique` carrying the reason; given the time ``now``, a file dated in the
future is refused like any other bad file. Retention ranks files by their *validated*
time, capped at now: junk and future-dated files never displace valid, present ones.
``critique.log`` in the same folder gets one line per critique written or failed,
appended with ``O_APPEND``. ``meta`` must not be a symlink leading out of its reports
folder.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import NamedTuple

from ...errors import StorageError
from ...files.atomic import atomic_write_text, file_kind
from ...files.safefile import check_folder_inside
from ...files.safeyaml import UnsafeYaml, dump_yaml, load_yaml_text, read_capped
from ...ids import id_timestamp, is_run_id
from ...text.sanitize import sanitize
from .critique_types import Critique
from .schema import InvalidCritique, validate_critique

__all__ = [
    "MAX_CRITIQUE_BYTES",
    "LOG_NAME",
    "CritiqueEntry",
    "LoadedCritique",
    "critique_path",
    "critique_file_name",
    "run_id_from",
    "critique_header",
    "scan_critiques",
    "load_entry",
    "parse_critique",
    "read_critique_text",
    "load_critique",
    "load_all",
    "write_critique",
    "prune_critiques",
    "append_log",
    "check_log_file",
    "stamp_of",
    "entry_for_name",
    "is_critique_name",
    "future_problem",
    "FUTURE_SLACK",
]

MAX_CRITIQUE_BYTES = 64 * 1024
LOG_NAME = "critique.log"
_LOG_LINE_BYTES = 1000  # well under PIPE_BUF, so each append is one atomic write

_NAME_RE = re.compile(r"^critique-(?P<id>[a-z0-9][a-z0-9-]{0,63}_(?P<stamp>[0-9]{8}T[0-9]{12}Z))\.yaml$")
_STAMP_FMT = "%Y%m%dT%H%M%S%fZ"
FUTURE_SLACK = timedelta(hours=1)  # clock skew between machines sharing a reports folder


def stamp_of(when: datetime) -> str:
    """The file-name form of a UTC time (sorts like the time itself)."""
    return when.astimezone(UTC).strftime(_STAMP_FMT)


def critique_file_name(run_id: str) -> str:
    """``critique-<id>.yaml``; raise StorageError for an id that is not a run id."""
    if not is_run_id(run_id):
        raise StorageError(f"not a run id: {run_id[:80]!r}")
    return f"critique-{run_id}.yaml"


def run_id_from(value: str) -> str | None:
    """The run id a person or a caller named, as an id or as ``critique-<id>.yaml`` (any
    folder before it is ignored); None when it names no run id."""
    run_id = Path(value).name.removeprefix("critique-").removesuffix(".yaml")
    return run_id if is_run_id(run_id) else None


def critique_path(meta_dir: Path, run_id: str) -> Path:
    return Path(meta_dir) / critique_file_name(run_id)


class CritiqueEntry(NamedTuple):
    """A critique file found by name. ``stamp`` is its sortable UTC timestamp text."""

    name: str
    run_id: str
    stamp: str
    folder: Path

    @property
    def path(self) -> Path:
        return self.folder / self.name

    @property
    def created(self) -> datetime:
        when = id_timestamp(self.run_id)
        if when is None:  # cannot happen: the name matched the pattern
            raise StorageError(f"no timestamp in {self.name}")
        return when


def is_critique_name(name: str) -> bool:
    """Whether ``name`` is ``critique-<run id>.yaml``."""
    return _NAME_RE.match(name) is not None


def entry_for_name(meta_dir: Path, name: str) -> CritiqueEntry | None:
    """The entry of a file named ``critique-<run id>.yaml`` in ``meta_dir``; None for any other name."""
    match = _NAME_RE.match(name)
    return None if match is None else CritiqueEntry(name, match["id"], match["stamp"], meta_dir)


@dataclass(frozen=True)
class LoadedCritique:
    """The outcome of loading one file: a critique, or the reason it was refused."""

    path: Path
    critique: Critique | None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.critique is not None

    @property
    def name(self) -> str:
        return self.path.name


def scan_critiques(meta_dir: Path) -> tuple[list[CritiqueEntry], list[Path]]:
    """Critique files newest first by file-name timestamp, and ``critique-*`` files badly named.

    Nothing is opened or stat-ed: only the directory listing is read. A ``meta_dir``
    that is a symlink leading out of its parent folder raises UnsafeFile (an InputError).
    """
    entries: list[CritiqueEntry] = []
    misnamed: list[Path] = []
    meta_dir = Path(meta_dir)
    check_folder_inside(meta_dir, meta_dir.parent)
    try:
        with os.scandir(meta_dir) as it:
            for item in it:
                name = item.name
                if not name.startswith("critique-"):
                    continue
                match = _NAME_RE.match(name)
                if match is None:
                    misnamed.append(meta_dir / name)
                    continue
                entries.append(CritiqueEntry(name, match["id"], match["stamp"], meta_dir))
    except FileNotFoundError:
        return [], []
    except OSError as exc:
        raise StorageError(f"cannot list {meta_dir}: {exc.strerror or exc}") from None
    entries.sort(key=lambda e: (e.stamp, e.name), reverse=True)
    misnamed.sort()
    return entries, misnamed


def parse_critique(text: str, *, name: str | None = None) -> Critique:
    """Parse and validate critique YAML text; ``name`` (the file name) must match its id."""
    try:
        data = load_yaml_text(text)
    except UnsafeYaml as exc:
        raise InvalidCritique(str(exc)) from None
    if not isinstance(data, dict):
        raise InvalidCritique(f"(top level): expected a mapping of fields, got {type(data).__name__}")
    problems = validate_critique(data)
    match = _NAME_RE.match(name) if name else None
    if not problems and match is not None and data["id"] != match["id"]:
        problems.append(f"id: {data['id']!r} does not match the file name {name}")
    if problems:
        raise InvalidCritique("; ".join(problems))
    return Critique._from_valid(data)


def read_critique_text(
    path: Path, *, meta_dir: Path | None = None, max_bytes: int = MAX_CRITIQUE_BYTES
) -> str:
    """The text of a critique file: regular file, inside ``meta_dir``, under the size cap."""
    path = Path(path)
    try:
        return read_capped(
            path, max_bytes=max_bytes, within=Path(meta_dir) if meta_dir is not None else path.parent
        )
    except UnsafeYaml as exc:
        raise InvalidCritique(str(exc)) from None


def load_critique(
    path: Path, *, meta_dir: Path | None = None, max_bytes: int = MAX_CRITIQUE_BYTES
) -> Critique:
    """Load and validate one critique file; raise InvalidCritique (an InputError) with the reason."""
    path = Path(path)
    return parse_critique(read_critique_text(path, meta_dir=meta_dir, max_bytes=max_bytes), name=path.name)


def future_problem(critique: Critique, now: datetime) -> str | None:
    """``"dated in the future (...)"`` when the run time in its id, or its ``timestamp``,
    lies beyond ``now`` (plus an hour of slack for clock skew); else None."""
    latest = now.astimezone(UTC) + FUTURE_SLACK
    for when in (id_timestamp(critique.id), critique.created_at):
        if when is not None and when > latest:
            return f"dated in the future ({when.strftime('%Y-%m-%dT%H:%M:%SZ')})"
    return None


def load_entry(
    entry: CritiqueEntry | Path, *, meta_dir: Path | None = None, now: datetime | None = None
) -> LoadedCritique:
    """Load one file without raising: a bad file comes back with its reason.

    With ``now``, a critique dated in the future (see :func:`future_problem`) is bad too.
    """
    path = entry.path if isinstance(entry, CritiqueEntry) else Path(entry)
    try:
        critique = load_critique(path, meta_dir=meta_dir)
    except InvalidCritique as exc:
        return LoadedCritique(path, None, str(exc))
    problem = future_problem(critique, now) if now is not None else None
    if problem is not None:
        return LoadedCritique(path, None, problem)
    return LoadedCritique(path, critique)


def load_all(meta_dir: Path, *, now: datetime | None = None) -> list[LoadedCritique]:
    """Every ``critique-*`` file, newest first, each loaded or with its reason.

    With ``now``, files dated in the future are reported as bad files.
    """
    entries, misnamed = scan_critiques(meta_dir)
    loaded = [load_entry(e, meta_dir=meta_dir, now=now) for e in entries]
    loaded.extend(LoadedCritique(p, None, "file name is not critique-<run id>.yaml") for p in misnamed)
    return loaded


_HEADER = """\
# Scores: one integer per dimension from 1 (poor) through 3 (adequate) to 5 (excellent),
#   given by the critic model against the rubric in the package's prompts/critique.md.
# null: the dimension does not apply to the question (only geographic_balance may be null,
#   e.g. for a database manual or a maths proof); it is left out of mean_score and
#   overall_pass, and no lesson is ever built from it.
# mean_score: the mean of the applicable (non-null) scores.
# overall_pass: true when that mean is at least 3.0 and no applicable score is below 2.
# facts: measured exactly by the program from the run record and the report, never by a model.
# lessons_withheld: lessons the run could have had and did not, and why (trial: held back at
#   random, on its own, so that its effect can be measured).
# suspect (when present): the program found the critic's answer degenerate; it teaches nothing.
# proposed_lessons (when present): the critic's ideas, quarantined: none reaches a prompt until
#   a person approves it (research-agent memory approve).
# Editing by hand: change a score and it counts. mean_score, overall_pass, source_count and
#   dropped_count are recomputed from the scores and facts whenever this file is read (memory
#   validate names the edit); what the run was (lessons, facts, review) is not to be edited.
"""


def critique_header(critique: Critique) -> str:
    """The YAML comment at the top of every critique file: what the scale, the pass rule and null mean."""
    return f"# research-agent critique of {critique.id} (schema {critique.schema_version})\n{_HEADER}"


def write_critique(meta_dir: Path, critique: Critique) -> Path:
    """Validate, then write ``critique-<id>.yaml`` (under :func:`critique_header`) atomically; return its path."""
    data = critique.as_dict()
    problems = validate_critique(data)
    if problems:
        raise StorageError(f"refusing to write an invalid critique for {critique.id}: {'; '.join(problems)}")
    path = critique_path(meta_dir, critique.id)
    return atomic_write_text(path, critique_header(critique) + dump_yaml(data))


def _retention_order(meta_dir: Path, entries: list[CritiqueEntry], now: datetime) -> list[CritiqueEntry]:
    """Valid, present critiques first, newest first by their run time (validated against the
    file name, capped at now); then every other file (invalid, unreadable or dated in the
    future), newest name first."""
    ranked: list[tuple[bool, datetime, str, CritiqueEntry]] = []
    for entry in entries:
        loaded = load_entry(entry, meta_dir=meta_dir, now=now)
        ranked.append((loaded.ok, min(entry.created, now), entry.name, entry))
    ranked.sort(key=lambda item: item[:3], reverse=True)
    return [item[3] for item in ranked]


def prune_critiques(
    meta_dir: Path, keep: int, *, protect: Iterable[str] = (), now: datetime | None = None, dry_run: bool = False
) -> list[Path]:
    """Delete critique files beyond the best ``keep`` (0 keeps all); return the removed paths
    (with ``dry_run``, those it would remove, removing none).

    Valid critiques dated up to ``now`` (default: the current time) are kept first,
    newest first; invalid, unreadable and future-dated files rank after every one of
    them, so junk never displaces a real critique. Files whose names do not parse are
    left alone. Safe when several processes prune at once: a file someone else already
    removed is simply skipped.
    """
    if keep <= 0:
        return []
    entries, _ = scan_critiques(meta_dir)
    if len(entries) <= keep:
        return []
    now = (now or datetime.now(UTC)).astimezone(UTC)
    protected = set(protect)
    removed: list[Path] = []
    for entry in _retention_order(Path(meta_dir), entries, now)[keep:]:
        if entry.run_id in protected:
            continue
        if dry_run:
            removed.append(entry.path)
            continue
        try:
            entry.path.unlink()
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise StorageError(f"cannot remove {entry.path}: {exc.strerror or exc}") from None
        removed.append(entry.path)
    return removed


def _log_problem(path: Path, exc: OSError) -> str:
    """Why ``critique.log`` could not be opened, in words (a FIFO or symlink named as such)."""
    try:
        info = os.lstat(path)
    except OSError:
        return exc.strerror or str(exc)
    if not stat.S_ISREG(info.st_mode):
        return f"it is {file_kind(info.st_mode)}, not a regular file"
    return exc.strerror or str(exc)


def check_log_file(meta_dir: Path) -> None:
    """Raise StorageError when ``critique.log`` exists as anything but a regular file.

    Called before a critique starts, so a FIFO or symlink planted there is reported
    before any model call instead of after it.
    """
    path = Path(meta_dir) / LOG_NAME
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StorageError(f"cannot write {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        raise StorageError(f"cannot write {path}: it is {file_kind(info.st_mode)}, not a regular file")


def append_log(
    meta_dir: Path, status: str, subject: str, message: str = "", *, now: datetime | None = None
) -> None:
    """Append one readable line to ``critique.log``: ``<UTC time> <status> <subject>: <message>``.

    Each line is one small ``O_APPEND`` write, so concurrent writers never interleave.
    The log is opened without blocking and must be a regular file: a FIFO, device or
    symlink in its place is refused at once, never waited on. A log that cannot be
    written raises StorageError.
    """
    when = (now or datetime.now(UTC)).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    text = sanitize(f"{when} {status} {subject}" + (f": {message}" if message else ""), single_line=True)
    data = text.encode("utf-8")[: _LOG_LINE_BYTES - 1].decode("utf-8", "ignore") + "\n"
    meta_dir = Path(meta_dir)
    path = meta_dir / LOG_NAME
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
    try:
        meta_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        raise StorageError(f"cannot write {path}: {_log_problem(path, exc)}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):  # a FIFO with a reader opens fine: refuse it all the same
            raise StorageError(f"cannot write {path}: it is {file_kind(mode)}, not a regular file")
        os.write(fd, data.encode("utf-8"))
    except OSError as exc:
        raise StorageError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
