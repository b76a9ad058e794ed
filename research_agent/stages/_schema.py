"""Helpers for the strict JSON Schemas the stages ask for.

OpenAI's strict mode wants every property required and no additional properties;
local servers accept the same schemas, so one form serves every endpoint.

Bounds: ``maxLength``/``maxItems`` are the real limits, enforced after parsing by
cutting (:mod:`research_agent.llm.schema_bounds`); the copy sent to a server leaves out any
bound above 200, which grammar decoders cannot build. A small integer scale is an
:func:`scale` enum, because a grammar ignores ``minimum``/``maximum``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["obj", "string", "integer", "scale", "number", "array", "enum", "nullable"]


def obj(**props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


def string(max_length: int | None = None) -> dict[str, Any]:
    return {"type": "string"} if max_length is None else {"type": "string", "maxLength": max_length}


def integer(minimum: int | None = None, maximum: int | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "integer"}
    if minimum is not None:
        schema["minimum"] = minimum
    if maximum is not None:
        schema["maximum"] = maximum
    return schema


def scale(low: int, high: int) -> dict[str, Any]:
    """An integer from ``low`` to ``high`` as an enum, which a grammar keeps in range."""
    return {"type": "integer", "enum": list(range(low, high + 1))}


def number() -> dict[str, Any]:
    return {"type": "number"}


def array(items: dict[str, Any], *, max_items: int | None = None, min_items: int | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "array", "items": items}
    if max_items is not None:
        schema["maxItems"] = max_items
    if min_items is not None:
        schema["minItems"] = min_items
    return schema


def enum(*values: str) -> dict[str, Any]:
    return {"type": "string", "enum": list(values)}


def nullable(schema: dict[str, Any]) -> dict[str, Any]:
    kind = schema["type"]
    return {**schema, "type": [kind, "null"]}
