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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

import jsonschema

from ..errors import InputError
from ..sanitize import looks_like_injection

__all__ = [
    "SCHEMA_VERSION",
    "DIMENSIONS",
    "DIMENSION_LABELS",
    "TAGS",
    "TAG_LABELS",
    "GATE_DECISIONS",
    "FIELD_ORDER",
    "MAX_TEXT",
    "MAX_ITEMS",
    "Scores",
    "SkepticFlag",
    "Critique",
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


# --- a compiled fast path -----------------------------------------------------------
# Selection parses up to 50 files per run; jsonschema's general machinery costs most of
# that time. The schema uses a small keyword set, compiled here into plain checks that
# only ever say "valid" or "not valid"; any "not valid" goes through jsonschema for the
# precise messages, so jsonschema stays the judge of what is wrong.

_FAST_KEYWORDS = frozenset(
    [
        "$schema",
        "$id",
        "title",
        "description",
        "type",
        "const",
        "enum",
        "pattern",
        "minLength",
        "maxLength",
        "minimum",
        "maximum",
        "maxItems",
        "uniqueItems",
        "items",
        "properties",
        "required",
        "additionalProperties",
    ]
)
Check = Callable[[Any], bool]


def _is_number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


_TYPES: dict[str, Check] = {
    "object": lambda x: isinstance(x, dict),
    "array": lambda x: isinstance(x, list),
    "string": lambda x: isinstance(x, str),
    "boolean": lambda x: isinstance(x, bool),
    "number": _is_number,
    "integer": lambda x: _is_number(x) and (isinstance(x, int) or float(x).is_integer()),
    "null": lambda x: x is None,
}


def _same(a: Any, b: Any) -> bool:
    """JSON equality as jsonschema sees it: booleans are not numbers."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if _is_number(a) and _is_number(b):
        return a == b
    return type(a) is type(b) and a == b


def _compile(schema: Mapping[str, Any]) -> Check:
    unknown = set(schema) - _FAST_KEYWORDS
    if unknown:
        raise ValueError(f"critique schema uses keywords the fast path does not know: {sorted(unknown)}")
    checks: list[Check] = []
    if "type" in schema:
        checks.append(_TYPES[schema["type"]])
    if "const" in schema:
        const = schema["const"]
        checks.append(lambda x: _same(x, const))
    if "enum" in schema:
        choices = list(schema["enum"])
        checks.append(lambda x: any(_same(x, c) for c in choices))
    if "pattern" in schema:
        pattern = re.compile(schema["pattern"])
        checks.append(lambda x: not isinstance(x, str) or pattern.search(x) is not None)
    if "minLength" in schema:
        low = schema["minLength"]
        checks.append(lambda x: not isinstance(x, str) or len(x) >= low)
    if "maxLength" in schema:
        high = schema["maxLength"]
        checks.append(lambda x: not isinstance(x, str) or len(x) <= high)
    if "minimum" in schema:
        low_n = schema["minimum"]
        checks.append(lambda x: not _is_number(x) or x >= low_n)
    if "maximum" in schema:
        high_n = schema["maximum"]
        checks.append(lambda x: not _is_number(x) or x <= high_n)
    if "maxItems" in schema:
        most = schema["maxItems"]
        checks.append(lambda x: not isinstance(x, list) or len(x) <= most)
    if schema.get("uniqueItems"):
        checks.append(
            lambda x: (
                not isinstance(x, list) or not any(_same(a, b) for i, a in enumerate(x) for b in x[i + 1 :])
            )
        )
    if "items" in schema:
        item = _compile(schema["items"])
        checks.append(lambda x: not isinstance(x, list) or all(item(v) for v in x))
    if "required" in schema:
        required = tuple(schema["required"])
        checks.append(lambda x: not isinstance(x, dict) or all(k in x for k in required))
    if "properties" in schema:
        props = {k: _compile(v) for k, v in schema["properties"].items()}
        checks.append(
            lambda x: not isinstance(x, dict) or all(props[k](v) for k, v in x.items() if k in props)
        )
        if schema.get("additionalProperties") is False:
            checks.append(lambda x: not isinstance(x, dict) or all(k in props for k in x))
    elif "additionalProperties" in schema:
        raise ValueError("additionalProperties without properties is not supported by the fast path")
    return lambda x: all(check(x) for check in checks)


@cache
def _fast_check() -> Check:
    return _compile(critique_schema())


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


def validate_critique(data: Any) -> list[str]:
    """Every problem with ``data`` as a critique, as ``"<path>: <problem>"``; [] when valid."""
    if _fast_check()(data):
        problems: list[str] = []
    else:
        validator = _validator()
        errors = sorted(
            validator.iter_errors(data), key=lambda e: (list(map(str, e.absolute_path)), e.validator)
        )
        problems = [f"{_path(e)}: {_describe(e)}" for e in errors]
        return problems
    problems += _text_problems(data)
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
    schema_version: int = field(default=SCHEMA_VERSION)

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
        return {k: values[k] for k in FIELD_ORDER}

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
            timestamp=data["timestamp"],
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
            schema_version=int(data["schema_version"]),
        )
