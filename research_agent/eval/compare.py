"""Two evals of one world compared question by question (``research-agent eval compare A B``).

Each eval's scorecard (``reports/eval-<id>.json``) gives, per question, its fact recall, its cited
precision and its unsupported names and numbers (the mean over the eval's rounds when it ran
several). The questions both graded are paired, and each measure's difference ``B - A`` gets its
paired 90% interval (:func:`.trust.paired`), said in words: this is how a user compares two models,
quick against standard, or lessons against none. Two evals of different worlds (another
fingerprint: other questions or pages) are refused.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..batch.state import is_batch_id
from ..errors import InputError
from ..files.safefile import UnsafeFile, read_text_capped
from .pages import page_paths
from .trust import change_words, paired

__all__ = ["load_scorecard", "compare_evals", "MAX_SCORECARD_BYTES"]

MAX_SCORECARD_BYTES = 64 * 1024 * 1024
_MEASURES: tuple[tuple[str, str, Callable[[dict[str, Any]], float | None]], ...] = (
    ("fact_recall", "fact recall", lambda q: q.get("recall")),
    ("cited_precision", "cited precision", lambda q: q["cited"] / q["found"] if q.get("found") else None),
    ("unsupported", "unsupported names and numbers a report", lambda q: float(len(q.get("unsupported") or ()))),
)


def load_scorecard(ref: str, reports_dir: Path) -> dict[str, Any]:
    """The scorecard of eval ``ref``: an eval id (its ``eval-<id>.json`` in ``reports_dir``) or the
    path of a scorecard file; InputError (one line) when it is neither."""
    path = page_paths(reports_dir, ref)["json"] if is_batch_id(ref) else Path(ref)
    if not path.exists():
        raise InputError(f"{path}: no such eval scorecard (give an eval id or an eval-<id>.json)")
    try:
        inside = Path(reports_dir) if is_batch_id(ref) else None
        data = json.loads(read_text_capped(path, max_bytes=MAX_SCORECARD_BYTES, inside=inside))
    except (UnsafeFile, OSError, ValueError) as exc:
        raise InputError(f"{path}: not an eval scorecard ({exc})") from None
    if not (isinstance(data, dict) and isinstance(data.get("world"), dict) and isinstance(data.get("questions"), list)
            and all(isinstance(q, dict) for q in data["questions"])):  # fmt: skip
        raise InputError(f"{path}: not an eval scorecard (no world and questions)")
    return data


def _per_question(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each graded question's measures, the mean over its rounds, and its most checkpoints."""
    rows: dict[str, list[dict[str, Any]]] = {}
    for q in data["questions"]:
        if q.get("graded") and isinstance(q.get("id"), str):
            rows.setdefault(q["id"], []).append(q)
    out = {}
    for ident, runs in rows.items():
        values: dict[str, Any] = {"checkpoints": max(len(r.get("checkpoints") or ()) for r in runs)}
        for name, _, value in _MEASURES:
            found = [v for r in runs if (v := value(r)) is not None]
            values[name] = statistics.fmean(found) if found else None
        out[ident] = values
    return out


def compare_evals(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """``B - A`` for each measure over the questions both evals graded (see the module docstring)."""
    if a["world"].get("fingerprint") != b["world"].get("fingerprint"):
        raise InputError(f"eval {a.get('id')} and eval {b.get('id')} are not of the same world "
                         f"({a['world'].get('name')} {a['world'].get('fingerprint')}, "
                         f"{b['world'].get('name')} {b['world'].get('fingerprint')}): nothing to pair")  # fmt: skip
    first, second = _per_question(a), _per_question(b)
    common = [ident for ident in first if ident in second]
    step = 1 / max([first[i]["checkpoints"] for i in common] + [1])
    measures = []
    for name, words, _ in _MEASURES:
        pairs = [(second[i][name], first[i][name]) for i in common
                 if first[i][name] is not None and second[i][name] is not None]  # fmt: skip
        difference = paired(pairs, step=1.0 if name == "unsupported" else step)
        measures.append({"measure": name, **difference.as_dict(), "words": change_words(words, difference, "B vs A")})
    return {
        "a": a.get("id"), "b": b.get("id"), "world": a["world"].get("name"), "questions": len(common),
        "measures": measures,
        "rows": [{"id": i, "a": first[i], "b": second[i]} for i in common],
    }  # fmt: skip
