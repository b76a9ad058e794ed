"""Naming a run the way a person does: short ids like git's, prefixes, ``latest`` and ``latest~N``.

A run id (``<slug>_<UTC timestamp>``, :mod:`research_agent.ids`) is about 70 characters. People
see its *short id*: the first 7 hex digits of the id's SHA-256, longer only when another run in
the same reports folder shares them. Everywhere an id is accepted, a *reference* may be

* the full id, or a file name holding it (``critique-<id>.yaml``, ``run-<id>.yaml``, ``<id>.md``);
* the short id, or any unique prefix of the full id or of its hash (at least 4 hex digits);
* ``latest`` (the newest run) or ``latest~N`` (the N-th before it).

An ambiguous prefix is an error listing the candidates; one that matches nothing names what was
looked at. Both are :class:`~research_agent.errors.InputError` (exit 2).

The API, for every front end (CLI commands, MCP tools and resources, export):

* :func:`short_id` / :func:`short_ids`: the short form of one id / of many, unique among them;
* :class:`Runs` (``Runs.scan(reports_dir)``): the runs a reports folder holds, by kind of file
  (``report``, ``record``, ``critique``, ``failed``, ``journal``), newest first, with :meth:`Runs.short`
  and :meth:`Runs.resolve`;
* :func:`resolve_run`: ``Runs.scan(reports_dir).resolve(ref, kind)`` in one call;
* :func:`run_file`: where a run's file of a kind lives.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .errors import AmbiguousRun, InputError, UnknownRun
from .ids import is_run_id

__all__ = [
    "SHORT_LENGTH",
    "KINDS",
    "UnknownRun",
    "AmbiguousRun",
    "short_hash",
    "short_id",
    "short_ids",
    "run_file",
    "named_run_id",
    "resolve_ref",
    "Runs",
    "resolve_run",
]

SHORT_LENGTH = 7
_MIN_HASH_PREFIX = 4  # a shorter hex reference is read as the start of an id only (as git does)
_SHOWN_CANDIDATES = 10

# kind: (folder under the reports folder, file-name prefix, suffix, what a person calls it)
KINDS: Mapping[str, tuple[str, str, str, str]] = {
    "report": ("", "", ".md", "report"),
    "record": ("meta", "run-", ".yaml", "run record"),
    "critique": ("meta", "critique-", ".yaml", "critique"),
    "failed": ("meta", "failed-critique-", ".yaml", "failed critique"),
    "journal": ("meta", "journal-", ".json", "journal entry"),  # every run, from its start (research_agent.journal)
}
_LATEST = re.compile(r"^latest(?:~(\d{1,6}))?$")
_HEX = re.compile(r"^[0-9a-f]+$")


def short_hash(run_id: str) -> str:
    """The full hex SHA-256 of a run id (its short id is a prefix of this)."""
    return hashlib.sha256(run_id.encode("utf-8")).hexdigest()


def short_ids(run_ids: Iterable[str]) -> dict[str, str]:
    """Each id's short id: 7 hex digits, more where two ids among ``run_ids`` share them."""
    pairs = sorted((short_hash(run_id), run_id) for run_id in set(run_ids))
    shown: dict[str, str] = {}
    for at, (digest, run_id) in enumerate(pairs):
        neighbours = [pairs[i][0] for i in (at - 1, at + 1) if 0 <= i < len(pairs)]
        shared = max((len(os.path.commonprefix([digest, other])) for other in neighbours), default=0)
        shown[run_id] = digest[: max(SHORT_LENGTH, shared + 1)]
    return shown


def short_id(run_id: str, among: Iterable[str] = ()) -> str:
    """The short id of ``run_id``, unique among ``among`` (the other runs a person may name)."""
    return short_ids({run_id, *among})[run_id]


def run_file(reports_dir: Path, kind: str, run_id: str) -> Path:
    """Where the ``kind`` file of run ``run_id`` lives (``meta/critique-<id>.yaml``...)."""
    folder, prefix, suffix, _ = KINDS[kind]
    return Path(reports_dir) / folder / f"{prefix}{run_id}{suffix}"


def named_run_id(ref: str) -> str | None:
    """The run id a file name or path names (``critique-<id>.yaml``, ``<id>.md``...), or None."""
    name = Path(ref).name
    for _folder, prefix, suffix, _ in sorted(KINDS.values(), key=lambda k: -len(k[1])):
        if name.startswith(prefix) and name.endswith(suffix):
            inner = name[len(prefix) : len(name) - len(suffix)]
            if is_run_id(inner):
                return inner
    return None


