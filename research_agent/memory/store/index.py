"""The summary index of the critique files: ``reports/meta/index.sqlite``.

Parsing thousands of YAML files takes seconds; selection, effects and ``memory list`` need
a few numbers from each, or the critique as loaded. The index keeps those (see
:mod:`.index_rows`) beside the files. It is a cache, never an authority: the YAML stays
the truth.

* :meth:`CritiqueIndex.refresh` lists the critique files, ``lstat``s each one and
  re-reads, with the real loader, every file whose signature (inode, size, mtime,
  ctime, mode) differs from its row; rows of files that are gone are deleted. A hand
  edit, a file swapped for a symlink or a pruned file is therefore picked up at once,
  and a file the loader refuses is stored as refused, with its reason.
* Every row carries a MAC keyed by the user's secret key (:mod:`.index_sign`). A file row
  whose MAC fails is re-read from its file at the refresh; use rows are checked when a
  query reads them (with each file's count of them), and a kept critique when ``memory
  list`` reads it; a failure sends its file to be re-read. So an edited row (``passed =
  0``, a forged or deleted use) changes nothing anyone sees. An index checked in full is
  sealed in the user state folder (:mod:`.index_seal`): while its file is unchanged, its
  rows are not checked again. Without the user's trust (key and seals), the index is built
  in memory only.
* Nothing from the index reaches a prompt by itself: selection re-reads the few
  critiques lessons are drawn from with the loader (see :mod:`..lessons`), and values
  read back are checked again (keys, finite numbers).
* Writes are SQLite transactions in WAL mode (atomic; readers never see half a
  refresh; concurrent runs queue for the write lock). Files are parsed before the lock
  is taken. No wait lasts past the caller's ``time_left`` (a run's remaining time): a
  lock held longer, or files that take longer to read, raise :class:`IndexBusy` (what
  was read so far is kept for the next time).
* The index file (and its ``-wal``/``-shm`` companions) must be regular files: a
  symlink, FIFO or other special file there is left alone and the index is built in
  memory instead, as it is when the folder cannot be written or the file is damaged
  beyond a rebuild. Without any critique file no index is created.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from .critique_types import Critique
from .files import LoadedCritique, future_problem
from .index_db import IndexBusy, TimeLeft, connect_file, connect_memory
from .index_files import Listing, list_files
from .index_seal import IndexTrust
from .index_store import INDEX_NAME, IndexStore, Refresh
from .index_uses import ArmSum, arm_sums_of, newest_texts_of

__all__ = [
    "INDEX_NAME",
    "CritiqueIndex",
    "IndexBusy",
    "IndexTrust",
    "Listing",
    "Refresh",
    "Standing",
    "TimeLeft",
    "list_critiques",
    "list_files",
    "open_index",
]

MISNAMED = "file name is not critique-<run id>.yaml"

_STANDINGS = """
SELECT name,
    CASE
        WHEN stamp < :cutoff THEN :expired
        WHEN stamp > :future THEN 'dated in the future'
        WHEN ok = 0 THEN 'invalid: ' || reason
        WHEN reason != '' THEN reason
        WHEN created > :latest THEN 'dated in the future (' || strftime('%Y-%m-%dT%H:%M:%SZ', created, 'unixepoch') || ')'
        WHEN domain != :domain THEN 'other domain (' || domain || ')'
    END,
    run_id, model, adaptive, mean, passed, available
