"""The summary index of the critique files: ``reports/meta/index.sqlite``.

Parsing thousands of YAML files takes seconds; selection and ``memory list`` need a few numbers
from each, the critique without its free text, or the critique as loaded. Lessons' effects read
the trial ledger instead (:meth:`CritiqueIndex.ledger`, :mod:`..trials`), which the index keeps
whole: a row for every critique it lists. The
index keeps those (see :mod:`.rows`) beside the files. It is a cache, never an
authority: the YAML stays the truth.

* :meth:`CritiqueIndex.refresh` lists the critique files, ``lstat``s each one and
  re-reads, with the real loader, every file whose signature (inode, size, mtime,
  ctime, mode) differs from its row; rows of files that are gone are deleted. A hand
  edit, a file swapped for a symlink or a pruned file is therefore picked up at once,
  and a file the loader refuses is stored as refused, with its reason.
* Every row carries a MAC keyed by the user's secret key (:mod:`.sign`). A file row
  whose MAC fails is re-read from its file at the refresh; use and measure rows are checked
  when a query reads them (with each file's count of them), and a file's evidence or kept
  critique whenever it is read; a failure sends its file to be re-read. So an edited row
  (``passed = 0``, a forged or deleted use) changes nothing anyone sees. An index checked in
  full is sealed in the user state folder (:mod:`.seal`): while its file is unchanged,
  its file, use and measure rows are not checked again. Without the user's trust (key and
  seals), the index is built in memory only.
* The rows selection reads hold no free text: a file's *evidence* is the critique without
  its query, weaknesses, suggestions, flags, sub-query wording or lesson texts (see
  :mod:`.rows`), and lessons are built from it. Site names in it reach a prompt only
  when they name a site of the run's own sources (:mod:`research_agent.memory.lessons.setting`);
  values read back are checked again (keys, finite numbers).
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
import os
from datetime import datetime
from pathlib import Path

from ....errors import ResearchError
from ..critique_types import Critique
from ..files import LoadedCritique, future_problem
from ..trials import LEDGER_NAME, TrialLedger, sync_ledger
from .db import IndexBusy, TimeLeft, connect_file, connect_memory
from .listing import Listing, list_files
from .rows import critique_from_evidence
from .seal import IndexTrust
from .store import INDEX_NAME, IndexStore, Refresh

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

_WINDOW = "stamp >= :cutoff AND stamp <= :future AND created <= :latest"
_STANDINGS = """
SELECT name,
    CASE
        WHEN stamp < :cutoff THEN :expired
        WHEN stamp > :future THEN 'dated in the future'
        WHEN ok = 0 THEN 'invalid: ' || reason
        WHEN suspect != '' THEN suspect
        WHEN created > :latest THEN 'dated in the future (' || strftime('%Y-%m-%dT%H:%M:%SZ', created, 'unixepoch') || ')'
        WHEN domain != :domain THEN 'other domain (' || domain || ')'
    END,
    run_id, model, adaptive, mean, passed
