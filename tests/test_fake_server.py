"""OpenAIChatModel against the real fault-injecting server on 127.0.0.1, and the server itself."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import jsonschema
import openai
import pytest

from research_agent.errors import InvalidModelOutput, LLMTimeout, LLMUnavailable, ModelNotFound
from research_agent.llm import ChatRequest, OpenAIChatModel, UsageRecorder
from tests.support.fake_openai_server import (
    FakeOpenAIServer,
    Faults,
    RequestRecord,
    default_responder,
    minimal_instance,
    sequential_rounds,
)

REPO = Path(__file__).resolve().parents[1]

SCHEMA = {
    "type": "object",
    "properties": {
        "sub_queries": {"type": "array", "items": {"type": "string", "minLength": 3}, "minItems": 2},
        "score": {"type": "integer", "minimum": 1, "maximum": 5},
        "severity": {"type": "string", "enum": ["observation", "concern", "critical"]},
        "note": {"type": ["string", "null"]},
    },
    "required": ["sub_queries", "score", "severity", "note"],
    "additionalProperties": False,
}


async def no_sleep(seconds: float) -> None:
    await asyncio.sleep(0)


def model_for(server: FakeOpenAIServer, **kwargs: Any) -> OpenAIChatModel:
    options: dict[str, Any] = {
        "model": "fake-model",
        "base_url": server.base_url,
        "timeout": 10.0,
        "max_retries": 3,
        "concurrency": 8,
        "sleep": no_sleep,
        "form_cache": {},
    }
    options.update(kwargs)
    return OpenAIChatModel(**options)


def ask(stage: str = "decompose", schema: Any = SCHEMA) -> ChatRequest:
    return ChatRequest(stage=stage, system="You plan research.", user="Plan it.", schema=schema)


def test_minimal_instance_satisfies_the_schema() -> None:
    value = minimal_instance(SCHEMA)
    jsonschema.validate(value, SCHEMA)
    body = {"response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": SCHEMA}}}
    jsonschema.validate(json.loads(default_responder(body, "decompose")), SCHEMA)
    assert "fake" in default_responder({"messages": []}, "synthesize")


def test_sequential_rounds_groups_overlapping_calls() -> None:
    def rec(start: float, end: float) -> RequestRecord:
        return RequestRecord(0, "s", "m", None, False, None, 200, start, end, 0, 0)

    calls = [rec(0.0, 1.0), rec(0.1, 1.2), rec(1.1, 2.0), rec(2.0, 3.0), rec(3.5, 4.0), rec(3.6, 3.7)]
    assert sequential_rounds(calls) == 3
    assert sequential_rounds(list(reversed(calls))) == 3
    assert sequential_rounds([]) == 0


async def test_answers_records_stage_format_and_usage() -> None:
    with FakeOpenAIServer() as server:
        model = model_for(server)
        recorder = UsageRecorder(model)
        response = await recorder.complete(ask())
        text = await recorder.complete(ask("synthesize", schema=None))
        await model.aclose()
        records = server.requests
    jsonschema.validate(response.data, SCHEMA)
    assert "synthesize" in text.text
    assert [(r.stage, r.model, r.response_format, r.status) for r in records] == [
        ("decompose", "fake-model", "json_schema", 200),
        ("synthesize", "fake-model", None, 200),
    ]
    assert records[0].prompt_tokens > 0 and records[0].end >= records[0].start
    assert recorder.by_stage["decompose"].prompt_tokens == records[0].prompt_tokens


async def test_transient_fault_mix_still_answers_every_call() -> None:
    faults = Faults(rate=0.3, mix=("500", "502", "503", "504", "429"), seed=11, retry_after="1")
    with FakeOpenAIServer(faults=faults) as server:
        model = model_for(server, max_retries=10)
        recorder = UsageRecorder(model)
        results = await asyncio.gather(*(recorder.complete(ask()) for _ in range(40)))
        await model.aclose()
        records = server.requests
    assert len(results) == 40
    for result in results:
        jsonschema.validate(result.data, SCHEMA)
    failed = [r for r in records if r.status != 200]
    assert failed, "the seeded plan should have injected faults"
    assert {r.status for r in failed} <= {500, 502, 503, 504, 429}
    assert recorder.total.retries == len(failed)
    assert recorder.total.calls == 40


async def test_llama_cpp_rejection_through_the_server() -> None:
    with FakeOpenAIServer(faults=Faults(reject_json_schema=True)) as server:
        model = model_for(server)
        first = await model.complete(ask())
        second = await model.complete(ask("relevance"))
        await model.aclose()
        records = server.requests
    jsonschema.validate(first.data, SCHEMA)
    jsonschema.validate(second.data, SCHEMA)
    assert [(r.response_format, r.status) for r in records] == [
        ("json_schema", 500),
        ("json_object", 200),
        ("json_object", 200),
    ]


async def test_stalled_response_ends_in_timeout() -> None:
    with FakeOpenAIServer(faults=Faults(always={"decompose": "stall"})) as server:
        model = model_for(server, timeout=0.5, max_retries=1)
        with pytest.raises(LLMTimeout, match=r"stage decompose timed out after 0.5s \(2 attempts\)"):
            await model.complete(ask())
        await model.aclose()
    # leaving the block shut the server down although two handlers were still stalled


async def test_connection_closed_mid_response_is_retried() -> None:
    with FakeOpenAIServer(faults=Faults(first=("close", "close"))) as server:
        model = model_for(server)
        response = await model.complete(ask())
        await model.aclose()
        faults = [r.fault for r in server.requests]
    jsonschema.validate(response.data, SCHEMA)
    assert response.usage.retries == 2
    assert faults == ["close", "close", None]


async def test_429_retry_after_from_the_server_reaches_sleep() -> None:
    sleeps: list[float] = []

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)

    with FakeOpenAIServer(faults=Faults(first=("429", "503"), retry_after="2")) as server:
        model = model_for(server, sleep=sleep)
        await model.complete(ask())
        await model.aclose()
    assert sleeps == [2.0, 2.0]


@pytest.mark.parametrize("kind", ["think", "truncate", "length", "badschema"])
async def test_content_faults_are_survived_or_repaired(kind: str) -> None:
    with FakeOpenAIServer(faults=Faults(first=(kind,))) as server:
        model = model_for(server)
        response = await model.complete(ask())
        await model.aclose()
        records = server.requests
    jsonschema.validate(response.data, SCHEMA)
    assert len(records) == (1 if kind == "think" else 2)
    assert response.usage.retries == len(records) - 1


async def test_persistent_bad_schema_fails_naming_the_stage_and_model_and_counts_every_answer() -> None:
    with FakeOpenAIServer(faults=Faults(always={"relevance": "badschema"})) as server:
        model = model_for(server)
        ok = await model.complete(ask("decompose"))
        with pytest.raises(
            InvalidModelOutput, match="the relevance stage got invalid output from model fake-model after 3 attempts"
        ) as caught:
            await model.complete(ask("relevance"))
        await model.aclose()
        relevance = [r for r in server.requests if r.stage == "relevance"]
    jsonschema.validate(ok.data, SCHEMA)
    assert len(relevance) == 3
    spent = caught.value.usage  # the three unusable answers were paid for, and say so
    assert spent.calls == 3 and spent.retries == 2
    assert spent.prompt_tokens == sum(r.prompt_tokens for r in relevance)
    assert spent.completion_tokens == sum(r.completion_tokens for r in relevance)


async def test_unknown_model_is_404() -> None:
    with FakeOpenAIServer(models=["known-model"]) as server:
        model = model_for(server, model="missing-model")
        with pytest.raises(ModelNotFound, match="model 'missing-model' not found"):
            await model.complete(ask())
        await model.aclose()


async def test_streamed_answers() -> None:
    with FakeOpenAIServer(lambda body, stage: f"streamed answer for {stage}, " * 5) as server:
        client = openai.AsyncOpenAI(api_key="x", base_url=server.base_url, max_retries=0)
        stream = await client.chat.completions.create(
            model="fake-model",
            messages=[{"role": "user", "content": "hello there"}],
            stream=True,
            stream_options={"include_usage": True},
            extra_headers={"X-Research-Agent-Stage": "synthesize"},
        )
        parts, finish, usage = [], None, None
        async for chunk in stream:
            if chunk.choices:
                parts.append(chunk.choices[0].delta.content or "")
                finish = chunk.choices[0].finish_reason or finish
            if chunk.usage is not None:
                usage = chunk.usage
        server.set_faults(first=("close",))
        with pytest.raises(openai.APIError):
            broken = await client.chat.completions.create(
                model="fake-model", messages=[{"role": "user", "content": "again"}], stream=True
            )
            async for _ in broken:
                pass
        await client.close()
        records = server.requests
    assert "".join(parts) == "streamed answer for synthesize, " * 5
    assert finish == "stop"
    assert usage is not None and usage.completion_tokens == len("".join(parts)) // 4
    assert [(r.stage, r.stream, r.fault) for r in records] == [
        ("synthesize", True, None),
        ("", True, "close"),
    ]


def test_models_endpoint_and_standalone_module() -> None:
    command = [sys.executable, "-m", "tests.support.fake_openai_server", "--port", "0", "--delay", "0"]
    with subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, text=True) as proc:
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            assert line.startswith("fake OpenAI-compatible server at http://127.0.0.1:")
            base_url = line.rsplit(" ", 1)[1].strip()
            with urllib.request.urlopen(f"{base_url}/models", timeout=30) as reply:
                listing = json.load(reply)
            assert listing["object"] == "list" and listing["data"][0]["id"] == "fake-model"
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def test_unknown_fault_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown fault kind"):
        Faults(first=("explode",))


async def test_connection_refused_on_a_real_socket_is_unavailable() -> None:
    with FakeOpenAIServer() as server:
        base_url = server.base_url  # the port is free again once the server stopped
    model = OpenAIChatModel("fake-model", base_url=base_url, max_retries=1, sleep=no_sleep, form_cache={})
    with pytest.raises(LLMUnavailable, match=f"cannot reach the model endpoint at {base_url}"):
        await model.complete(ask())
    await model.aclose()
