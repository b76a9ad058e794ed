"""Builders shared by the memory tests (no tests of its own)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from research_agent.ids import make_run_id
from research_agent.memory.safeyaml import dump_yaml
from research_agent.memory.schema import DIMENSIONS, Critique, Scores, SkepticFlag
from research_agent.memory.store import critique_path, write_critique

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def stamp(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def make_critique(
    n: int = 0,
    *,
    domain: str = "technology",
    when: datetime | None = None,
    scores: tuple[int, int, int, int, int] | dict[str, int] = (4, 4, 4, 4, 4),
    tags: tuple[str, ...] = (),
    adaptive: bool = False,
    model: str = "model-a",
    weaknesses: tuple[str, ...] = ("Two statistics have no citation.",),
    query: str | None = None,
) -> Critique:
    """A valid critique of run number ``n`` made ``n`` hours before NOW (unless ``when``)."""
    when = when or NOW - timedelta(hours=n, minutes=1)
    values = dict(zip(DIMENSIONS, scores, strict=True)) if isinstance(scores, tuple) else dict(scores)
    s = Scores(**values)
    query = query or f"question number {n}"
    return Critique(
        id=make_run_id(query, when),
        query=query,
        query_domain=domain,
        mode="standard",
        timestamp=stamp(when),
        model_version=model,
        report_path=f"reports/{make_run_id(query, when)}.md",
        scores=s,
        mean_score=s.mean,
        overall_pass=s.passed,
        weaknesses=weaknesses,
        suggestions=("Add an independent source.",),
        tags=tags,
        skeptic_flags=(SkepticFlag("evidence", "concern: a figure is unsourced"),),
        gate_decision="full_report",
        source_count=6,
        dropped_count=3,
        adaptive=adaptive,
        lessons_applied=("In 3 of the last 4 technology reports coverage scored 2 or lower.",)
        if adaptive
        else (),
    )


def put(meta: Path, critique: Critique) -> Path:
    return write_critique(meta, critique)


def put_raw(meta: Path, critique: Critique, **changes: Any) -> Path:
    """Write a critique file by hand, with fields changed (None deletes a field); no validation."""
    data = critique.as_dict()
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    meta.mkdir(parents=True, exist_ok=True)
    path = critique_path(meta, critique.id)
    path.write_text(dump_yaml(data), encoding="utf-8")
    return path


def put_text(meta: Path, critique: Critique, text: str) -> Path:
    meta.mkdir(parents=True, exist_ok=True)
    path = critique_path(meta, critique.id)
    path.write_text(text, encoding="utf-8")
    return path


def put_run(meta: Path, critique: Critique, site: str, *, cited: str | None = None, **changes: Any) -> Path:
    """Write the run record and report behind ``critique``, as a run would.

    The record keeps two sources from ``site``; the report's Sources cite ``cited``
    (default: ``site``). ``changes`` override record fields (None deletes one).
    """
    reports = meta.parent
    record: dict[str, Any] = {
        "id": critique.id,
        "query": critique.query,
        "mode": critique.mode,
        "model": critique.model_version,
        "gate_decision": critique.gate_decision,
        "report_path": critique.report_path,
        "sources": [
            {"site": site, "status": "kept"},
            {"site": site, "status": "kept"},
            {"site": "other.org", "status": "dropped"},
        ],
    }
    for key, value in changes.items():
        if value is None:
            record.pop(key, None)
        else:
            record[key] = value
    meta.mkdir(parents=True, exist_ok=True)
    host = cited if cited is not None else site
    (reports / f"{critique.id}.md").write_text(
        f"# Report\n\nText [1].\n\n## Sources\n\n1. A page — https://{host}/page\n", encoding="utf-8"
    )
    path = meta / f"run-{critique.id}.yaml"
    path.write_text(dump_yaml(record), encoding="utf-8")
    return path