FROM files ORDER BY stamp DESC, name DESC LIMIT :cap
"""
_PASSING = f"""
SELECT domain, COUNT(*) FROM files WHERE {_WINDOW} AND ok = 1 AND passed = 1 AND suspect = '' GROUP BY domain
"""
_POOL = f"""
SELECT name, sig, run_id, evidence, evidence_mac FROM files
WHERE domain = :domain AND ok = 1 AND passed = 1 AND suspect = '' AND {_WINDOW}
ORDER BY stamp DESC, name DESC LIMIT :limit
"""
_LAST_KEYS = """
SELECT key FROM uses WHERE domain = :domain AND name = (
    SELECT name FROM uses WHERE domain = :domain AND stamp <= :future AND created <= :latest
    ORDER BY stamp DESC, name DESC LIMIT 1
)
"""
_LISTING = """
SELECT f.name, f.ok, f.reason, f.sig, b.sig, b.body, b.mac FROM files f LEFT JOIN bodies b ON b.name = f.name
ORDER BY f.stamp DESC, f.name DESC
"""
# A file as a run in some domain sees it: (name, why it cannot serve the run or None,
# run id, model, adaptive 0/1, mean, passed 0/1).
Standing = tuple[str, "str | None", str, str, int, "float | None", int]


class CritiqueIndex(IndexStore):
    """One open summary index and what selection and ``memory list`` ask of it (and the trial ledger);
    use :func:`open_index` and close it (or use ``with``)."""

    def standings(
        self, domain: str, *, cutoff: str, future: str, latest: float, expired: str, cap: int = -1
    ) -> list[Standing]:
        """The newest ``cap`` files (every file for -1), newest first, each with why it cannot
        serve a run in ``domain``, checked in this order: run time (from its name) before
        ``cutoff`` (``expired`` is the reason), run time after ``future``, refused by the
        loader, suspect, own timestamp after ``latest`` (seconds), another domain. The reason
        is None for a valid file of ``domain``."""
        values = {"cutoff": cutoff, "future": future, "latest": latest, "expired": expired, "domain": domain}
        return self._query(_STANDINGS, {**values, "cap": cap})

    def passing_by_domain(self, *, cutoff: str, future: str, latest: float) -> dict[str, int]:
        """How many valid, passing, not suspect critiques each domain has from ``cutoff`` to
        ``future`` (run times) and not timed after ``latest``: what could serve a run."""
        values = {"cutoff": cutoff, "future": future, "latest": latest}
        return dict(self._query(_PASSING, values))

    def pool(
        self, domain: str, *, cutoff: str, future: str, latest: float, limit: int
    ) -> list[tuple[str, Critique]]:
        """The newest ``limit`` critiques of ``domain`` that may feed lessons (valid, passing, not
        suspect, in the window), newest first, as ``(file name, critique without free text)``.
        Each one's evidence is checked against its MAC; one that fails is read again from its file."""
        values = {"domain": domain, "cutoff": cutoff, "future": future, "latest": latest, "limit": limit}
        for attempt in range(2):
            out, forged = [], set()
            for name, sig, run_id, text, mac in self._query(_POOL, values):
                if not self._signer.check("evidence", (name, sig, text, mac), 3):
                    forged.add(name)
                    continue
                critique = _evidence(text)
                if critique is not None and critique.id == run_id and critique.query_domain == domain:
                    out.append((name, critique))
            if not forged or attempt:
                return out
            self._rebuild(forged)
        return []  # pragma: no cover - the loop always returns

    def last_keys(self, domain: str, *, future: str, latest: float) -> set[str]:
        """The keys the newest run of ``domain`` with any lesson recorded was eligible for
        (given or withheld): the lessons that were on before this run."""
        self.check_uses(domain)
        values = {"domain": domain, "future": future, "latest": latest}
        return {key for (key,) in self._query(_LAST_KEYS, values)}

    def present(self) -> dict[str, tuple[str, str]]:
        """``run id -> (file name, the hash of its scores)`` of every critique file the loader accepted."""
        rows = self._query("SELECT run_id, name, digest FROM files WHERE ok = 1 ORDER BY stamp, name")
        return {run_id: (name, digest) for run_id, name, digest in rows}

    def ledger(self) -> TrialLedger:
        """The trial ledger beside the critiques (:mod:`..trials`), with a row for every critique
        that exists (rebuilt from it where missing), signed with the user's key (in memory without
        one); opened once per index."""
        found = self.trial_ledger
        if found is None:
            present, owner = self.present(), self.owner
            kept = present or os.path.lexists(self.meta_dir / LEDGER_NAME)  # else no key is made for nothing
            found = TrialLedger.open(self.meta_dir, owner.key if owner is not None and kept else None)
            try:
                sync_ledger(found, self.meta_dir, present, load=self._kept)
            except ResearchError as exc:  # cannot be written: the rows rebuilt serve this look only
                found.problem = found.problem or str(exc)
            self.trial_ledger = found
        return found

    def _kept(self, name: str) -> Critique | None:
        """The critique kept for file ``name`` when its row checks (None: read the file instead)."""
        rows = self._query(
            "SELECT f.sig, b.sig, b.body, b.mac FROM files f JOIN bodies b ON b.name = f.name WHERE f.name = ?", (name,)
        )
        for sig, body_sig, body, mac in rows:
            if body_sig == sig and self._signer.check("bodies", (name, body_sig, body, mac), 3):
                return Critique._from_valid(json.loads(body))
        return None

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


def _evidence(text: str) -> Critique | None:
    """The critique a row's evidence holds; None for a row that does not hold what the loader made
    (rows are only ever written by the loader: one that does not parse was not)."""
    try:
        return critique_from_evidence(text)
    except (ValueError, TypeError, KeyError, AttributeError, ResearchError):
        return None


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
    meta_dir: Path, *, state_dir: Path | None, now: datetime | None = None
) -> list[LoadedCritique]:
    """What :func:`~research_agent.memory.store.files.load_all` gives, answered from the index
    (``state_dir``: the user state folder, whose key lets the on-disk index be used)."""
    with open_index(meta_dir, trust=IndexTrust(state_dir) if state_dir is not None else None) as index:
        return index.critiques(now)
