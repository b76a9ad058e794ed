"""Schemas that llama.cpp's server survives (issue 9, part 3).

No schema sent carries a length or item bound above 200, whatever the form; the real
bounds are kept locally by cutting (and saying so); small integer scales are enums. The
fake server, like llama.cpp's, dies on a schema whose bounds pass 2000 repetitions.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
from typing import Any

import httpx
import pytest
import yaml

import research_agent.stages as stages_package
from research_agent.config import MODES
from research_agent.llm import ChatRequest, OpenAIChatModel, extract_json
from research_agent.llm.schema_bounds import WIRE_BOUND_LIMIT, answer_schema, bounds_over, clamp, wire_schema
from research_agent.memory.critique.judgement import ANSWER_SCHEMA as CRITIQUE_SCHEMA
from research_agent.memory.lessons.select import LessonSelection
from research_agent.pipeline import research
from research_agent.stages._schema import array, obj, string
from tests.support.fake_openai_server import FakeOpenAIServer, Faults, minimal_instance
from tests.support.llm import Endpoint, completion, make_model
from tests.support.pipeline import QUERY, DocsProvider, settings_for
from tests.support.research_responder import ResearchResponder

FORMS = ("json_schema", "json_object", "instructions")
# The JSON draft of research-agent 0.2 (the writer answers in markdown now): big bounds to cut to.
DRAFT_SCHEMA = obj(
    title=string(200),
    executive_summary=string(3000),
    key_findings=array(string(1000), min_items=1, max_items=10),
    sections=array(obj(heading=string(150), body=string(12000)), min_items=1, max_items=12),
    limitations=array(string(1000), max_items=10),
)
# Stage modules that ask for no JSON: the writer answers in markdown; the gate decides locally.
PLAIN_TEXT = {"writing", "gate"}  # writing: the writer answers in markdown (draft, revise)


def shipped_schemas() -> dict[str, dict[str, Any]]:
    """Every schema the package sends: each stage module's SCHEMA or schema_for(count), and the critique's."""
    found: dict[str, dict[str, Any]] = {"critique": CRITIQUE_SCHEMA}
    for info in pkgutil.iter_modules(stages_package.__path__):
        if info.name.startswith("_") or info.name in PLAIN_TEXT:
            continue
        module = importlib.import_module(f"research_agent.stages.{info.name}")
        if hasattr(module, "schema_for"):
            for mode in MODES.values():
                found[f"{info.name}({mode.sub_queries})"] = module.schema_for(mode.sub_queries)
                found[f"{info.name}({mode.sub_queries}, domain)"] = module.schema_for(mode.sub_queries, pick_domain=True)
        else:  # a stage without a schema would escape this walk: every stage must ship one
            found[info.name] = module.SCHEMA
    assert {"classify", "relevance", "skeptic", "critique"} <= set(found)
    return found


SCHEMAS = shipped_schemas()


def sent_schemas(body: dict[str, Any]) -> list[Any]:
    """The schemas in one request body: in response_format and in the system message."""
    found = []
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        found.append(fmt["json_schema"]["schema"])
    elif fmt.get("type") == "json_object":
        found.append(fmt["schema"])
    system = body["messages"][0]["content"]
    if "JSON Schema" in system:
        found.append(extract_json(system[system.index("JSON Schema") :]))
    return found


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("name", sorted(SCHEMAS))
async def test_no_schema_sent_has_a_bound_above_200_in_any_form(name: str, form: str) -> None:
    schema = SCHEMAS[name]
    endpoint = Endpoint(completion(json.dumps(minimal_instance(schema))))
    model, _ = make_model(endpoint, form_cache={("http://llm.test/v1", "main-model"): form})
    response = await model.complete(ChatRequest(stage="x", system="s", user="u", schema=schema))
    await model.aclose()
    assert response.data is not None
    (body,) = endpoint.bodies
    sent = sent_schemas(body)
    assert sent, f"{name}: no schema was sent in the {form} form"
    for one in sent:
        assert bounds_over(one, WIRE_BOUND_LIMIT) == [], f"{name} ({form})"
        assert one["properties"].keys() == schema["properties"].keys()


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_small_integer_scales_are_enums(name: str) -> None:
    """A grammar ignores minimum/maximum; only an enum keeps a 1-5 score in range."""

    def ranges(node: Any, path: str = "") -> list[str]:
        if isinstance(node, list):
            return [r for i, v in enumerate(node) for r in ranges(v, f"{path}/{i}")]
        if not isinstance(node, dict):
            return []
        kinds = node.get("type") if isinstance(node.get("type"), list) else [node.get("type")]
        bad = []
        if "integer" in kinds and "enum" not in node and ("minimum" in node or "maximum" in node):
            bad.append(path)
        return bad + [r for k, v in node.items() for r in ranges(v, f"{path}/{k}")]

    assert ranges(SCHEMAS[name]) == []


def test_relevance_scores_are_the_enum_one_to_five() -> None:
    entry = SCHEMAS["relevance"]["properties"]["scores"]["items"]
    assert entry["properties"]["score"] == {"type": "integer", "enum": [1, 2, 3, 4, 5]}


def test_wire_forms_drop_big_bounds_and_strict_drops_string_lengths() -> None:
    assert bounds_over(DRAFT_SCHEMA) == [
        "/properties/executive_summary: maxLength=3000",
        "/properties/key_findings/items: maxLength=1000",
        "/properties/sections/items/properties/body: maxLength=12000",
        "/properties/limitations/items: maxLength=1000",
    ]
    loose = wire_schema(DRAFT_SCHEMA)
    assert loose["properties"]["title"] == {"type": "string", "maxLength": 200}  # small bounds guide a grammar
    assert loose["properties"]["sections"]["items"]["properties"]["body"] == {"type": "string"}
    assert loose["properties"]["sections"]["maxItems"] == 12
    strict = wire_schema(DRAFT_SCHEMA, strict=True)
    assert "maxLength" not in json.dumps(strict) and strict["properties"]["key_findings"]["minItems"] == 1
    checked = answer_schema(DRAFT_SCHEMA)
    assert "maxLength" not in json.dumps(checked) and "maxItems" not in json.dumps(checked)
    assert checked["properties"]["sections"]["minItems"] == 1  # lower bounds cannot be cut to: still checked


def test_clamp_cuts_to_the_real_bounds_and_says_where() -> None:
    answer = {
        "title": "t" * 250,
        "executive_summary": "short",
        "key_findings": ["k" * 1001, "fine"],
        "sections": [{"heading": "h", "body": "b" * 12_345}] * 13,
        "limitations": ["l" * 1200] * 11,
    }
    data, notes = clamp(answer, DRAFT_SCHEMA)
    assert len(data["title"]) == 200 and len(data["key_findings"][0]) == 1000 and data["key_findings"][1] == "fine"
    assert len(data["sections"]) == 12 and all(len(s["body"]) == 12_000 for s in data["sections"])
    assert notes[:3] == (
        "/title: cut from 250 to 200 characters",
        "/key_findings/0: cut from 1001 to 1000 characters",
        "/sections: cut from 13 to 12 items",
    )
    assert notes[3] == "/sections/0/body: cut from 12345 to 12000 characters"
    assert len(data["limitations"]) == 10 and all(len(x) == 1000 for x in data["limitations"])
    assert notes[-1] == "... and 7 more cuts" and len(notes) == 20  # 26 cuts: a flood is summarised
    assert answer["title"] == "t" * 250  # the input is not changed
    assert clamp({"a": "x"}, {"type": "object"}) == ({"a": "x"}, ())


def test_the_fake_server_dies_like_llama_cpp_on_a_bound_past_2000() -> None:
    unsafe = {"type": "object", "properties": {"body": {"type": "string", "maxLength": 12000}}}
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    with FakeOpenAIServer(faults=Faults(grammar_limit=2000)) as server, httpx.Client(timeout=30) as client:
        url = f"{server.base_url}/chat/completions"
        safe = client.post(url, json={**body, "response_format": {"type": "json_object", "schema": wire_schema(unsafe)}})
        assert safe.status_code == 200 and not server.crashed
        with pytest.raises(httpx.HTTPError):
            client.post(url, json={**body, "response_format": {"type": "json_object", "schema": unsafe}})
        assert server.crashed
        with pytest.raises(httpx.HTTPError):  # dead: even a plain request goes unanswered
            client.post(url, json=body)


class Capture:
    """A responder that keeps every request body it answers."""

    def __init__(self) -> None:
        self.inner = ResearchResponder()
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, body: dict, stage: str) -> str:
        self.bodies.append(body)
        return self.inner(body, stage)


async def test_a_whole_run_against_a_llama_cpp_like_server_writes_its_report(tmp_path) -> None:
    capture = Capture()
    faults = Faults(reject_json_schema=True, grammar_limit=2000)
    with FakeOpenAIServer(capture, faults=faults) as server:
        model = OpenAIChatModel(model="local-gguf", base_url=server.base_url, timeout=30, max_retries=1,
                                form_cache={})
        try:
            result = await research(
                QUERY,
                settings=settings_for(tmp_path),
                model=model,
                providers=[DocsProvider(tmp_path)],
                lessons=lambda domain: LessonSelection.none(domain),
            )
        finally:
            await model.aclose()
        assert not server.crashed
    assert result.report_path.is_file() and result.final_decision == "proceed"
    structured = [b for b in capture.bodies if not b.get("stream")]
    assert {b["response_format"]["type"] for b in structured} == {"json_object"}
    (draft,) = [b for b in capture.bodies if b.get("stream")]  # the writer streams markdown: no schema at all
    assert "response_format" not in draft and draft["stream_options"] == {"include_usage": True}
    assert all(bounds_over(s, 2000) == [] for b in capture.bodies for s in sent_schemas(b))
    assert result.record["cost_usd"] is None  # a local model's price is unknown, never $0


async def test_a_field_cut_to_its_bound_is_a_warning_in_the_run_record(tmp_path, scripted_model) -> None:
    from tests.support.pipeline import queue, record_of, run

    responder = ResearchResponder()

    def long_reason(request: ChatRequest) -> dict:
        answer = responder.answer(request.stage, request.system, request.user)
        answer["scores"][0]["reason"] = "R" * 350
        return answer

    queue(scripted_model, responder, relevance=[long_reason])  # every source in one batched call
    result = await run(tmp_path, scripted_model)
    assert "R" * 300 + "R" not in yaml.safe_dump(record_of(result))
    assert record_of(result)["warnings"] == ["relevance answer /scores/0/reason: cut from 350 to 300 characters"]


async def test_every_structured_call_bounds_its_answer_length(tmp_path, scripted_model) -> None:
    """A grammar-constrained server can generate whitespace until its context is full (seen with
    llama-cpp-python and SmolLM2: a relevance call ran for minutes); every call says how long
    its answer may be."""
    from tests.support.pipeline import script

    script(scripted_model, ResearchResponder())
    await research(QUERY, settings=settings_for(tmp_path), model=scripted_model,
                   providers=[DocsProvider(tmp_path)], lessons=LessonSelection.none)
    stages = {r.stage for r in scripted_model.requests}
    assert {"decompose", "relevance", "draft", "skeptic"} <= stages
    assert all(r.max_tokens is not None and r.max_tokens <= 8000 for r in scripted_model.requests)
