"""The critique file: its JSON Schema, its vocabulary, and precise validation messages.

The schema ships with the package as ``critique.schema.json`` (``schema_version: 3``); the
versions before it as ``critique-1.schema.json`` and ``critique-2.schema.json``, and files of
every version load. Later changes add optional fields to version 3, never a new version.
:func:`validate_critique` returns every problem as ``"<path>: <problem>"`` so that a
person who broke a file by hand learns exactly where, e.g.
``scores.coverage: 7 is above the maximum of 5``. The typed critique those files
become lives in :mod:`research_agent.memory.store.critique_types`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any, cast

from ...errors import InvalidCritique
from ...ids import parse_zoned_time
from ...stages.gate import GATE_DECISIONS
from ...text.controls import one_line
from ...text.sanitize import looks_like_injection
from .fastschema import Check, compile_schema
from .names import valid_site

if TYPE_CHECKING:  # imported where a file needs its precise messages (see _validator)
    import jsonschema

__all__ = [
    "SCHEMA_VERSION",
    "DIMENSIONS",
    "DIMENSION_LABELS",
    "TAGS",
    "TAG_LABELS",
    "SCHEMA_VERSIONS",
    "STAGES",
    "KEY_KINDS",
    "KIND_STAGES",
    "PERSON_KINDS",
    "WITHHELD_REASONS",
    "LESSON_KEY",
    "key_kind",
    "MAX_LESSON_TEXT",
    "applicable",
    "ramp_reason",
    "GATE_DECISIONS",
    "FIELD_ORDER",
    "OPTIONAL_FIELDS",
    "MAX_TEXT",
    "MAX_ITEMS",
    "InvalidCritique",
    "critique_schema",
    "validate_critique",
    "is_pass",
    "fail_reason",
    "mean_of",
]

SCHEMA_VERSION = 3
SCHEMA_VERSIONS: tuple[int, ...] = (1, 2, 3)  # versions this program reads
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
# Fields written only when present: ``lessons_withheld``, ``usage`` and the version-3
# additions may be left out; ``facts`` is required since version 2 and absent from version-1
# files (which still load).
OPTIONAL_FIELDS: tuple[str, ...] = (
    "lessons_withheld", "lessons", "suspect", "review", "held_out", "run_kind", "plan_by_person", "proposed_lessons",
    "facts", "usage",
)  # fmt: skip
STAGES: tuple[str, ...] = ("decompose", "relevance")  # the stages a lesson can be written for
# A lesson's stable key is a fixed kind, then what it is about (``coverage:unanswered``,
# ``site:kept:docs.python.org``; the critique schema holds the same pattern). Each kind is
# written for one stage: planning lessons go to decompose, judging lessons (site track
# records, source kinds) to relevance.
KIND_STAGES: dict[str, str] = {
    **{kind: "decompose" for kind in ("coverage", "breadth", "geography", "counterarguments", "recency", "primary")},
    **{kind: "relevance" for kind in ("site:kept", "site:dropped", "source-kind")},
}
# Lessons a person wrote (``user:``) or approved from a critic's proposal (``approved:``): their
# stage and target come from the person's entry, not from the kind (version 3).
PERSON_KINDS: tuple[str, ...] = ("user", "approved")
KEY_KINDS: tuple[str, ...] = (*KIND_STAGES, *PERSON_KINDS)
LESSON_KEY = re.compile(rf"^(?:{'|'.join(KEY_KINDS)}):[A-Za-z0-9._/-]{{1,100}}$")
# Why a run did not get a lesson it was eligible for (``lessons_withheld``, version 3): trial,
# withheld at random on its own to measure it; control, a whole-run control; no_lessons, the
# user's --no-lessons; suspended, the domain's lessons are suspended; retired, held back while
# its evidence stands. Only ``trial`` puts a run in a lesson's "without" arm.
WITHHELD_REASONS: tuple[str, ...] = ("trial", "control", "no_lessons", "suspended", "retired")
MAX_LESSON_TEXT = 300


def key_kind(key: str) -> str | None:
    """The kind of a lesson key (``site:kept`` for ``site:kept:docs.python.org``); None when not a key."""
    if not LESSON_KEY.match(key):
        return None
    return next(kind for kind in sorted(KEY_KINDS, key=len, reverse=True) if key.startswith(kind + ":"))


@cache
def critique_schema(version: int = SCHEMA_VERSION) -> dict[str, Any]:
    """The JSON Schema of a critique file of ``version`` (1, 2 or 3), loaded from the package."""
    name = "critique.schema.json" if version == SCHEMA_VERSION else f"critique-{version}.schema.json"
    text = resources.files(__package__).joinpath(name).read_text(encoding="utf-8")
    return json.loads(text)


@cache
def _validator(version: int) -> jsonschema.protocols.Validator:
    import jsonschema  # about 35 ms, only for a file the compiled checks reject

    schema = critique_schema(version)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


@cache
def _fast_check(version: int) -> Check:
    """Selection parses up to 50 files per run; the compiled checks (see
    :mod:`.fastschema`) say only "valid" or "not valid", and any "not valid" goes through
    jsonschema for the precise messages."""
    return compile_schema(critique_schema(version))


def _version_of(data: Any) -> int:
    """The schema a file is checked against: its own version when this program reads it,
    else the current one (whose ``const`` then names the problem)."""
    version = data.get("schema_version") if isinstance(data, dict) else None
    return version if version in SCHEMA_VERSIONS and not isinstance(version, bool) else SCHEMA_VERSION


def applicable(values: Mapping[str, int | None]) -> dict[str, int]:
    """The dimension scores that apply: a null (``None``) score means "not applicable"."""
    return {d: value for d in DIMENSIONS if (value := values.get(d)) is not None}


def mean_of(values: Mapping[str, int | None]) -> float:
    """The mean of the applicable dimension scores, rounded to two places."""
    scores = applicable(values)
    return round(sum(scores.values()) / len(scores), 2)


def is_pass(values: Mapping[str, int | None], review: str | None = None) -> bool:
    """``overall_pass``: a mean of at least 3.0 and no applicable dimension below 2, for a report
    the tool stood behind (a report published ``review: rejected`` never passes)."""
    return fail_reason(values, review) is None


def fail_reason(values: Mapping[str, int | None], review: str | None = None) -> str | None:
    """Why scores (and a review) do not pass (:func:`is_pass`), in words; None when they pass."""
    if review == "rejected":
        return "report rejected by its own review"
    low, mean = [f"{DIMENSION_LABELS[d]} {v}" for d, v in applicable(values).items() if v < 2], mean_of(values)
    return f"{', '.join(low)} (below 2)" if low else f"mean {mean:.2f} (below 3.00)" if mean < 3.0 else None


def ramp_reason(values: Mapping[str, int | None]) -> str | None:
    """Why scores look degenerate, or None: an exact ramp in the schema's dimension order
    (1, 2, 3, 4, 5 or the reverse) is a critic counting, not judging. The same vector
    repeated across critiques is no sign on its own (honest critics repeat too)."""
    scores = tuple(values.get(d) for d in DIMENSIONS)
    ramp = tuple(range(1, len(DIMENSIONS) + 1))
    if scores == ramp or scores == ramp[::-1]:
        shown = ", ".join(str(v) for v in scores)
        return f"the scores are {shown} in the schema's dimension order, a ramp rather than a judgement"
    return None


def _path(error: jsonschema.ValidationError) -> str:
    out = ""
    for part in error.absolute_path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def shown_value(value: Any) -> str:
    text = one_line(repr(value))
    return text if len(text) <= 40 else text[:37] + "..."


def _describe(error: jsonschema.ValidationError) -> str:
    """One short, readable problem for one schema error (never the whole offending value)."""
    v, inst, arg = error.validator, cast(Any, error.instance), cast(Any, error.validator_value)  # never unset
    if v == "required":
        missing = [k for k in arg if isinstance(inst, dict) and k not in inst]
        return f"missing field {', '.join(missing) or arg}"
    if v == "additionalProperties" and isinstance(inst, dict):
        extra = sorted(str(k) for k in inst if k not in cast(Mapping, error.schema).get("properties", {}))
        return f"unknown field {', '.join(shown_value(k) for k in extra)}"
    if v == "type":
        return f"expected {arg}, got {type(inst).__name__} {shown_value(inst)}"
    if v == "maximum":
        return f"{shown_value(inst)} is above the maximum of {arg}"
    if v == "minimum":
        return f"{shown_value(inst)} is below the minimum of {arg}"
    if v == "maxLength":
        return f"text is {len(inst)} characters; the limit is {arg}"
    if v == "minLength":
        return "must not be empty"
    if v == "maxItems":
        return f"{len(inst)} items; the limit is {arg}"
    if v == "enum":
        choices = ", ".join(str(c) for c in arg)
        return f"{shown_value(inst)} is not one of: {choices}"
    if v == "const":
        return f"{shown_value(inst)} must be {arg!r}"
    if v == "pattern" and _path(error) == "timestamp":
        return f"{shown_value(inst)} {NOT_A_TIME}"
    if v == "pattern":
        return f"{shown_value(inst)} has the wrong format"
    if v == "uniqueItems":
        return "items must not repeat"
    return one_line(error.message)[:120]


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]")


def _texts(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    out = [(key, data[key]) for key in ("query", "model_version", "report_path")]
    for key in ("weaknesses", "suggestions"):
        out += [(f"{key}[{i}]", text) for i, text in enumerate(data[key])]
    for i, lesson in enumerate(data["lessons_applied"]):  # version 1: plain text; version 2: {key, stage, text}
        out.append((f"lessons_applied[{i}]", lesson) if isinstance(lesson, str) else (f"lessons_applied[{i}].text", lesson["text"]))
    out += [(f"skeptic_flags[{i}].detail", flag["detail"]) for i, flag in enumerate(data["skeptic_flags"])]
    out += [(f"proposed_lessons[{i}].text", p["text"]) for i, p in enumerate(data.get("proposed_lessons", ()))]
    if "suspect" in data:
        out.append(("suspect", data["suspect"]))
    facts = data.get("facts") or {}
    out += [(f"facts.sub_queries[{i}].query", q["query"]) for i, q in enumerate(facts.get("sub_queries", ()))]
    return out


def _site_problems(data: Mapping[str, Any]) -> list[str]:
    """Site names in the facts that are neither a strict host name nor a corpus folder."""
    sites = (data.get("facts") or {}).get("sites")
    if not sites:
        return []
    named = [("facts.sites.top", sites["top"])] if sites["top"] is not None else []
    named += [(f"facts.sites.per_site[{i}].site", p["site"]) for i, p in enumerate(sites["per_site"])]
    return [f"{where}: {shown_value(site)} is not a host name or corpus folder" for where, site in named if not valid_site(site)]


def _per_site_problems(data: Mapping[str, Any], version: int) -> list[str]:
    """Version 3: ``per_site`` kept counts add up to ``sources.kept`` unless ``truncated`` says the
    list was cut. (An earlier version's file that fails this loads with its per_site ignored.)"""
    facts = data.get("facts") or {}
    per_site = (facts.get("sites") or {}).get("per_site") or []
    if version < 3 or not per_site:
        return []
    total, kept = sum(int(p["kept"]) for p in per_site), int(facts["sources"]["kept"])
    if total == kept or (facts["sites"].get("truncated") and total <= kept):
        return []
    return [f"facts.sites.per_site: kept counts add up to {total}, not to sources.kept ({kept}), and truncated is not set"]


def _stage_problems(data: Mapping[str, Any]) -> list[str]:
    """Lessons recorded under a stage other than the one their kind of key is written for."""
    problems = []
    for i, lesson in enumerate(data["lessons_applied"]):
        if isinstance(lesson, str):  # version 1: text only
            continue
        expected = KIND_STAGES.get(key_kind(lesson["key"]) or "")
        if expected is not None and lesson["stage"] != expected:
            problems.append(
                f"lessons_applied[{i}].stage: {shown_value(lesson['stage'])} is the wrong stage for "
                f"{shown_value(lesson['key'])} (its lessons are for {expected})"
            )
    return problems


def _text_problems(data: Mapping[str, Any]) -> list[str]:
    """Free text that was never sanitized: control characters or instruction-like phrases."""
    problems = []
    for where, text in _texts(data):
        if _CONTROL.search(text):
            problems.append(f"{where}: contains control or invisible characters")
        if looks_like_injection(text):
            problems.append(f"{where}: contains instruction-like text")
    return problems


NOT_A_TIME = "is not an ISO 8601 time with a zone (e.g. 2026-11-22T09:58:36Z)"


def _has_non_finite(data: Any) -> bool:
    """Whether any number in ``data`` is a NaN or an infinity (one pass, no paths built)."""
    stack = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, float):
            if not math.isfinite(value):
                return True
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return False


def _non_finite(data: Any) -> list[str]:
    """``<path>: ... is not a finite number`` for every NaN or infinity (YAML's .nan, .inf)."""
    if not _has_non_finite(data):
        return []
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
    version = _version_of(data)
    if not _fast_check(version)(data):
        validator = _validator(version)
        errors = sorted(
            validator.iter_errors(data), key=lambda e: (list(map(str, e.absolute_path)), e.validator)
        )
        return [f"{_path(e)}: {_describe(e)}" for e in errors]
    problems += _text_problems(data)
    problems += _site_problems(data)
    problems += _per_site_problems(data, version)
    problems += _stage_problems(data)
    if parse_zoned_time(data["timestamp"]) is None:
        problems.append(f"timestamp: {shown_value(data['timestamp'])} {NOT_A_TIME}")
    return problems  # mean_score and overall_pass are recomputed when read, never checked (:mod:`.derived`)
