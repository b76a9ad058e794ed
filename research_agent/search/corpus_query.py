"""Querying a corpus index: safe FTS5 expressions, BM25 ranking, one hit per file.

Passages are what FTS5 ranks, but a search answers with one hit per file, carrying
that file's best passages within a token budget (in document order) and a snippet
around the first query term of its best passage.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..sources import SearchHit
from ..text.passages import estimate_tokens
from ..text.passages import tokenize as tokenize_words

__all__ = ["RankedHit", "fts_query", "query_terms", "ranked_hits"]

_SNIPPET_CHARS = 300
_MAX_QUERY_TERMS = 32


@dataclass(frozen=True)
class RankedHit:
    """A search hit with its BM25 score (higher is better) for merging across corpora."""

    score: float
    hit: SearchHit


def query_terms(query: str) -> list[str]:
    """The query's search terms, in order, once each; stop words only when nothing else is left."""
    return list(dict.fromkeys(tokenize_words(query) or re.findall(r"\w+", query.lower())))


def fts_query(query: str) -> str:
    """An FTS5 MATCH expression for free user text; "" when nothing is searchable.

    The text is tokenised here, each term double-quoted and the terms OR-ed, so no user
    text (``AND``, ``NEAR(``, ``*``, stray quotes...) can be read as FTS5 syntax.
    Stop words are dropped unless nothing else is left.
    """
    unique = query_terms(query)[:_MAX_QUERY_TERMS]
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in unique)


def _snippet(passage: str, terms: Sequence[str]) -> str:
    """About 300 characters of ``passage``, around the first query term it contains."""
    if len(passage) <= _SNIPPET_CHARS:
        return passage
    start = 0
    lowered = passage.lower()
    positions = [p for p in (lowered.find(t) for t in terms if t) if p >= 0]
    if positions:
        first = min(positions)
        if first > _SNIPPET_CHARS // 3:
            start = passage.rfind(" ", 0, first - _SNIPPET_CHARS // 4) + 1
    end = start + _SNIPPET_CHARS
    if end < len(passage):
        cut = passage.rfind(" ", start, end)
        end = cut if cut > start else end
    text = passage[start:end].strip()
    return ("…" if start > 0 else "") + text + ("…" if end < len(passage) else "")


def _fit_budget(passages: list[tuple[float, int, str]], token_budget: int) -> str:
    """Best-scoring passages (score, seq, body) within the budget, in document order."""
    chosen: list[tuple[int, str]] = []
    used = 0
    for _score, seq, body in sorted(passages, key=lambda p: (-p[0], p[1])):
        cost = estimate_tokens(body)
        if not chosen and cost > token_budget:
            words = body.split()
            return " ".join(words[: max(1, token_budget * 3 // 4)])
        if used + cost > token_budget:
            continue
        chosen.append((seq, body))
        used += cost
    return "\n\n".join(body for _seq, body in sorted(chosen))


def _best_files(
    conn: sqlite3.Connection, match: str, limit_files: int, skip: Callable[[str], bool] | None = None
) -> dict[int, float]:
    """file id -> BM25 rank of its best passage (lower is better), best first, at most ``limit_files``;
    files whose path ``skip`` accepts are left out."""
    rows = conn.execute(
        "SELECT file_id, bm25(passages) AS rank FROM passages WHERE passages MATCH ? ORDER BY rank LIMIT ?",
        (match, max(200, limit_files * 50) * (4 if skip else 1)),
    ).fetchall()
    best: dict[int, float] = {}
    for file_id, rank in rows:
        if file_id not in best:
            best[file_id] = rank
    if skip is not None and best:
        marks = ",".join("?" * len(best))
        paths = dict(conn.execute(f"SELECT id, path FROM files WHERE id IN ({marks})", list(best)).fetchall())
        best = {file_id: rank for file_id, rank in best.items() if not skip(paths.get(file_id, ""))}
    return dict(list(best.items())[:limit_files])


def _matching_passages(
    conn: sqlite3.Connection, match: str, chosen: list[int]
) -> tuple[dict[int, tuple[str, str]], dict[int, list[tuple[float, int, str]]]]:
    """(file id -> (path, title), file id -> its matching passages as (score, seq, body))."""
    marks = ",".join("?" * len(chosen))
    files = {
        file_id: (path, title)
        for file_id, path, title in conn.execute(
            f"SELECT id, path, title FROM files WHERE id IN ({marks})", chosen
        )
    }
    per_file: dict[int, list[tuple[float, int, str]]] = {file_id: [] for file_id in chosen}
    for file_id, seq, body, rank in conn.execute(
        f"SELECT file_id, seq, body, bm25(passages) FROM passages WHERE passages MATCH ? AND file_id IN ({marks})",
        (match, *chosen),
    ):
        per_file[file_id].append((-rank, seq, body))
    return files, per_file


def ranked_hits(
    conn: sqlite3.Connection,
    root: Path,
    query: str,
    *,
    limit_files: int,
    token_budget: int,
    skip: Callable[[str], bool] | None = None,
) -> list[RankedHit]:
    """The files under ``root`` best matching ``query``, one hit each, best first; files whose
    corpus-relative path ``skip`` accepts are left out.

    Raises sqlite3.Error when the index cannot be read.
    """
    match = fts_query(query)
    if not match or limit_files <= 0:
        return []
    best = _best_files(conn, match, limit_files, skip)
    if not best:
        return []
    files, per_file = _matching_passages(conn, match, list(best))
    terms = query_terms(query)
    hits = []
    for file_id, rank in best.items():
        if file_id not in files or not per_file[file_id]:
            continue
        path, title = files[file_id]
        passages = per_file[file_id]
        top = max(passages, key=lambda p: (p[0], -p[1]))
        hit = SearchHit(
            title=title or Path(path).stem,
            location=str(root / path),
            snippet=_snippet(top[2], terms),
            provider="local",
            text=_fit_budget(passages, token_budget),
        )
        hits.append(RankedHit(score=-rank, hit=hit))
    return hits
