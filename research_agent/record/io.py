"""Writing a run record with its report, and reading one back into the typed record.

Reading trusts nothing: the file is read safely (size cap, nesting depth checked before
any parser sees it, safe YAML only), upgraded when it was written before the current
field names, checked against ``record.schema.json`` (shipped with the package; numbers
must be finite), and only then typed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from ..claims import ClaimCheck
from ..config import MODES
from ..errors import InputError
from ..files.atomic import atomic_write_all
from ..files.safeyaml import UnsafeYaml, dump_yaml, load_yaml_file
from ..ids import is_run_id
from ..llm import Usage
from ..measures import CitationFacts, WeakPair
from ..stages.skeptic import SkepticFinding, SkepticReport
from .passages import PassageStore, passages_path
from .types import (
    GATE_DECISIONS,
    CorpusRecord,
    DroppedSubQuery,
    FetchFailure,
    Iteration,
    LessonsRecord,
    ReviewOutcome,
    RunRecord,
    SourceSummary,
    SubQueryCount,
)

__all__ = ["MAX_RUN_RECORD_BYTES", "write_run_record", "read_run_record", "record_yaml", "run_record_schema"]

MAX_RUN_RECORD_BYTES = 4 * 1024 * 1024

# Names of schema_version 1, and what they are called now. The old counts are dropped:
# they are recomputed from the sources (the old dropped_count counted unscored sources too).
_OLD_ITERATION_NAMES = {
    "sources_scored": "scored_count",
    "sources_kept": "kept_count",
    "critical": "critical_count",
    "warnings": "warning_count",
}
_OLD_COUNTS = ("source_count", "dropped_count", "distinct_sites")


def record_yaml(record: RunRecord) -> str:
    """The record as the human-readable YAML of its file (as a critique's is written: libyaml's
    emitter where PyYAML has it, about 20 ms less of a run's end than PyYAML's own)."""
    return dump_yaml(record.as_dict())


def write_run_record(
    path: Path, record: RunRecord, *, report: str, passages: PassageStore | None = None, output: Path | None = None
) -> None:
    """Write the report (at ``record.report_path``), the record (at ``path``) and its
    ``passages`` (beside the record): all or none. The ``output`` copy of the report comes
    last, as it may replace a file."""
    body = report.encode("utf-8")
    files = [(Path(record.report_path), body), (Path(path), record_yaml(record).encode("utf-8"))]
    if passages is not None:
        files.append((passages_path(Path(path).parent, record.id), passages.to_json()))
    if output is not None:
        files.append((Path(output), body))
    atomic_write_all(files)


def read_run_record(path: Path, *, allow_symlink: bool = True) -> RunRecord:
    """Read the run record at ``path``; an InputError names the file and the problem.

    A symlink is followed only with ``allow_symlink``, and only to a file in the
    record's own folder.
    """
    path = Path(path)
    try:
        data = load_yaml_file(
            path, max_bytes=MAX_RUN_RECORD_BYTES, within=path.absolute().parent, allow_symlink=allow_symlink
        )
    except UnsafeYaml as exc:
        raise InputError(f"run record {path}: {str(exc).removeprefix(f'{path}: ')}") from None
    if not isinstance(data, dict):
        raise InputError(f"run record {path}: expected a mapping of fields")
    problem = _core_problem(data)
    if problem is None:
        data = _upgraded(data)
        problem = _schema_problem(data)
    if problem is not None:
        raise InputError(f"run record {path}: {problem}")
    return _record(data)


def _core_problem(data: Mapping[str, Any]) -> str | None:
    """The fields no record can do without, checked first (the messages users know)."""
    for key in ("id", "query", "mode", "report_path", "model"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            return f"missing or empty field {key!r}"
    if not is_run_id(data["id"]):
        return f"id {data['id'][:80]!r} is not a run id"
    if data["mode"] not in MODES:
        return f"unknown mode {data['mode'][:20]!r}"
    if data.get("gate_decision") not in GATE_DECISIONS:
        return f"gate_decision must be one of {', '.join(GATE_DECISIONS)}"
    return None


def _upgraded(data: Mapping[str, Any]) -> dict[str, Any]:
    """A schema_version 1 record (or one without a version) in the current names."""
    if data.get("schema_version", 1) != 1:
        return dict(data)
    out = {k: v for k, v in data.items() if k not in _OLD_COUNTS}
    if isinstance(out.get("iterations"), list):
        out["iterations"] = [
            {_OLD_ITERATION_NAMES.get(k, k): v for k, v in item.items()} if isinstance(item, dict) else item
            for item in out["iterations"]
        ]
    return out


@cache
def run_record_schema() -> dict[str, Any]:
    """The JSON Schema of a run record file, loaded from the package."""
    return json.loads(resources.files(__package__).joinpath("record.schema.json").read_text(encoding="utf-8"))


@cache
def _validator() -> Any:
    import jsonschema  # on first use: a run checks no record before its last answer

    schema = run_record_schema()
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def _schema_problem(data: Mapping[str, Any]) -> str | None:
    """The most telling problem the schema finds, or a number that is not finite; else None."""
    from jsonschema.exceptions import best_match

    error = best_match(_validator().iter_errors(data))
    if error is not None:
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path).lstrip(".")
        return f"{where or '(top level)'}: {' '.join(error.message.split())[:160]}"
    for where, value in _floats(data, ""):
        if not math.isfinite(value):
            return f"{where}: {value} is not a finite number"
    return None


def _floats(value: Any, where: str) -> Iterable[tuple[str, float]]:
    if isinstance(value, float):
        yield where, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _floats(item, f"{where}.{key}".lstrip("."))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _floats(item, f"{where}[{i}]")


# --- typing a checked record (the schema has vouched for every type; absent means default) ---


def _record(data: Mapping[str, Any]) -> RunRecord:
    text = {k: data.get(k, "") for k in ("domain", "started", "finished", "fast_model", "gate_reason",
                                          "final_decision", "stop_reason", "draft_cut")}  # fmt: skip
    return RunRecord(
        id=data["id"],
        query=data["query"],
        mode=data["mode"],
        model=data["model"],
        report_path=data["report_path"],
        gate_decision=data["gate_decision"],
        **{k: v if isinstance(v, str) else "" for k, v in text.items()},
        sub_queries=tuple(str(q) for q in data.get("sub_queries") or ()),
        dropped_sub_queries=tuple(
            DroppedSubQuery(d["plan"], d["query"], d["reason"]) for d in data.get("dropped_sub_queries") or ()
        ),
        sub_query_counts=_sub_query_counts(data.get("sub_query_counts")),
        sources=tuple(_source(s) for s in data.get("sources") or ()),
        found_count=data.get("found_count"),
        capped_by_user=bool(data.get("capped_by_user", False)),
        citations_removed=data.get("citations_removed", 0),
        cut_answers=data.get("cut_answers", 0),
        controls_dropped=data.get("controls_dropped", 0),
        citation_support=_citation_support(data.get("citation_support")),
        skeptic=_skeptic(data.get("skeptic", {})),
        claim_check=None if data.get("claim_check") is None else ClaimCheck.from_dict(data["claim_check"]),
        iterations=tuple(_iteration(i) for i in data.get("iterations") or ()),
        review=_review(data.get("review")),
        lessons=LessonsRecord.from_dict(data.get("lessons", {})),
        plan_by_person=data.get("plan_by_person") is True,
        provider_failures=tuple(data.get("provider_failures", ())),
        fetch_failures=tuple(
            FetchFailure(f.get("location", ""), f.get("reason", "")) for f in data.get("fetch_failures", ())
        ),
        corpus=tuple(_corpus(c) for c in data.get("corpus", ())),
        fetch_stats=dict(data.get("fetch_stats", {})),
        usage={stage: _usage(u) for stage, u in data.get("usage", {}).items()},
        cost_usd=data.get("cost_usd"),
        timings={k: float(v) for k, v in data.get("timings", {}).items()},
        warnings=tuple(data.get("warnings", ())),
    )


def _source(data: Mapping[str, Any]) -> SourceSummary:
    return SourceSummary(
        n=data.get("n"),
        title=data.get("title", ""),
        location=data.get("location", ""),
        site=data.get("site", ""),
        provider=data.get("provider", ""),
        score=data.get("score"),
        reason=data.get("reason", ""),
        status=data.get("status", ""),
        snippet_only=data.get("snippet_only", False),
        published=data.get("published"),
        sub_queries=tuple(data.get("sub_queries", ())),
        identifiers=tuple((str(k), str(v)) for k, v in (data.get("identifiers") or {}).items()),
    )


def _sub_query_counts(data: Any) -> tuple[SubQueryCount, ...] | None:
    if data is None:
        return None
    return tuple(SubQueryCount(c["index"], c["found"], c["fetched"]) for c in data)


def _citation_support(data: Mapping[str, Any] | None) -> CitationFacts | None:
    if data is None:
        return None
    return CitationFacts(
        sentences=data["sentences"],
        weakly_supported=data["weakly_supported"],
        weakly_supported_share=float(data["weakly_supported_share"]),
        weak_pairs=tuple(WeakPair(p["sentence"], p["source"]) for p in data["weak_pairs"]),
    )


def _iteration(data: Mapping[str, Any]) -> Iteration:
    return Iteration(
        plan=data.get("plan", 0),
        revision=data.get("revision", 0),
        sub_queries=tuple(data.get("sub_queries", ())),
        gate=data.get("gate", ""),
        scored_count=data.get("scored_count", 0),
        kept_count=data.get("kept_count", 0),
        viability=data.get("viability"),
        critical_count=data.get("critical_count", 0),
        warning_count=data.get("warning_count", 0),
        decision=data.get("decision", ""),
        reason=data.get("reason", ""),
        tokens=data.get("tokens", 0),
    )


def _skeptic(data: Mapping[str, Any]) -> SkepticReport:
    findings = tuple(
        SkepticFinding(
            lens=f.get("lens", ""),
            severity=f.get("severity", ""),
            claim=f.get("claim", ""),
            reason=f.get("reason", ""),
            fix=f.get("fix", ""),
            confidence=float(f.get("confidence", 0.0)),
        )
        for f in data.get("findings", ())
    )
    return SkepticReport(
        findings=findings,
        viability=data.get("viability"),
        viability_note=data.get("viability_note", ""),
        unavailable=data.get("unavailable", ""),
    )


def _review(data: Mapping[str, Any] | None) -> ReviewOutcome | None:
    if data is None:
        return None
    return ReviewOutcome(
        data["status"], data.get("open_critical", 0), tuple(data.get("reasons", ())), data.get("words")
    )


def _corpus(data: Mapping[str, Any]) -> CorpusRecord:
    counts = {k: data.get(k, 0) for k in ("documents", "indexed", "unchanged", "removed")}
    return CorpusRecord(root=data.get("root", ""), **counts, skipped=dict(data.get("skipped", {})))


def _usage(data: Mapping[str, Any]) -> Usage:
    return Usage(
        prompt_tokens=data.get("prompt_tokens", 0),
        completion_tokens=data.get("completion_tokens", 0),
        calls=data.get("calls", 0),
        retries=data.get("retries", 0),
        cost_usd=data.get("cost_usd"),
    )
