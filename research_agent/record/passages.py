"""The passages behind a report: per cited source, the text its writer was given.

A run keeps them in ``reports/meta/passages-<id>.json``, written with its report and run
record (both or neither: :func:`research_agent.record.io.write_run_record`). Source ``n``
is the report's ``[n]``. Texts are capped per source (:data:`MAX_SOURCE_CHARS`) and per run
(:data:`MAX_RUN_CHARS`); a cut text says so (``truncated``).

A citation's passage is :meth:`PassageStore.passage`: the best-matching window of at most
120 words of its source's text (:func:`research_agent.text.passage_window.best_window`).
The HTML export's previews and the claim check read the store this way.

Reading trusts nothing (anything under ``reports/`` may have been planted): the file is
read size-capped, never through a symlink, its nesting checked before the JSON parser
sees it, and every field type-checked; a bad file is an InputError with one line.
Retention (:func:`prune_passage_stores`) keeps the newest ``keep`` runs' files.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from ..errors import InputError, StorageError
from ..files.nesting import nesting_problem
from ..files.safefile import UnsafeFile, read_text_capped
from ..ids import id_timestamp, is_run_id
from ..text.passage_window import PASSAGE_WORDS, PassageWindow, best_window

__all__ = [
    "PASSAGES_VERSION",
    "MAX_SOURCE_CHARS",
    "MAX_RUN_CHARS",
    "MAX_PASSAGES_BYTES",
    "StoredSource",
    "PassageStore",
    "build_passage_store",
    "passages_file_name",
    "passages_path",
    "read_passage_store",
    "report_run_id",
    "run_meta_dirs",
    "looked_in",
    "why_no_run",
    "prune_passage_stores",
]

PASSAGES_VERSION = 1
MAX_SOURCE_CHARS = 16_000  # several times what any mode gives the writer of one source
MAX_RUN_CHARS = 400_000
MAX_PASSAGES_BYTES = 4 * MAX_RUN_CHARS + 256 * 1024  # JSON escapes and the titles on top
_FUTURE_SLACK = timedelta(hours=1)  # clock skew between machines sharing a reports folder


@dataclass(frozen=True)
class StoredSource:
    """Source ``n`` of a report: its title and location, and the text its writer was given."""

    n: int
    title: str
    location: str
    text: str
    truncated: bool = False


@dataclass(frozen=True)
class PassageStore:
    """The stored passages of run ``run_id``, one entry per source of its report."""

    run_id: str
    sources: tuple[StoredSource, ...]

    def source(self, n: int) -> StoredSource | None:
        """Source ``n`` (as the report numbers it), or None when the store has no such source."""
        return next((s for s in self.sources if s.n == n), None)

    def passage(self, sentence: str, n: int, *, max_words: int = PASSAGE_WORDS) -> PassageWindow | None:
        """The passage of source ``n`` that ``sentence`` cites: its best-matching window of at
        most ``max_words`` words; None when source ``n`` is not stored or has no text."""
        source = self.source(n)
        if source is None or not source.text.strip():
            return None
        return best_window(sentence, source.text, max_words=max_words)

    def as_dict(self) -> dict[str, Any]:
        return {
            "schema_version": PASSAGES_VERSION,
            "id": self.run_id,
            "sources": [s.__dict__ for s in self.sources],
        }

    def to_json(self) -> bytes:
        """The bytes of its file."""
        return json.dumps(self.as_dict(), ensure_ascii=False, indent=1).encode("utf-8")


def _cut(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, at a word boundary when one is near."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    space = cut.rfind(" ", max(0, limit - 200))
    return cut[:space] if space > 0 else cut


def build_passage_store(run_id: str, sources: Sequence[tuple[str, str, str]]) -> PassageStore:
    """The store of run ``run_id``: ``sources[n - 1]`` is (title, location, text) of source ``n``,
    each text capped at :data:`MAX_SOURCE_CHARS`, and all of them at :data:`MAX_RUN_CHARS`."""
    stored = []
    left = MAX_RUN_CHARS
    for n, (title, location, text) in enumerate(sources, start=1):
        kept = _cut(_cut(text, MAX_SOURCE_CHARS), left)
        left -= len(kept)
        stored.append(StoredSource(n, title[:500], location[:4000], kept, truncated=len(kept) < len(text)))
    return PassageStore(run_id, tuple(stored))


def passages_file_name(run_id: str) -> str:
    """``passages-<id>.json``; StorageError for an id that is not a run id."""
    if not is_run_id(run_id):
        raise StorageError(f"not a run id: {run_id[:80]!r}")
    return f"passages-{run_id}.json"


def passages_path(meta_dir: Path, run_id: str) -> Path:
    return Path(meta_dir) / passages_file_name(run_id)


def read_passage_store(meta_dir: Path, run_id: str) -> PassageStore | None:
    """The stored passages of run ``run_id`` in ``meta_dir``; None when there is no such file.

    InputError (one line naming the file) for a file that is unsafe or not a passage store.
    """
    path = passages_path(meta_dir, run_id)
    if not (path.exists() or path.is_symlink()):
        return None
    try:
        text = read_text_capped(path, max_bytes=MAX_PASSAGES_BYTES, inside=Path(meta_dir))
    except UnsafeFile as exc:
        raise InputError(f"passages {path}: {exc}") from None
    problem = nesting_problem(text, "json")
    if problem is not None:
        raise InputError(f"passages {path}: {problem}")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise InputError(f"passages {path}: not JSON ({' '.join(str(exc).split())[:120]})") from None
    try:
        store = _store(data)
    except (TypeError, ValueError) as exc:
        raise InputError(f"passages {path}: {exc}") from None
    if store.run_id != run_id:
        raise InputError(f"passages {path}: holds run {store.run_id[:80]!r}, not {run_id!r}")
    return store


def _store(data: Any) -> PassageStore:
    """A checked store from parsed JSON; TypeError or ValueError naming what is wrong."""
    if not isinstance(data, dict):
        raise TypeError("expected a JSON object")
    if data.get("schema_version") != PASSAGES_VERSION:
        raise ValueError(f"unknown schema_version {str(data.get('schema_version'))[:20]!r}")
    if not is_run_id(data.get("id")):
        raise ValueError("'id' is not a run id")
    items = data.get("sources")
    if not isinstance(items, list):
        raise TypeError("'sources' must be a list")
    return PassageStore(data["id"], tuple(_source(item, i) for i, item in enumerate(items)))


def _source(item: Any, index: int) -> StoredSource:
    if not isinstance(item, dict):
        raise TypeError(f"sources[{index}] must be an object")
    n = item.get("n")
    if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= 100_000:
        raise ValueError(f"sources[{index}].n must be a whole number from 1")
    fields = {key: item.get(key, "") for key in ("title", "location", "text")}
    for key, value in fields.items():
        if not isinstance(value, str):
            raise TypeError(f"sources[{index}].{key} must be text")
    truncated = item.get("truncated", False)
    if not isinstance(truncated, bool):
        raise TypeError(f"sources[{index}].truncated must be true or false")
    return StoredSource(n, fields["title"], fields["location"], fields["text"][:MAX_SOURCE_CHARS], truncated)


def report_run_id(front_matter: Mapping[str, Any], path: Path | None = None) -> str | None:
    """The run a report belongs to: its front matter's ``id:``, else its file name when that is
    a run id (reports written before ``id:`` existed); None when neither names a run."""
    named = front_matter.get("id")
    if is_run_id(named):
        return named
    stem = Path(path).stem if path is not None else None
    return stem if is_run_id(stem) else None


def run_meta_dirs(report: Path, reports_dir: Path) -> list[Path]:
    """Where the run of the report at ``report`` keeps its files, in the order to look: the
    ``meta/`` folder beside the report, its parent's when the report sits one folder down
    (``reports/copies/x.md``) and that one exists, then the reports folder's. Each once."""
    here = Path(report).absolute().parent
    found = [here / "meta"]
    if (here.parent / "meta").is_dir():
        found.append(here.parent / "meta")
    found.append(Path(reports_dir).absolute() / "meta")
    return list(dict.fromkeys(found))


