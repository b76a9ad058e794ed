"""The ``local`` search provider: one or more corpus folders of the user's own documents.

Each folder has its index (:mod:`.corpus_index`: schema and refresh; :mod:`.corpus_files`:
scanning and reading files; :mod:`.corpus_query`: ranking). The provider validates
the folders and refreshes their indexes once before a run, then answers every query
from the indexes, merging the corpora by BM25 score, one hit per file.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path

from ..errors import InputError, SearchError, StorageError
from ..sources import SearchHit
from .corpus_files import indexable_kinds
from .corpus_index import CorpusIndex, IndexStats
from .corpus_query import RankedHit
from .corpus_rules import CorpusRules

__all__ = ["LocalSearchProvider"]

log = logging.getLogger(__name__)


class LocalSearchProvider:
    """The ``local`` search provider: one or more corpus folders searched together.

    Call :meth:`prepare` once before a run to validate the folders and refresh their
    indexes; :meth:`search` then answers from the indexes without touching the files,
    so a folder that vanishes mid-run still answers (or answers [] with a warning).
    """

    name = "local"

    def __init__(
        self,
        corpus_dirs: Sequence[Path],
        cache_dir: Path,
        *,
        token_budget: int,
        max_file_bytes: int = 20_000_000,
        exclude: Sequence[Path] = (),
        index_exclude: Sequence[str] | None = None,
        query_exclude: Sequence[str] = (),
    ) -> None:
        """``exclude``: folders never indexed (the reports folder). ``index_exclude``: gitignore
        patterns the indexes keep out and remember (None: those they were last given).
        ``query_exclude``: patterns that filter the indexes as they are, at query time."""
        if not corpus_dirs:
            raise InputError("the local search provider needs at least one corpus folder")
        self.token_budget = token_budget
        self.indexes: list[CorpusIndex] = []
        self._given: list[Path] = []
        for folder in corpus_dirs:
            index = CorpusIndex(Path(folder), cache_dir, max_file_bytes=max_file_bytes, exclude=exclude)
            if all(index.root != known.root for known in self.indexes):  # one folder named twice
                self.indexes.append(index)
                self._given.append(Path(folder))
        self._prepared = False
        self._index_exclude = index_exclude
        self._skip = CorpusRules(tuple(query_exclude)).user_excludes if query_exclude else None

    def prepare(self, *, progress: Callable[[Path, int, int], None] | None = None) -> list[IndexStats]:
        """Validate every corpus folder, then refresh each index; return their stats.

        Raises InputError for a folder that does not exist, is not a folder, or holds
        nothing indexable. ``progress(root, done, total)`` reports files being read.
        """
        for given, index in zip(self._given, self.indexes, strict=True):
            if not index.root.exists():
                raise InputError(f"corpus folder {given} does not exist")
            if not index.root.is_dir():
                raise InputError(f"corpus folder {given} is not a folder")
        all_stats = []
        for given, index in zip(self._given, self.indexes, strict=True):
            report = None if progress is None else (lambda d, t, _r=index.root: progress(_r, d, t))
            stats = index.refresh(progress=report, exclude=self._index_exclude)
            if stats.documents == 0:
                kinds = indexable_kinds()
                detail = ""
                if stats.skipped:
                    detail = "; skipped: " + ", ".join(f"{n} {reason}" for reason, n in stats.skipped.items())
                raise InputError(f"corpus folder {given} holds no indexable files ({kinds}){detail}")
            all_stats.append(stats)
        self._prepared = True
        return all_stats

    def _ranked_one(self, index: CorpusIndex, query: str, max_results: int) -> list[RankedHit]:
        try:
            if not self._prepared and not index.exists() and index.root.is_dir():
                index.refresh(exclude=self._index_exclude)
            if not index.root.is_dir():
                log.warning("corpus folder %s is gone; answering from its index as last built", index.root)
            return index.ranked(query, limit_files=max_results, token_budget=self.token_budget, skip=self._skip)
        except (sqlite3.Error, OSError, InputError, SearchError, StorageError) as exc:
            log.warning("local search in %s failed: %s", index.root, exc)
            return []

    async def search(self, query: str, *, max_results: int) -> list[SearchHit]:
        """The ``max_results`` best files across all corpora for ``query``."""
        if max_results <= 0:
            return []
        results = await asyncio.gather(
            *(asyncio.to_thread(self._ranked_one, index, query, max_results) for index in self.indexes)
        )
        merged = sorted((r for ranked in results for r in ranked), key=lambda r: -r.score)
        seen: set[str] = set()
        hits = []
        for ranked in merged:
            if ranked.hit.location in seen:
                continue
            seen.add(ranked.hit.location)
            hits.append(ranked.hit)
            if len(hits) >= max_results:
                break
        return hits
