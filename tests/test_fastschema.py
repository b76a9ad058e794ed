"""Issue 47.5: the compiled fast path (research_agent/memory/store/fastschema.py) says what
jsonschema says, on every schema the package has and on a corpus of valid and invalid documents:
real documents, every one-step mutation of them (each value replaced by one of every JSON type and
size, each key dropped, a key added, a list emptied, doubled or grown), and documents written for
the keywords the package's schemas do not combine yet. A schema the fast path does not know is
refused, never judged."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import research_agent
from research_agent.eval.world.load import world_schema
from research_agent.llm.schema_bounds import answer_schema
from research_agent.memory.critique.judgement import ANSWER_SCHEMA
from research_agent.memory.store.critique_types import Critique, LessonUse
from research_agent.memory.store.fastschema import compile_schema
from research_agent.memory.store.schema import TAGS, critique_schema
from research_agent.record.io import run_record_schema
from research_agent.stages import claim_check, classify, decompose, relevance, skeptic
from tests.support.memory import make_critique

# One value of every JSON type, at the edges the schemas' bounds and types care about.
VALUES: tuple[Any, ...] = (
    None, True, False, 0, 1, -1, 1.0, 1.5, 2**40, "", "x", "1", "x" * 300, "technology", [], [None], [1, 1],
    {}, {"k": 1},
)  # fmt: skip
EXTRA = "zz_extra"


def _judge(schema: dict[str, Any]) -> jsonschema.protocols.Validator:
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def _critiques() -> list[tuple[int, dict[str, Any]]]:
    """A critique file of each schema version, as the program writes (or wrote) it."""
    three = make_critique(1, adaptive=True, tags=TAGS[:2]).as_dict()
    two = Critique(**{**make_critique(2, applied=("coverage:low_score",)).__dict__, "schema_version": 2}).as_dict()
    one = make_critique(3, adaptive=True).as_dict()
    del one["facts"]
    one.update(schema_version=1, lessons_applied=[LessonUse("A lesson from before lessons had keys.").text])
    return [(3, three), (2, two), (1, one)]


def _answers() -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(name, schema, a valid answer) for every schema a model's answer is checked against."""
    scores = {"source_diversity": 4, "claim_support": 3, "coverage": 4, "geographic_balance": None, "actionability": 2}
    finding = {"lens": "evidence", "severity": "concern", "claim": "a claim", "reason": "why", "fix": "how",
               "confidence": 0.5}  # fmt: skip
    plan = decompose.schema_for(2, pick_domain=True)
    sub = plan["properties"]["sub_queries"]["items"]
    query = {key: _example(value) for key, value in sub.get("properties", {}).items()} if "properties" in sub else "q"
    return [
        ("classify", classify.SCHEMA, {"domain": "technology"}),
        ("relevance", relevance.SCHEMA, {"scores": [{"id": 1, "score": 4, "reason": "on the question"}]}),
        ("skeptic", skeptic.SCHEMA, {"findings": [finding], "viability": 3}),
        ("claim_check", claim_check.SCHEMA, {"claims": []}),
        ("decompose", plan, {**{k: _example(v) for k, v in plan["properties"].items()}, "sub_queries": [query, query]}),
        ("critique answer", ANSWER_SCHEMA, {"scores": scores, "weaknesses": ["w"], "suggestions": [], "tags": []}),
    ]


def _example(schema: dict[str, Any]) -> Any:
    """A plain value of ``schema``'s first type (enough for a seed's leaves; jsonschema has the last word)."""
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type", "string")
    kind = kind[0] if isinstance(kind, list) else kind
    if kind == "object":
        return {key: _example(value) for key, value in schema.get("properties", {}).items()}
    if kind == "array":
        return [_example(schema.get("items", {}))] * schema.get("minItems", 0)
    low = schema.get("minimum", 1)
    return {"integer": int(low), "number": float(low), "boolean": True, "null": None}.get(kind, "text")