FROM files ORDER BY stamp DESC, name DESC
"""
_PASSING = """
SELECT domain, COUNT(*) FROM files
WHERE stamp >= :cutoff AND stamp <= :future AND ok = 1 AND reason = '' AND created <= :latest AND passed = 1
GROUP BY domain
"""
_LISTING = """
SELECT f.name, f.ok, f.reason, f.sig, b.sig, b.body, b.mac FROM files f LEFT JOIN bodies b ON b.name = f.name
ORDER BY f.stamp DESC, f.name DESC
"""
# A file as a run in some domain sees it: (name, why it cannot serve the run or None,
# run id, model, adaptive 0/1, mean, passed 0/1, lessons available 0/1).
Standing = tuple[str, "str | None", str, str, int, "float | None", int, int]

class CritiqueIndex(IndexStore):
    """One open summary index and what selection, effects and ``memory list`` ask of it;
    use :func:`open_index` and close it (or use ``with``)."""

    def standings(
        self, domain: str, *, cutoff: str, future: str, latest: float, expired: str
    ) -> list[Standing]:
        """Every file newest first, with why it cannot serve a run in ``domain``, checked in
        this order: run time (from its name) before ``cutoff`` (``expired`` is the reason),
        run time after ``future``, refused by the loader, suspect, own timestamp after
        ``latest`` (seconds), another domain. The reason is None for a valid file of ``domain``."""
        values = {"cutoff": cutoff, "future": future, "latest": latest, "expired": expired, "domain": domain}
        return list(self._query(_STANDINGS, values))

    def passing_by_domain(self, *, cutoff: str, future: str, latest: float) -> dict[str, int]:
        """How many valid, passing critiques each domain has from ``cutoff`` to ``future``
        (run times) and not timed after ``latest``: what :meth:`standings` would leave eligible."""
        values = {"cutoff": cutoff, "future": future, "latest": latest}
        return dict(self._query(_PASSING, values))

    def keys(self) -> list[str]:
        """Every lesson key some critique applied or withheld."""
        return [key for (key,) in self._query("SELECT DISTINCT key FROM uses")]

    def arm_sums(self, keys: list[str], *, domain: str | None, future: str, latest: float) -> list[ArmSum]:
        """``(domain, key, arm, count, sum, sum of squares)`` of each key's target over the
        critiques that applied (or withheld) it, leaving out those where it does not apply."""
        wanted = set(keys)
        return arm_sums_of(row for row in self._uses(domain, future, latest) if row[1] in wanted)

    def newest_texts(
        self, keys: list[str], *, domain: str | None, future: str, latest: float
    ) -> dict[tuple[str, str], str]:
        """``(domain, key) -> text`` of the newest critique that applied each key (same filter)."""
        wanted = set(keys)
        return newest_texts_of(row for row in self._uses(domain, future, latest) if row[1] in wanted)

    def critiques(self, now: datetime | None = None) -> list[LoadedCritique]:
        """Every critique file newest first, loaded or with the reason it was refused, as
        :func:`~research_agent.memory.store.files.load_all` gives them, from the index: a
        kept critique whose MAC fails sends its file to be re-read."""
        for attempt in range(2):
            loaded, forged = self._loaded(now)
            if not forged or attempt:
                break
            self._rebuild(forged)
        return loaded + [LoadedCritique(path, None, MISNAMED) for path in self.last.misnamed]

    def _loaded(self, now: datetime | None) -> tuple[list[LoadedCritique], set[str]]:
        loaded: list[LoadedCritique] = []
        forged: set[str] = set()
        for name, ok, reason, sig, body_sig, body, mac in self._query(_LISTING):
            path = self.meta_dir / name
            if not ok:
                loaded.append(LoadedCritique(path, None, reason))
            elif body_sig != sig or not self._signer.check("bodies", (name, body_sig, body, mac), 3):
                forged.add(name)
            else:
                critique = Critique._from_valid(json.loads(body))
                problem = future_problem(critique, now) if now is not None else None
                loaded.append(LoadedCritique(path, None, problem) if problem else LoadedCritique(path, critique))
        return loaded, forged


def open_index(
    meta_dir: Path,
    *,
    trust: IndexTrust | None = None,
    on_disk: bool = True,
    time_left: TimeLeft | None = None,
    rebuild: bool = False,
) -> CritiqueIndex:
    """The index of ``meta_dir``, refreshed. On disk when there are critique files, the
    file can be used and the user's ``trust`` (secret key and seals) is given; otherwise in
    memory (see the module docstring). ``time_left``: seconds the caller may still wait
    (IndexBusy past them). ``rebuild``: drop every row first, so that every file is read again."""
    meta_dir = Path(meta_dir)
    listing = list_files(meta_dir)
    use_disk = on_disk and trust is not None and bool(listing.files)
    if use_disk and trust is not None:
        trust.key  # noqa: B018 - made or read now: a state folder that cannot be used fails before any work
    sealed = use_disk and not rebuild and trust is not None and trust.holds(meta_dir / INDEX_NAME)
    conn = connect_file(meta_dir / INDEX_NAME, time_left) if use_disk else None
    index = CritiqueIndex(
        meta_dir, conn or connect_memory(), conn is not None, trust=trust, sealed=sealed, time_left=time_left
    )
    try:
        if rebuild:
            index.clear()
        index.refresh(listing)
    except BaseException:
        index.close()
        raise
    return index


def list_critiques(
    meta_dir: Path, *, trust: IndexTrust | None, now: datetime | None = None
) -> list[LoadedCritique]:
    """What :func:`~research_agent.memory.store.files.load_all` gives, answered from the index."""
    with open_index(meta_dir, trust=trust) as index:
        return index.critiques(now)
