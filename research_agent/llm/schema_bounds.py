"""Length and item bounds: what a server is sent, and how the real ones are kept locally.

Grammar decoders (llama.cpp's server, Ollama) turn ``maxLength``/``maxItems`` into
repetition rules and crash past about 2,000 repetitions; strict structured output
(OpenAI, Azure) refuses string lengths. So a schema goes out in a *wire* form whose
bounds are all at most :data:`WIRE_BOUND_LIMIT` (strict: no string lengths at all),
the answer is validated against an *answer* form without upper bounds, and the real
upper bounds are then applied by :func:`clamp`, which cuts what is too long and says
what it cut. Lower bounds stay in the answer form: nothing can be cut to meet them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

__all__ = ["WIRE_BOUND_LIMIT", "BOUND_KEYWORDS", "wire_schema", "answer_schema", "clamp", "bounds_over"]

WIRE_BOUND_LIMIT = 200
BOUND_KEYWORDS = frozenset({"maxLength", "minLength", "maxItems", "minItems"})
_STRING_LENGTHS = frozenset({"maxLength", "minLength"})
_UPPER = frozenset({"maxLength", "maxItems"})
_MAX_NOTES = 20  # a runaway answer must not flood the run record


def _without(schema: Any, drop: Any) -> Any:
    """A copy of ``schema`` without the keywords for which ``drop(key, value)`` is true."""
    if isinstance(schema, dict):
        return {k: _without(v, drop) for k, v in schema.items() if not drop(k, v)}
    if isinstance(schema, list):
        return [_without(v, drop) for v in schema]
    return schema


def _too_big(key: str, value: Any) -> bool:
    return key in BOUND_KEYWORDS and isinstance(value, int) and value > WIRE_BOUND_LIMIT


def wire_schema(schema: Any, *, strict: bool = False) -> Any:
    """The schema as sent: no bound above :data:`WIRE_BOUND_LIMIT`; ``strict`` also drops
    string lengths, which strict decoding refuses."""
    if strict:
        return _without(schema, lambda k, v: (k in _STRING_LENGTHS and isinstance(v, int)) or _too_big(k, v))
    return _without(schema, _too_big)


def answer_schema(schema: Any) -> Any:
    """The schema an answer is validated against: no upper bounds (:func:`clamp` applies them)."""
    return _without(schema, lambda k, v: k in _UPPER and isinstance(v, int))


def clamp(data: Any, schema: Any) -> tuple[Any, tuple[str, ...]]:
    """``data`` cut to the ``maxLength``/``maxItems`` of ``schema``, and one note per cut."""
    notes: list[str] = []
    value = _clamp(data, schema, "", notes)
    if len(notes) > _MAX_NOTES:
        notes = [*notes[: _MAX_NOTES - 1], f"... and {len(notes) - _MAX_NOTES + 1} more cuts"]
    return value, tuple(notes)


def _clamp(data: Any, schema: Any, path: str, notes: list[str]) -> Any:
    if not isinstance(schema, dict):
        return data
    if isinstance(data, str):
        limit = schema.get("maxLength")
        if isinstance(limit, int) and len(data) > limit:
            notes.append(f"{path or '/'}: cut from {len(data)} to {limit} characters")
            return data[:limit]
        return data
    if isinstance(data, list):
        limit = schema.get("maxItems")
        if isinstance(limit, int) and len(data) > limit:
            notes.append(f"{path or '/'}: cut from {len(data)} to {limit} items")
            data = data[:limit]
        items = schema.get("items")
        return [_clamp(item, items, f"{path}/{i}", notes) for i, item in enumerate(data)]
    if isinstance(data, dict):
        props = schema.get("properties") or {}
        return {k: _clamp(v, props.get(k), f"{path}/{k}", notes) for k, v in data.items()}
    return data


def _bounds(schema: Any, path: str) -> Iterator[tuple[str, str, int]]:
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key in BOUND_KEYWORDS and isinstance(value, int):
                yield path or "/", key, value
            else:
                yield from _bounds(value, f"{path}/{key}")
    elif isinstance(schema, list):
        for i, value in enumerate(schema):
            yield from _bounds(value, f"{path}/{i}")


def bounds_over(schema: Any, limit: int = WIRE_BOUND_LIMIT) -> list[str]:
    """Every length or item bound in ``schema`` above ``limit``, as ``path: keyword=value``."""
    return [f"{where}: {key}={value}" for where, key, value in _bounds(schema, "") if value > limit]