def _places(doc: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(doc, dict):
        for key, value in doc.items():
            yield from _places(value, (*path, key))
    elif isinstance(doc, list):
        for index, value in enumerate(doc):
            yield from _places(value, (*path, index))


def _at(doc: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        doc = doc[step]
    return doc


def _compared(schema: dict[str, Any], docs: list[Any]) -> tuple[list[str], int]:
    """Where the fast path and jsonschema disagree on ``docs``, and how many jsonschema finds valid."""
    fast, judge = compile_schema(schema), _judge(schema)
    found, valid = [], 0
    for doc in docs:
        said, truth = fast(doc), judge.is_valid(doc)
        valid += truth
        if said != truth:
            found.append(f"fast says {'valid' if said else 'invalid'}, jsonschema {'valid' if truth else 'invalid'}: "
                         f"{json.dumps(doc)[:300]}")  # fmt: skip
    return found, valid


def _corpus(seed: Any) -> list[Any]:
    docs = [seed]
    for path in _places(seed):
        docs.extend(_mutated_at(seed, path))
    return docs


def _mutated_at(seed: Any, path: tuple[Any, ...]) -> list[Any]:
    out = []
    here = _at(seed, path)
    replacements: list[Any] = list(VALUES)
    if isinstance(here, list) and here:
        replacements += [[], [*here, here[0]], here * 60]
    for value in replacements:
        out.append(_replaced(seed, path, value))
    if isinstance(here, dict):
        for name in here:
            out.append(_replaced(seed, path, {k: v for k, v in here.items() if k != name}))
        for value in (1, "x", None, [], {}):
            out.append(_replaced(seed, path, {**here, EXTRA: value}))
    return out


def _replaced(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return copy.deepcopy(value)
    out = copy.deepcopy(doc)
    _at(out, path[:-1])[path[-1]] = copy.deepcopy(value)
    return out


@pytest.mark.parametrize("version", [1, 2, 3])
def test_each_critique_schema_agrees_with_jsonschema_on_every_mutation_of_a_real_critique(version: int) -> None:
    schema = critique_schema(version)
    seed = dict(_critiques())[version]
    assert _judge(schema).is_valid(seed), "the seed is a valid critique"
    docs = _corpus(seed)
    disagreements, valid = _compared(schema, docs)
    assert disagreements == []
    assert len(docs) > 600 and valid > 50 and len(docs) - valid > 400  # both sides, many of each


@pytest.mark.parametrize("name", [name for name, _, _ in _answers()])
def test_each_answer_schema_agrees_with_jsonschema_as_sent_and_as_answers_are_read(name: str) -> None:
    schema, seed = next((schema, seed) for each, schema, seed in _answers() if each == name)
    for form in (schema, answer_schema(schema)):  # answers are read against the schema without its upper bounds
        assert _judge(form).is_valid(seed), "the seed is a valid answer"
        assert _compared(form, _corpus(seed))[0] == []


def test_a_schema_the_fast_path_does_not_know_is_refused_not_judged() -> None:
    for schema in (run_record_schema(), world_schema(), {"$ref": "#/$defs/x"}, {"if": {}, "then": {}},
                   {"type": "array", "contains": {"type": "integer"}}, {"items": [{"type": "integer"}]}):  # fmt: skip
        with pytest.raises(ValueError, match="does not know"):
            compile_schema(schema)


# Keywords in combinations the package's schemas do not have yet, each with documents on both sides.
WRITTEN: list[tuple[dict[str, Any], list[Any]]] = [
    ({"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": {"type": "integer"}},
     [{"a": 1, "b": 2}, {"a": 1, "b": "x"}, {"b": 2.0}, {"b": True}, {"a": "x"}, {}]),
    ({"type": "object", "additionalProperties": {"type": "string", "maxLength": 2}},
     [{}, {"a": "xy"}, {"a": "xyz"}, {"a": 1}, []]),
    ({"type": "object", "properties": {"a": {}}, "additionalProperties": True}, [{"a": 1, "b": None}, {"b": {}}, []]),
    ({"type": "object", "properties": {"a": {}}, "additionalProperties": False}, [{"a": 1}, {"a": 1, "b": None}]),
    ({"enum": [[1], {"a": 1}, 0]}, [[1], [True], [1.0], {"a": 1}, {"a": True}, {"a": 1.0}, 0, False, 0.0]),
    ({"const": {"a": [1, {"b": False}]}}, [{"a": [1, {"b": False}]}, {"a": [True, {"b": False}]},
                                           {"a": [1, {"b": 0}]}, {"a": [1.0, {"b": False}]}]),
    ({"type": "array", "uniqueItems": True}, [[1, True], [1, 1.0], [[1], [True]], [{"a": 1}, {"a": 1.0}],
                                              [0, False], [[0], [False]], ["a", "a"], []]),
    ({"type": "integer"}, [1, 1.0, 1.5, True, "1", None, 2**70, 1e300]),
    ({"type": ["integer", "null"], "enum": [1, 2, None]}, [1, 2, None, 3, True, 1.0, "1"]),
    ({"type": "string", "minLength": 2, "maxLength": 3, "pattern": "^a"}, ["ab", "a", "abcd", "ba", "a😀", 1]),
    ({"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "string"}}, [[], ["a"], ["a", "b", "c"], [1]]),
    ({"type": "number", "minimum": 0, "maximum": 1}, [0, 1, 0.5, -0.1, 1.1, True, None, "0"]),
    ({"required": ["a"], "properties": {"a": {"type": "string"}}}, [{"a": "x"}, {}, {"a": 1}, [], "a", None]),
]


@pytest.mark.parametrize("case", range(len(WRITTEN)))
def test_written_schemas_agree_with_jsonschema(case: int) -> None:
    schema, docs = WRITTEN[case]
    disagreements, valid = _compared(schema, docs)
    assert disagreements == [] and 0 < valid < len(docs)


def test_the_schemas_compared_are_every_schema_file_the_package_ships() -> None:
    shipped = {path.name for path in Path(research_agent.__file__).parent.rglob("*.schema.json")}
    assert shipped == {"critique.schema.json", "critique-1.schema.json", "critique-2.schema.json",
                       "record.schema.json", "world.schema.json"}  # fmt: skip