def _listing(ids: Sequence[str], limit: int = _SHOWN_CANDIDATES) -> str:
    shown = short_ids(ids)
    text = ", ".join(f"{shown[i]} ({i})" for i in ids[:limit])
    return text + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def resolve_ref(ref: str, candidates: Sequence[str], *, what: str = "run", where: str = "") -> str:
    """The one id among ``candidates`` (newest first) that ``ref`` names.

    Raises UnknownRun when none does, AmbiguousRun (listing them) when several do, and
    InputError for an empty reference.
    """
    text = (ref or "").strip()
    place = f" in {where}" if where else ""
    if not text:
        raise InputError(f"no {what} named: give an id, a short id, a prefix, or latest")
    if text in candidates:
        return text
    named = named_run_id(text)
    if named is not None and named in candidates:
        return named
    latest = _LATEST.match(text)
    if latest:
        back = int(latest.group(1) or 0)
        if back < len(candidates):
            return candidates[back]
        count = f"only {len(candidates)} {what}(s)" if candidates else f"no {what}s"
        raise UnknownRun(f"{text}: there are {count}{place}")
    lowered = text.lower()
    by_hash = len(lowered) >= _MIN_HASH_PREFIX and _HEX.match(lowered) is not None
    matches = [
        run_id
        for run_id in candidates
        if run_id.startswith(text) or (by_hash and short_hash(run_id).startswith(lowered))
    ]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise AmbiguousRun(f"{text[:80]!r} is ambiguous: it names {len(matches)} {what}s: {_listing(matches)}")
    raise UnknownRun(f"no {what} matches {text[:80]!r}{place}")


@dataclass(frozen=True)
class Runs:
    """The runs a reports folder holds, by kind of file, each newest first (by the id's timestamp).

    Only the folder listings are read, never a file.
    """

    reports_dir: Path
    by_kind: Mapping[str, tuple[str, ...]]

    @classmethod
    def scan(cls, reports_dir: Path) -> Runs:
        """List ``reports_dir`` and its ``meta`` folder once."""
        reports_dir = Path(reports_dir)
        names = {folder: _names(reports_dir / folder) for folder in {k[0] for k in KINDS.values()}}
        by_kind = {}
        for kind, (folder, prefix, suffix, _) in KINDS.items():
            ids = [n[len(prefix) : len(n) - len(suffix)] for n in names[folder] if n.startswith(prefix)
                   and n.endswith(suffix)]  # fmt: skip
            by_kind[kind] = tuple(sorted((i for i in ids if is_run_id(i)), key=_by_time, reverse=True))
        return cls(reports_dir, by_kind)

    def ids(self, kind: str | None = None) -> tuple[str, ...]:
        """The ids of one kind, or of every run the folder knows (any kind), newest first."""
        if kind is not None:
            return self.by_kind[kind]
        every = {run_id for ids in self.by_kind.values() for run_id in ids}
        return tuple(sorted(every, key=_by_time, reverse=True))

    def short(self, run_id: str) -> str:
        """``run_id``'s short id, unique among every run of this folder."""
        return short_id(run_id, self.ids())

    def shorts(self) -> dict[str, str]:
        """Every run's short id (unique among them)."""
        return short_ids(self.ids())

    def resolve(self, ref: str, kind: str) -> str:
        """The id of the one run of ``kind`` that ``ref`` names (see :func:`resolve_ref`)."""
        folder = self.reports_dir / KINDS[kind][0]
        return resolve_ref(ref, self.by_kind[kind], what=KINDS[kind][3], where=str(folder))


def resolve_run(reports_dir: Path, ref: str, kind: str) -> str:
    """The id of the run of ``kind`` in ``reports_dir`` that ``ref`` names; InputError otherwise."""
    return Runs.scan(reports_dir).resolve(ref, kind)


def _names(folder: Path) -> list[str]:
    try:
        with os.scandir(folder) as entries:
            return [entry.name for entry in entries]
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        raise InputError(f"cannot list {folder}: {exc.strerror or exc}") from None


def _by_time(run_id: str) -> tuple[str, str]:
    return (run_id.rsplit("_", 1)[-1], run_id)
