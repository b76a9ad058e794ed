"""A batch's state file, ``reports/meta/batch-<id>.yaml``: every question and where it stands.

Each question is ``pending``, ``running``, ``done`` (with its run id and what came out) or
``failed`` (with the error and the attempts). :meth:`BatchState.save` writes the whole file
atomically and is called after every change, so a crash or a kill leaves the state as it was
after the last change: the questions that were running then are pending again when the batch
resumes (:meth:`BatchState.load`). A question is known by its :attr:`Entry.key`, a hash of
the question and the options that decide its run (mode, corpus, search, max_sources, models),
so a resumed batch skips exactly the questions already done with the same options.

The file lies under ``reports/``, where anything may have been planted: it is read size-capped
and schema-checked, a question it calls done counts as done only while its run record exists,
and the folders it names are read only under the user's signature (:mod:`.reach`).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar, Literal, Self

from ..errors import InputError
from ..files.atomic import atomic_write_text
from ..files.safeyaml import dump_yaml, load_yaml_text, read_capped
from ..ids import format_utc, is_run_id, make_run_id
from ..text.controls import one_line

__all__ = ["Entry", "BatchState", "STATES", "EntryState", "BatchStatus", "entry_key", "question_key", "state_path",
           "find_unfinished", "find_latest", "make_batch_id", "is_batch_id", "batch_ids"]  # fmt: skip

EntryState = Literal["pending", "running", "done", "failed"]  # where one question stands
BatchStatus = Literal["running", "stopped", "finished"]  # how the batch's last session left it
STATES: tuple[EntryState, ...] = ("pending", "running", "done", "failed")
MAX_STATE_BYTES = 64 * 1024 * 1024
MAX_STATE_NODES = 60 * 10_000 + 1_000  # a node budget of 60 a question, for the largest batch

_HEADER = """\
# research-agent batch {id}: every question of the batch and where it stands (pending, running,
# done with its run id and outcome, failed with its error and attempts). Written after every
# change; `research-agent batch --resume {id}` (or the same FILE again) continues it, skipping
# the questions done with the same options (key: a hash of the question and those options).
"""


# Like a run id, with a hyphen where a run id has its underscore: reports/batch-<id>.md is never
# taken for a report (a report's name is a run id).
BATCH_ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}-[0-9]{8}T[0-9]{12}Z$")


def make_batch_id(name: str, now: datetime) -> str:
    """A new batch id: the slug of ``name`` and the UTC time, e.g. ``questions-20260101T090000000000Z``."""
    slug, _, stamp = make_run_id(name, now).rpartition("_")
    return f"{slug}-{stamp}"


def is_batch_id(text: object) -> bool:
    return isinstance(text, str) and BATCH_ID.match(text) is not None and not is_run_id(text)


def question_key(question: str) -> str:
    """A question as compared for duplicates and for resuming: case and spacing do not matter."""
    return one_line(question.casefold())


def entry_key(question: str, options: dict[str, Any]) -> str:
    """The hash that says two questions run alike: the question's words and the run options."""
    text = json.dumps({"q": question_key(question), "o": options}, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@dataclass
class Entry:
    """One question of a batch. ``row`` is what its line set; ``options`` what decides its run."""

    line: int
    question: str
    key: str
    row: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    state: EntryState = "pending"
    attempts: int = 0
    run_id: str = ""
    error: str = ""
    seconds: float = 0.0
    outcome: dict[str, Any] = field(default_factory=dict)

    @property
    def critique_owed(self) -> bool:
        """Done, its critique not run: a stop came after its report was written (a resumed batch
        runs only that critique)."""
        critique = self.outcome.get("critique") if self.state == "done" else None
        return isinstance(critique, dict) and critique.get("state") == "not run"

    @classmethod
    def from_dict(cls, data: Any) -> Entry:
        if not isinstance(data, dict):
            raise ValueError("not a mapping")
        entry = cls(**{name: data[name] for name in cls.__dataclass_fields__ if name in data})
        kinds: dict[str, type | tuple[type, ...]] = {
            "line": int, "question": str, "key": str, "row": dict, "options": dict, "state": str,
            "attempts": int, "run_id": str, "error": str, "seconds": (int, float), "outcome": dict}  # fmt: skip
        for name, kind in kinds.items():
            if not isinstance(getattr(entry, name), kind) or isinstance(getattr(entry, name), bool):
                raise ValueError(f"{name} has the wrong type")
        if entry.state not in STATES:
            raise ValueError(f"unknown state {entry.state[:20]!r}")
        if entry.run_id and not is_run_id(entry.run_id):
            raise ValueError("run_id is not a run id")
        return entry


def state_path(meta_dir: Path, batch_id: str, kind: str = "batch") -> Path:
    return Path(meta_dir) / f"{kind}-{batch_id}.yaml"


@dataclass
class BatchState:
    """A batch: its id, the file it came from, the options given, its questions, and how it ended.

    ``KIND`` names its file (``<KIND>-<id>.yaml``) and ``HEADER`` heads it: a subclass keeps another
    kind of batch (an eval's) in a file of its own. ``FILE_IS_FOLDER``: ``file`` names a folder its
    runs read (an eval's world), which :mod:`.reach` signs as it signs their corpus folders."""

    KIND: ClassVar[str] = "batch"
    HEADER: ClassVar[str] = _HEADER
    FILE_IS_FOLDER: ClassVar[bool] = False

    id: str
    meta_dir: Path
    file: str = ""
    created: str = ""
    updated: str = ""
    status: BatchStatus = "running"
    overrides: dict[str, Any] = field(default_factory=dict)
    lessons_at_start: dict[str, str] = field(default_factory=dict)
    limits: dict[str, Any] = field(default_factory=dict)
    wall_seconds: float = 0.0  # summed over the sessions that ran it
    signed: str = ""  # the user's signature of the folders it names (see .reach)
    entries: list[Entry] = field(default_factory=list)
    _chunks: dict[str, str] = field(default_factory=dict, repr=False)  # each entry's YAML, by key

    @property
    def path(self) -> Path:
        return state_path(self.meta_dir, self.id, self.KIND)

    def count(self, state: EntryState) -> int:
        return sum(1 for entry in self.entries if entry.state == state)

    @property
    def complete(self) -> bool:
        """Every question done, no critique owed."""
        return all(entry.state == "done" and not entry.critique_owed for entry in self.entries)

    def render(self, *changed: Entry) -> str:
        """The state file's text (``updated``: now). Only the ``changed`` entries (and those never
        written) are serialised again: a change to one question of 10,000 does not redo the rest."""
        self.updated = format_utc(datetime.now(UTC))
        head = {
            "schema_version": 1, "id": self.id, "file": self.file, "created": self.created, "updated": self.updated,
            "status": self.status, "overrides": self.overrides, "lessons_at_start": self.lessons_at_start,
            "limits": self.limits, "wall_seconds": round(self.wall_seconds, 1), "signed": self.signed,
        }  # fmt: skip
        for entry in changed:
            self._chunks.pop(entry.key, None)
        parts = [self.HEADER.format(id=self.id), dump_yaml(head), "questions:\n" if self.entries else "questions: []\n"]
        for entry in self.entries:
            if entry.key not in self._chunks:
                self._chunks[entry.key] = dump_yaml([asdict(entry)])
            parts.append(self._chunks[entry.key])
        return "".join(parts)

    def save(self, *changed: Entry) -> Path:
        """Write the whole state atomically; ``changed``: the entries changed since the last save."""
        return atomic_write_text(self.path, self.render(*changed))

    @classmethod
    def load(cls, meta_dir: Path, batch_id: str) -> Self:
        """The batch ``batch_id`` of ``meta_dir``; InputError (one line) when it is missing or unreadable."""
        if not is_batch_id(batch_id):
            article = "an" if cls.KIND[0] in "aeiou" else "a"
            raise InputError(f"--resume {batch_id[:80]!r}: not {article} {cls.KIND} id (see reports/meta/{cls.KIND}-<id>.yaml)")
        path = state_path(meta_dir, batch_id, cls.KIND)
        if not path.exists():
            raise InputError(f"no {cls.KIND} {batch_id} in {meta_dir} (no {path.name})")
        try:
            data = load_yaml_text(read_capped(path, max_bytes=MAX_STATE_BYTES, within=Path(meta_dir)),
                                  max_nodes=MAX_STATE_NODES)  # fmt: skip
            return cls._from_data(Path(meta_dir), batch_id, data)
        except (InputError, ValueError, TypeError) as exc:
            raise InputError(f"{cls.KIND} state {path}: {exc}") from None

    @classmethod
    def _from_data(cls, meta_dir: Path, batch_id: str, data: Any) -> Self:
        if not isinstance(data, dict) or data.get("id") != batch_id:
            raise ValueError("not the state of this batch")
        questions = data.get("questions")
        if not isinstance(questions, list):
            raise ValueError("no questions list")
        entries = []
        for number, item in enumerate(questions, start=1):
            try:
                entries.append(Entry.from_dict(item))
            except (ValueError, TypeError) as exc:
                raise ValueError(f"question {number}: {exc}") from None
        plain = {name: data.get(name) for name in ("file", "created", "updated", "status", "signed")}
        if not all(isinstance(value, str | None) for value in plain.values()):
            raise ValueError("file, created, updated, status and signed must be text")
        maps: dict[str, Any] = {name: data.get(name) or {} for name in ("overrides", "lessons_at_start", "limits")}
        if not all(isinstance(value, dict) for value in maps.values()):
            raise ValueError("overrides, lessons_at_start and limits must be mappings")
        wall = data.get("wall_seconds") or 0.0
        if not isinstance(wall, int | float) or isinstance(wall, bool) or not 0 <= wall < 1e9:
            raise ValueError("wall_seconds must be a number of seconds")
        texts: dict[str, Any] = {k: v or "" for k, v in plain.items()}
        return cls(batch_id, meta_dir, **texts, **maps, wall_seconds=float(wall),
                   entries=entries)  # fmt: skip


def _states_newest_first(meta_dir: Path, kind: str = "batch") -> Iterator[str]:
    ids = [p.name.removeprefix(f"{kind}-").removesuffix(".yaml") for p in Path(meta_dir).glob(f"{kind}-*.yaml")]
    yield from sorted((i for i in ids if is_batch_id(i)), key=lambda batch_id: batch_id[-23:], reverse=True)


def find_unfinished(meta_dir: Path, file: str, kind: type[BatchState] | None = None) -> BatchState | None:
    """The newest batch of ``file`` (a resolved path) with a question not done yet; None when its
    newest batch is complete, or it has none. Files that cannot be read are passed over.
    ``kind``: the state class whose files are looked at (default :class:`BatchState`)."""
    state = find_latest(meta_dir, file, kind)
    return None if state is None or state.complete else state


def find_latest(meta_dir: Path, file: str, kind: type[BatchState] | None = None) -> BatchState | None:
    """The newest batch of ``file`` (a resolved path), finished or not; None when it has none.
    Files that cannot be read are passed over. ``kind``: as for :func:`find_unfinished`."""
    kind = kind or BatchState
    for batch_id in _states_newest_first(meta_dir, kind.KIND):
        try:
            state = kind.load(meta_dir, batch_id)
        except InputError:
            continue
        if state.file == file:
            return state
    return None


def batch_ids(meta_dir: Path) -> list[str]:
    """The ids of the batches whose state files ``meta_dir`` holds, newest first (by the time in the id)."""
    return list(_states_newest_first(meta_dir))
