"""The critique record: its JSON Schema, its dataclass, and precise validation messages.

The schema ships with the package as ``critique.schema.json`` (``schema_version: 1``).
:func:`validate_critique` returns every problem as ``"<path>: <problem>"`` so that a
person who broke a file by hand learns exactly where, e.g.
``scores.coverage: 7 is above the maximum of 5``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from importlib import resources
from typing import Any

import jsonschema

from ..errors import InputError
from ..ids import format_utc, parse_zoned_time
from ..text.sanitize import looks_like_injection
from .fastschema import Check, compile_schema

__all__ = [
    "SCHEMA_VERSION",
    "DIMENSIONS",
    "DIMENSION_LABELS",
    "TAGS",
    "TAG_LABELS",
    "GATE_DECISIONS",
    "FIELD_ORDER",
    "OPTIONAL_FIELDS",
    "MAX_TEXT",
    "MAX_ITEMS",
    "Scores",
    "SkepticFlag",
    "Critique",
    "CritiqueUsage",
    "InvalidCritique",
    "critique_schema",
    "validate_critique",
    "is_pass",
    "mean_of",
]

SCHEMA_VERSION = 1
MAX_TEXT = 200
MAX_ITEMS = 5

DIMENSIONS: tuple[str, ...] = (
    "source_diversity",
    "claim_support",
    "coverage",
    "geographic_balance",
    "actionability",
)
DIMENSION_LABELS: dict[str, str] = {d: d.replace("_", " ") for d in DIMENSIONS}

# The fixed tag vocabulary, with the words a lesson uses for each.
TAG_LABELS: dict[str, str] = {
    "geographic_bias": "sources leaned on one region",
    "single_site": "most sources came from a single site",
    "weak_primary_sources": "primary sources were weak or missing",
    "outdated_sources": "sources were outdated",
    "unsupported_claims": "claims lacked support in the cited sources",
    "low_coverage": "parts of the question went uncovered",
    "press_release_heavy": "sources were mostly press releases or marketing",
    "few_sources": "too few sources survived relevance scoring",
    "missing_counterarguments": "counterarguments were missing",
    "vague_recommendations": "recommendations were vague",
    "unanswered_sub_queries": "several sub-queries went unanswered",
    "snippet_only_sources": "many sources were read from search snippets only",
}
TAGS: tuple[str, ...] = tuple(TAG_LABELS)

GATE_DECISIONS: tuple[str, ...] = ("full_report", "short_report", "insufficient_data", "no_new_findings")

FIELD_ORDER: tuple[str, ...] = (
    "schema_version",
    "id",
    "query",
    "query_domain",
    "mode",
    "timestamp",
    "model_version",
    "report_path",
    "scores",
    "mean_score",
    "overall_pass",
    "weaknesses",
    "suggestions",
    "tags",
    "skeptic_flags",
    "gate_decision",
    "source_count",
    "dropped_count",
    "adaptive",
    "lessons_applied",
)
# Fields a file may leave out (files written before they existed still load).
OPTIONAL_FIELDS: tuple[str, ...] = ("usage",)


class InvalidCritique(InputError):
    """A critique does not satisfy the schema; the message lists each problem."""


@cache
def critique_schema() -> dict[str, Any]:
    """The JSON Schema of a critique file, loaded from the package."""
    text = resources.files(__package__).joinpath("critique.schema.json").read_text(encoding="utf-8")
    return json.loads(text)


@cache
def _validator() -> jsonschema.protocols.Validator:
    schema = critique_schema()
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


@cache
def _fast_check() -> Check:
    """Selection parses up to 50 files per run; the compiled checks (see
    :mod:`.fastschema`) say only "valid" or "not valid", and any "not valid" goes through
    jsonschema for the precise messages."""
    return compile_schema(critique_schema())


def mean_of(values: Mapping[str, int]) -> float:
    """The mean of the five dimension scores, rounded to two places."""
    return round(sum(values[d] for d in DIMENSIONS) / len(DIMENSIONS), 2)


def is_pass(values: Mapping[str, int]) -> bool:
    """``overall_pass``: mean of at least 3.0 and no dimension below 2."""
    return mean_of(values) >= 3.0 and min(values[d] for d in DIMENSIONS) >= 2


def _path(error: jsonschema.ValidationError) -> str:
    out = ""
    for part in error.absolute_path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def _short(value: Any) -> str:
    text = " ".join(repr(value).split())
    return text if len(text) <= 40 else text[:37] + "..."


def _describe(error: jsonschema.ValidationError) -> str:
    """One short, readable problem for one schema error (never the whole offending value)."""
    v, inst, arg = error.validator, error.instance, error.validator_value
    if v == "required":
        missing = [k for k in arg if isinstance(inst, dict) and k not in inst]
        return f"missing field {', '.join(missing) or arg}"
    if v == "additionalProperties" and isinstance(inst, dict):
        extra = sorted(str(k) for k in inst if k not in error.schema.get("properties", {}))
        return f"unknown field {', '.join(_short(k) for k in extra)}"
    if v == "type":
        return f"expected {arg}, got {type(inst).__name__} {_short(inst)}"
    if v == "maximum":
        return f"{_short(inst)} is above the maximum of {arg}"
    if v == "minimum":
        return f"{_short(inst)} is below the minimum of {arg}"
    if v == "maxLength":
        return f"text is {len(inst)} characters; the limit is {arg}"
    if v == "minLength":
        return "must not be empty"
    if v == "maxItems":
        return f"{len(inst)} items; the limit is {arg}"
    if v == "enum":
        choices = ", ".join(str(c) for c in arg)
        return f"{_short(inst)} is not one of: {choices}"
    if v == "const":
        return f"{_short(inst)} must be {arg!r}"
    if v == "pattern" and _path(error) == "timestamp":
        return f"{_short(inst)} {_NOT_A_TIME}"
    if v == "pattern":
        return f"{_short(inst)} has the wrong format"
    if v == "uniqueItems":
        return "items must not repeat"
    return " ".join(error.message.split())[:120]


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]")


def _texts(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    out = [(key, data[key]) for key in ("query", "model_version", "report_path")]
    for key in ("weaknesses", "suggestions", "lessons_applied"):
        out += [(f"{key}[{i}]", text) for i, text in enumerate(data[key])]
    out += [(f"skeptic_flags[{i}].detail", flag["detail"]) for i, flag in enumerate(data["skeptic_flags"])]
    return out


def _text_problems(data: Mapping[str, Any]) -> list[str]:
    """Free text that was never sanitized: control characters or instruction-like phrases."""
    problems = []
    for where, text in _texts(data):
        if _CONTROL.search(text):
            problems.append(f"{where}: contains control or invisible characters")
        if looks_like_injection(text):
            problems.append(f"{where}: contains instruction-like text")
    return problems


_NOT_A_TIME = "is not an ISO 8601 time with a zone (e.g. 2026-11-22T09:58:36Z)"


def _non_finite(data: Any) -> list[str]:
    """``<path>: ... is not a finite number`` for every NaN or infinity (YAML's .nan, .inf)."""
    problems: list[str] = []
    stack: list[tuple[str, Any]] = [("", data)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            problems.append(f"{where or '(top level)'}: {value} is not a finite number")
        elif isinstance(value, dict):
            stack.extend((f"{where}.{k}" if where else str(k), v) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((f"{where}[{i}]", v) for i, v in enumerate(value))
    return sorted(problems)


def validate_critique(data: Any) -> list[str]:
    """Every problem with ``data`` as a critique, as ``"<path>: <problem>"``; [] when valid."""
    problems = _non_finite(data)
    if problems:
        return problems
    if not _fast_check()(data):
        validator = _validator()
        errors = sorted(
            validator.iter_errors(data), key=lambda e: (list(map(str, e.absolute_path)), e.validator)
        )
        return [f"{_path(e)}: {_describe(e)}" for e in errors]
    problems += _text_problems(data)
    if parse_zoned_time(data["timestamp"]) is None:
        problems.append(f"timestamp: {_short(data['timestamp'])} {_NOT_A_TIME}")
    scores = data["scores"]
    mean = mean_of(scores)
    if not math.isclose(float(data["mean_score"]), mean, abs_tol=0.011):
        problems.append(f"mean_score: {data['mean_score']} does not match the scores (mean {mean})")
    if bool(data["overall_pass"]) != is_pass(scores):
        problems.append(
            f"overall_pass: {data['overall_pass']} does not match the scores (should be {is_pass(scores)})"
        )
    return problems


@dataclass(frozen=True)
class Scores:
    """The five dimension scores, integers 1-5."""

    source_diversity: int
    claim_support: int
    coverage: int
    geographic_balance: int
    actionability: int

    def as_dict(self) -> dict[str, int]:
        return {d: getattr(self, d) for d in DIMENSIONS}

    def get(self, dimension: str) -> int:
        return int(getattr(self, dimension))

    @property
    def mean(self) -> float:
        return mean_of(self.as_dict())

    @property
    def passed(self) -> bool:
        return is_pass(self.as_dict())


@dataclass(frozen=True)
class CritiqueUsage:
    """What the critique itself cost: every model call it made. ``cost_usd`` None: price unknown."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    retries: int = 0
    cost_usd: float | None = None

    @classmethod
    def from_usage(cls, usage: Any) -> CritiqueUsage:
        """From an ``llm.Usage`` (a cost that is missing, negative or not finite becomes None)."""
        cost = getattr(usage, "cost_usd", None)
        if isinstance(cost, bool) or not isinstance(cost, int | float) or not 0 <= cost < math.inf:
            cost = None
        return cls(
            prompt_tokens=int(usage.prompt_tokens),
            completion_tokens=int(usage.completion_tokens),
            calls=int(usage.calls),
            retries=int(usage.retries),
            cost_usd=None if cost is None else round(float(cost), 6),
        )

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def as_dict(self) -> dict[str, Any]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "calls": self.calls,
            "retries": self.retries,
            "cost_usd": self.cost_usd,
        }


@dataclass(frozen=True)
class SkepticFlag:
    """One notable skeptic finding of the run: its lens and a short sanitized detail."""

    type: str
    detail: str


@dataclass(frozen=True)
class Critique:
    """One critique of one report; field order is the file's order."""

    id: str
    query: str
    query_domain: str
    mode: str
    timestamp: str
    model_version: str
    report_path: str
    scores: Scores
    mean_score: float
    overall_pass: bool
    weaknesses: tuple[str, ...] = ()
    suggestions: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    skeptic_flags: tuple[SkepticFlag, ...] = ()
    gate_decision: str = "full_report"
    source_count: int = 0
    dropped_count: int = 0
    adaptive: bool = False
    lessons_applied: tuple[str, ...] = ()
    usage: CritiqueUsage | None = None
    schema_version: int = field(default=SCHEMA_VERSION)

    @property
    def created_at(self) -> datetime:
        """When the critique was made (its ``timestamp``), in UTC."""
        when = parse_zoned_time(self.timestamp)
        if when is None:
            raise InvalidCritique(f"timestamp: {_short(self.timestamp)} {_NOT_A_TIME}")
        return when

    def as_dict(self) -> dict[str, Any]:
        """The file's content: plain types, keys in schema order."""
        values = {
            "schema_version": self.schema_version,
            "id": self.id,
            "query": self.query,
            "query_domain": self.query_domain,
            "mode": self.mode,
            "timestamp": self.timestamp,
            "model_version": self.model_version,
            "report_path": self.report_path,
            "scores": self.scores.as_dict(),
            "mean_score": self.mean_score,
            "overall_pass": self.overall_pass,
            "weaknesses": list(self.weaknesses),
            "suggestions": list(self.suggestions),
            "tags": list(self.tags),
            "skeptic_flags": [{"type": f.type, "detail": f.detail} for f in self.skeptic_flags],
            "gate_decision": self.gate_decision,
            "source_count": self.source_count,
            "dropped_count": self.dropped_count,
            "adaptive": self.adaptive,
            "lessons_applied": list(self.lessons_applied),
        }
        data = {k: values[k] for k in FIELD_ORDER}
        if self.usage is not None:
            data["usage"] = self.usage.as_dict()
        return data

    @classmethod
    def from_dict(cls, data: Any) -> Critique:
        """Build from file content; raise InvalidCritique listing each problem."""
        problems = validate_critique(data)
        if problems:
            raise InvalidCritique("; ".join(problems))
        return cls._from_valid(data)

    @classmethod
    def _from_valid(cls, data: Mapping[str, Any]) -> Critique:
        """Build from content that already passed :func:`validate_critique`."""
        return cls(
            id=data["id"],
            query=data["query"],
            query_domain=data["query_domain"],
            mode=data["mode"],
            timestamp=format_utc(parse_zoned_time(data["timestamp"])),  # type: ignore[arg-type]
            model_version=data["model_version"],
            report_path=data["report_path"],
            scores=Scores(**{d: int(data["scores"][d]) for d in DIMENSIONS}),
            mean_score=float(data["mean_score"]),
            overall_pass=bool(data["overall_pass"]),
            weaknesses=tuple(data["weaknesses"]),
            suggestions=tuple(data["suggestions"]),
            tags=tuple(data["tags"]),
            skeptic_flags=tuple(SkepticFlag(f["type"], f["detail"]) for f in data["skeptic_flags"]),
            gate_decision=data["gate_decision"],
            source_count=int(data["source_count"]),
            dropped_count=int(data["dropped_count"]),
            adaptive=bool(data["adaptive"]),
            lessons_applied=tuple(data["lessons_applied"]),
            usage=_usage_from(data.get("usage")),
            schema_version=int(data["schema_version"]),
        )


def _usage_from(data: Mapping[str, Any] | None) -> CritiqueUsage | None:
    if data is None:
        return None
    cost = data["cost_usd"]
    return CritiqueUsage(
        prompt_tokens=int(data["prompt_tokens"]),
        completion_tokens=int(data["completion_tokens"]),
        calls=int(data["calls"]),
        retries=int(data["retries"]),
        cost_usd=None if cost is None else float(cost),
    )
