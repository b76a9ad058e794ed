"""A compiled fast path for the critique schema.

Selection parses up to 50 files per run; jsonschema's general machinery costs most of
that time. The schema uses a small keyword set, compiled here into plain checks that
only ever say "valid" or "not valid"; any "not valid" goes through jsonschema for the
precise messages, so jsonschema stays the judge of what is wrong.

A "valid" is final, so the checks must agree with jsonschema (draft 2020-12) on every document:
tests/test_fastschema.py compares the two on every schema the package has and on every one-step
change of real documents. A schema with a keyword not listed here is refused (ValueError), never
judged.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["Check", "compile_schema"]

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
        "minItems",
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
    """JSON equality as jsonschema sees it: booleans are not numbers, at any depth (``[True]`` is
    not ``[1]``), and an integer equals the same float (``1 == 1.0``)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if _is_number(a) and _is_number(b):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _every(checks: list[Check]) -> Check:
    """One check that passes when all of ``checks`` do (a loop: no generator per value)."""
    if len(checks) == 1:
        return checks[0]

    def check(x: Any) -> bool:
        for each in checks:  # noqa: SIM110 - all() would make a generator per value checked
            if not each(x):
                return False
        return True

    return check


def _items(item: Check) -> Check:
    def check(x: Any) -> bool:
        if isinstance(x, list):
            for value in x:
                if not item(value):
                    return False
        return True

    return check


def _properties(props: dict[str, Check], other: Check | None) -> Check:
    """Each named property checked by its own check, every other one by ``other`` (None: any value)."""

    def check(x: Any) -> bool:
        if isinstance(x, dict):
            for key, value in x.items():
                prop = props.get(key, other)
                if prop is not None and not prop(value):
                    return False
        return True

    return check


def _never(x: Any) -> bool:
    return False


def _always(x: Any) -> bool:
    return True


def _others(schema: Mapping[str, Any]) -> Check | None:
    """The check of the properties ``properties`` does not name: ``additionalProperties``'s."""
    extra = schema.get("additionalProperties", True)
    if extra is True:
        return None
    return _never if extra is False else compile_schema(extra)


def compile_schema(schema: Mapping[str, Any]) -> Check:
    """Plain checks for ``schema``; raise ValueError for a keyword the fast path does not know."""
    if isinstance(schema, bool):  # the schemas true (anything) and false (nothing)
        return _always if schema else _never
    if not isinstance(schema, Mapping):
        raise ValueError(f"the fast path does not know a schema that is a {type(schema).__name__}")
    unknown = set(schema) - _FAST_KEYWORDS
    if unknown:
        raise ValueError(f"critique schema uses keywords the fast path does not know: {sorted(unknown)}")
    checks: list[Check] = []
    if "type" in schema:
        kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        tests = [_TYPES[kind] for kind in kinds]
        checks.append(tests[0] if len(tests) == 1 else lambda x: any(test(x) for test in tests))
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
    if "minItems" in schema:
        least = schema["minItems"]
        checks.append(lambda x: not isinstance(x, list) or len(x) >= least)
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
        checks.append(_items(compile_schema(schema["items"])))
    if "required" in schema:
        required = tuple(schema["required"])
        checks.append(lambda x: not isinstance(x, dict) or all(k in x for k in required))
    if "properties" in schema or "additionalProperties" in schema:
        props = {k: compile_schema(v) for k, v in schema.get("properties", {}).items()}
        checks.append(_properties(props, _others(schema)))
    return _every(checks) if checks else _always