def looked_in(folders: Sequence[Path]) -> str:
    """"looked in a/meta and b/meta": where a run's files were looked for, for an error."""
    names = [str(folder) for folder in folders]
    return "looked in " + (", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0])


def why_no_run(front_matter: Mapping[str, Any]) -> str:
    """Why a report whose :func:`report_run_id` is None names no run, in words."""
    named = front_matter.get("id")
    if named is None or named == "":
        return "its front matter has no id"
    text = str(named)
    if any(mark in text for mark in ("/", "\\", "..", "\x00")):
        return "its front matter's id holds path characters (/, \\ or ..), so it names no run"
    return "its front matter's id is not a run id"


def prune_passage_stores(
    meta_dir: Path, keep: int, *, protect: Iterable[str] = (), now: datetime | None = None, dry_run: bool = False
) -> list[Path]:
    """Delete ``passages-<id>.json`` files beyond the newest ``keep`` runs (0 keeps all);
    return the removed paths (with ``dry_run``, those it would remove, removing none).

    Files of runs whose run record is beside them and that are not dated in the future
    rank first, newest first; the rest (no record, or a future date) rank after every one
    of them, so junk never displaces a real run's passages. Files whose names do not
    parse are left alone; a file another process removed first is skipped.
    """
    if keep <= 0:
        return []
    meta_dir = Path(meta_dir)
    try:
        names = [p.name for p in meta_dir.iterdir() if p.name.startswith("passages-")]
    except OSError:
        return []
    limit = (now or datetime.now(UTC)).astimezone(UTC) + _FUTURE_SLACK
    ranked = []
    for name in names:
        run_id = name.removeprefix("passages-").removesuffix(".json")
        when = id_timestamp(run_id) if is_run_id(run_id) and name.endswith(".json") else None
        if when is None:
            continue
        real = when <= limit and (meta_dir / f"run-{run_id}.yaml").is_file()
        ranked.append((real, when, name, run_id))
    ranked.sort(reverse=True)
    protected = set(protect)
    removed = []
    for _, _, name, run_id in ranked[keep:]:
        if run_id in protected:
            continue
        if dry_run:
            removed.append(meta_dir / name)
            continue
        try:
            (meta_dir / name).unlink()
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise StorageError(f"cannot remove {meta_dir / name}: {exc.strerror or exc}") from None
        removed.append(meta_dir / name)
    return removed
