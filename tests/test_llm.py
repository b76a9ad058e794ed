"""Wire tests for OpenAIChatModel: a real openai client over httpx.MockTransport."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from research_agent.config import Settings
from research_agent.errors import (
    ConfigError,
    InvalidModelOutput,
    LLMError,
    LLMTimeout,
    LLMUnavailable,
    ModelNotFound,
)
from research_agent.llm import (
    NO_ENDPOINT_MESSAGE,
    ChatRequest,
    OpenAIChatModel,
    Price,
    PriceTable,
    UsageRecorder,
    extract_json,
    parse_retry_after,
    strip_think,
)
from research_agent.llm.client.openai_compat import PLACEHOLDER_API_KEY
from tests.support.llm import Endpoint, completion, make_model

SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string"}, "score": {"type": "integer", "minimum": 1, "maximum": 5}},
    "required": ["answer", "score"],
    "additionalProperties": False,
}
GOOD = {"answer": "yes", "score": 4}
LLAMA_ERROR = 'response_format type must be one of "text" or "json_object", but got: json_schema'


def error(status: int, message: str, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.Response(
        status, json={"error": {"message": message, "type": "error", "code": status}}, headers=headers
    )


def ask(stage: str = "relevance", *, schema: Any = SCHEMA, **kwargs: Any) -> ChatRequest:
    return ChatRequest(stage=stage, system="You score sources.", user="Score this.", schema=schema, **kwargs)


# --- structured output cascade -------------------------------------------------------------------


async def test_json_schema_sent_strict_with_stage_header_and_temperature() -> None:
    endpoint = Endpoint(completion(json.dumps(GOOD)))
    model, _ = make_model(endpoint)
    response = await model.complete(ask(temperature=0.0))
    await model.aclose()
    assert response.data == GOOD
    body = endpoint.bodies[0]
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "relevance", "schema": SCHEMA, "strict": True},
    }
    assert body["temperature"] == 0.0
    assert body["model"] == "main-model"
    assert endpoint.requests[0].headers["X-Research-Agent-Stage"] == "relevance"
    assert endpoint.requests[0].headers["Authorization"] == "Bearer sk-test"


async def test_llama_cpp_rejection_falls_back_to_json_object_and_is_remembered() -> None:
    def llama(request: httpx.Request, body: dict[str, Any]) -> httpx.Response:
        if body["response_format"]["type"] == "json_schema":
            return error(500, LLAMA_ERROR)
        return completion(json.dumps(GOOD))

    endpoint = Endpoint(llama)
    cache: dict[Any, Any] = {}
    model, sleeps = make_model(endpoint, form_cache=cache)
    first = await model.complete(ask())
    assert endpoint.formats() == ["json_schema", "json_object"]
    fallback = endpoint.bodies[1]
    assert fallback["response_format"] == {"type": "json_object", "schema": SCHEMA}
    assert '"additionalProperties":false' in fallback["messages"][0]["content"]  # schema in system too
    assert first.data == GOOD and first.usage.retries == 0 and sleeps.calls == []

    second = await model.complete(ask("decompose"))
    await model.aclose()
    assert endpoint.formats() == ["json_schema", "json_object", "json_object"]
    assert second.data == GOOD
    assert cache == {("http://llm.test/v1", "main-model"): "json_object"}

    # a new instance sharing the cache goes straight to the remembered form
    again = Endpoint(llama)
    other, _ = make_model(again, form_cache=cache)
    await other.complete(ask())
    await other.aclose()
    assert again.formats() == ["json_object"]


async def test_400_response_format_unsupported_cascades_to_instructions() -> None:
    def picky(request: httpx.Request, body: dict[str, Any]) -> httpx.Response:
        fmt = body.get("response_format")
        if fmt is not None:
            return error(400, f"response_format of type {fmt['type']} is not supported by this model")
        return completion("Sure! Here it is:\n" + json.dumps(GOOD) + "\nHope that helps.")

    endpoint = Endpoint(picky)
    model, _ = make_model(endpoint)
    response = await model.complete(ask())
    await model.aclose()
    assert endpoint.formats() == ["json_schema", "json_object", None]
    assert "JSON Schema" in endpoint.bodies[2]["messages"][0]["content"]
    assert response.data == GOOD
    assert model.form_for("main-model") == "instructions"


async def test_plain_500_is_retried_not_treated_as_a_rejection() -> None:
    endpoint = Endpoint(error(500, "internal error"), completion(json.dumps(GOOD)))
    model, sleeps = make_model(endpoint)
    response = await model.complete(ask())
    await model.aclose()
    assert endpoint.formats() == ["json_schema", "json_schema"]
    assert response.usage.retries == 1 and len(sleeps.calls) == 1
    assert model.form_for("main-model") == "json_schema"


# --- parsing and repair ------------------------------------------------------------------------------


async def test_think_blocks_and_fences_are_stripped() -> None:
    content = "<think>I should answer {carefully}.</think>\n```json\n" + json.dumps(GOOD) + "\n```"
    model, _ = make_model(Endpoint(completion(content)))
    response = await model.complete(ask())
    await model.aclose()
    assert response.data == GOOD
    assert "<think>" not in response.text


async def test_plain_text_request_returns_text_without_reasoning() -> None:
    endpoint = Endpoint(completion("<think>hmm</think>\n  The report.  \n"))
    model, _ = make_model(endpoint)
    response = await model.complete(ask("synthesize", schema=None))
    await model.aclose()
    assert response.data is None and response.text == "The report."
    assert "response_format" not in endpoint.bodies[0]


async def test_invalid_json_then_valid_repairs_once_with_the_error() -> None:
    endpoint = Endpoint(
        completion('{"answer": "yes", "score": 9}', usage={"prompt_tokens": 100, "completion_tokens": 10}),
        completion(json.dumps(GOOD), usage={"prompt_tokens": 130, "completion_tokens": 12}),
    )
    model, _ = make_model(endpoint)
    response = await model.complete(ask())
    await model.aclose()
    assert response.data == GOOD
    repair = endpoint.bodies[1]["messages"]
    assert repair[-2] == {"role": "assistant", "content": '{"answer": "yes", "score": 9}'}
    assert repair[-1]["role"] == "user"
    assert repair[-1]["content"].startswith("Your previous answer was invalid: at /score: 9 is greater than")
    assert repair[-1]["content"].endswith("Answer again with only JSON matching the schema.")
    assert response.usage.prompt_tokens == 230 and response.usage.completion_tokens == 22
    assert response.usage.calls == 2 and response.usage.retries == 1  # both answers were paid for


async def test_three_invalid_answers_raise_naming_stage_and_model_with_what_they_cost() -> None:
    endpoint = Endpoint(
        completion("I cannot answer in JSON, sorry.", usage={"prompt_tokens": 100, "completion_tokens": 9}),
        completion('{"answer": "yes"}', usage={"prompt_tokens": 120, "completion_tokens": 5}),
        completion("```json\n{\"answer\": ", usage={"prompt_tokens": 140, "completion_tokens": 4}),
    )
    model, _ = make_model(endpoint, model="gpt-4o-mini", fast_model="gpt-4o-mini")
    with pytest.raises(InvalidModelOutput) as caught:
        await model.complete(ask("skeptic", tier="fast"))
    await model.aclose()
    assert len(endpoint.bodies) == 3
    message = str(caught.value)
    assert message.startswith("the skeptic stage got invalid output from model gpt-4o-mini after 3 attempts: not JSON")
    assert caught.value.stage == "skeptic" and caught.value.model == "gpt-4o-mini"
    # every attempt showed the model the error of the one before it
    second, third = endpoint.bodies[1]["messages"], endpoint.bodies[2]["messages"]
    assert second[-2]["content"] == "I cannot answer in JSON, sorry." and "not JSON" in second[-1]["content"]
    assert third[-2]["content"] == '{"answer": "yes"}' and "'score' is a required property" in third[-1]["content"]
    spent = caught.value.usage
    assert (spent.prompt_tokens, spent.completion_tokens, spent.calls, spent.retries) == (360, 18, 3, 2)
    assert spent.cost_usd == pytest.approx((360 * 0.15 + 18 * 0.60) / 1_000_000)


async def test_finish_reason_length_counts_as_invalid() -> None:
    endpoint = Endpoint(completion('{"answer": "ye', finish="length"), completion(json.dumps(GOOD)))
    model, _ = make_model(endpoint)
    response = await model.complete(ask())
    await model.aclose()
    assert response.data == GOOD
    assert "cut off at the token limit" in endpoint.bodies[1]["messages"][-1]["content"]


def test_strip_think_variants() -> None:
    assert strip_think("<think>a</think>b<THINK>c</THINK> d") == "b d"
    assert strip_think("reasoning without an opening tag</think>\n{}") == "{}"
    assert strip_think("<think>never closed, cut off here {") == ""
    assert strip_think("plain") == "plain"


def test_extract_json_accepts_raw_newlines_in_strings() -> None:
    # SmolLM2 under llama-cpp-python's json_object grammar answered like this; strict JSON refused it.
    assert extract_json('{ "sub_queries": [ "event loop\nscheduling", "tasks" ] }') == {
        "sub_queries": ["event loop\nscheduling", "tasks"]
    }


def test_extract_json_refuses_an_answer_nested_past_the_stack() -> None:
    with pytest.raises(ValueError, match="nests too deeply"):
        extract_json("[" * 100_000 + "]" * 100_000)


def test_extract_json_variants() -> None:
    assert extract_json("[1, 2]") == [1, 2]
    assert extract_json('Here:\n```\n{"a": 1}\n```') == {"a": 1}
    assert extract_json('The {odd} answer is {"a": {"b": [1]}} and {"c": 2}.') == {"a": {"b": [1]}}
    for bad in ("", "no json here", '{"a": 1'):
        with pytest.raises(ValueError):
            extract_json(bad)


# --- retries and failures --------------------------------------------------------------------------


async def test_429_retry_after_is_honoured() -> None:
    endpoint = Endpoint(error(429, "slow down", {"Retry-After": "7"}), completion(json.dumps(GOOD)))
    model, sleeps = make_model(endpoint)
    response = await model.complete(ask())
    await model.aclose()
    assert sleeps.calls == [7.0]
    assert response.usage.retries == 1


async def test_429_without_retry_after_backs_off_with_jitter() -> None:
    endpoint = Endpoint(error(429, "slow down"), error(429, "slow down"), completion(json.dumps(GOOD)))
    model, sleeps = make_model(endpoint)
    await model.complete(ask())
    await model.aclose()
    assert len(sleeps.calls) == 2
    assert 0.125 <= sleeps.calls[0] <= 0.25 and 0.25 <= sleeps.calls[1] <= 0.5


async def test_backoff_is_capped() -> None:
    endpoint = Endpoint(*([error(502, "bad gateway")] * 8), completion(json.dumps(GOOD)))
    model, sleeps = make_model(endpoint, max_retries=8)
    response = await model.complete(ask())
    await model.aclose()
    assert response.usage.retries == 8
    assert max(sleeps.calls) <= 30.0 and sleeps.calls[-1] >= 15.0  # 0.25 * 2**7 is past the cap


async def test_503_burst_recovers_and_counts_retries() -> None:
    endpoint = Endpoint(*([error(503, "overloaded")] * 3), completion(json.dumps(GOOD)))
    recorder = UsageRecorder(make_model(endpoint)[0])
    response = await recorder.complete(ask())
    await recorder.inner.aclose()
    assert response.data == GOOD
    assert recorder.by_stage["relevance"].retries == 3
    assert len(endpoint.bodies) == 4


async def test_503_forever_raises_unavailable_after_max_retries() -> None:
    endpoint = Endpoint(error(503, "overloaded"))
    model, sleeps = make_model(endpoint, max_retries=2)
    with pytest.raises(
        LLMUnavailable, match=r"model endpoint http://llm.test/v1 kept failing: HTTP 503 overloaded"
    ):
        await model.complete(ask())
    await model.aclose()
    assert len(endpoint.bodies) == 3 and len(sleeps.calls) == 2


async def test_404_is_model_not_found() -> None:
    model, _ = make_model(Endpoint(error(404, "The model `main-model` does not exist")))
    with pytest.raises(
        ModelNotFound, match=r"model 'main-model' not found at http://llm.test/v1; check RESEARCH_AGENT_MODEL"
    ):
        await model.complete(ask())
    with pytest.raises(ModelNotFound, match="fast-model.*RESEARCH_AGENT_FAST_MODEL"):
        await model.complete(ask(tier="fast"))
    await model.aclose()


async def test_401_is_a_config_error_about_the_key() -> None:
    model, sleeps = make_model(Endpoint(error(401, "Incorrect API key provided")))
    with pytest.raises(ConfigError, match="refused the API key .*OPENAI_API_KEY"):
        await model.complete(ask())
    await model.aclose()
    assert sleeps.calls == []


async def test_other_4xx_is_not_retried() -> None:
    endpoint = Endpoint(error(413, "prompt too long"))
    model, sleeps = make_model(endpoint)
    with pytest.raises(LLMError, match="rejected the relevance request: HTTP 413 prompt too long"):
        await model.complete(ask())
    await model.aclose()
    assert len(endpoint.bodies) == 1 and sleeps.calls == []


async def test_read_timeout_becomes_llm_timeout() -> None:
    def stall(request: httpx.Request, body: dict[str, Any]) -> httpx.Response:
        raise httpx.ReadTimeout("no data", request=request)

    endpoint = Endpoint(stall)
    model, sleeps = make_model(endpoint, max_retries=1, timeout=3)
    with pytest.raises(LLMTimeout, match=r"model call for stage relevance timed out after 3s \(2 attempts\)"):
        await model.complete(ask())
    await model.aclose()
    assert len(endpoint.bodies) == 2 and len(sleeps.calls) == 1


async def test_a_timeout_is_retried_once_while_other_transient_errors_keep_their_retries() -> None:
    def stall(request: httpx.Request, body: dict[str, Any]) -> httpx.Response:
        raise httpx.ReadTimeout("no data", request=request)

    hung = Endpoint(stall)
    model, sleeps = make_model(hung, max_retries=4, timeout=180)
    with pytest.raises(LLMTimeout, match=r"timed out after 180s \(2 attempts\)") as caught:
        await model.complete(ask())
    assert len(hung.bodies) == 2 and len(sleeps.calls) == 1  # not 5 attempts: a hung endpoint ends sooner
    assert caught.value.usage.retries == 1 and caught.value.usage.calls == 0

    flaky = Endpoint(stall, error(503, "busy"), error(503, "busy"), error(503, "busy"), completion(json.dumps(GOOD)))
    other, _ = make_model(flaky, max_retries=4)
    response = await other.complete(ask())
    await model.aclose()
    await other.aclose()
    assert response.usage.retries == 4 and len(flaky.bodies) == 5


def test_the_default_per_call_timeout_is_180_seconds() -> None:
    assert Settings().llm_timeout == 180.0
    assert OpenAIChatModel("m", base_url="http://llm.test/v1").timeout == 180.0


async def test_timeout_then_success_is_retried() -> None:
    def stall(request: httpx.Request, body: dict[str, Any]) -> httpx.Response:
        raise httpx.ReadTimeout("no data", request=request)

    model, _ = make_model(Endpoint(stall, completion(json.dumps(GOOD))))
    response = await model.complete(ask())
    await model.aclose()
    assert response.usage.retries == 1


async def test_connection_refused_is_unavailable() -> None:
    def refused(request: httpx.Request, body: dict[str, Any]) -> httpx.Response:
        raise httpx.ConnectError("[Errno 111] Connection refused", request=request)

    model, sleeps = make_model(Endpoint(refused), max_retries=2)
    with pytest.raises(
        LLMUnavailable, match=r"cannot reach the model endpoint at http://llm.test/v1: .*refused"
    ):
        await model.complete(ask())
    await model.aclose()
    assert len(sleeps.calls) == 2


async def test_unsupported_temperature_is_dropped_and_remembered() -> None:
    def reasoning_model(request: httpx.Request, body: dict[str, Any]) -> httpx.Response:
        if "temperature" in body:
            return error(400, "Unsupported value: 'temperature' does not support 0.2 with this model.")
        if "max_tokens" in body:
            return error(400, "Unsupported parameter: 'max_tokens' is not supported with this model.")
        return completion(json.dumps(GOOD))

    endpoint = Endpoint(reasoning_model)
    model, sleeps = make_model(endpoint)
    await model.complete(ask(max_tokens=200))
    assert len(endpoint.bodies) == 3
    assert endpoint.bodies[-1]["max_completion_tokens"] == 200
    await model.complete(ask(max_tokens=100))
    await model.aclose()
    assert len(endpoint.bodies) == 4 and sleeps.calls == []


class WatchedLimiter(asyncio.Semaphore):
    """A semaphore that signals when a caller has to wait at it."""

    def __init__(self, value: int) -> None:
        super().__init__(value)
        self.someone_waits = asyncio.Event()

    async def acquire(self) -> bool:
        if self.locked():
            self.someone_waits.set()
        return await super().acquire()


async def test_concurrency_is_bounded_two_held_calls_keep_a_third_out() -> None:
    """Deterministic: the first two calls are held inside the endpoint until the test lets
    go; the third is seen waiting at the limiter and enters only after one is released."""
    held, entered = 0, []
    two_in, third_in = asyncio.Event(), asyncio.Event()
    release_one, release_all = asyncio.Event(), asyncio.Event()

    async def handler(request: httpx.Request) -> httpx.Response:
        nonlocal held
        entered.append(held)  # how many calls were inside when this one came in
        held += 1
        if len(entered) == 2:
            two_in.set()
        if len(entered) == 3:
            third_in.set()
        await (release_one.wait() if len(entered) == 1 else release_all.wait())
        held -= 1
        return completion(json.dumps(GOOD))

    limiter = WatchedLimiter(2)
    model, _ = make_model(
        None, limiter=limiter, http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler))
    )
    calls = [asyncio.create_task(model.complete(ask())) for _ in range(3)]
    await asyncio.wait_for(two_in.wait(), 30)
    await asyncio.wait_for(limiter.someone_waits.wait(), 30)  # the third is at the gate ...
    assert entered == [0, 1]  # ... and not inside
    release_one.set()
    await asyncio.wait_for(third_in.wait(), 30)
    release_all.set()
    results = await asyncio.wait_for(asyncio.gather(*calls), 30)
    await model.aclose()
    assert [r.data for r in results] == [GOOD] * 3
    assert entered == [0, 1, 1]  # the third came in beside one held call, never two


# --- tiers, usage, cost ----------------------------------------------------------------------------


async def test_fast_tier_uses_fast_model() -> None:
    endpoint = Endpoint(completion(json.dumps(GOOD)))
    model, _ = make_model(endpoint)
    response = await model.complete(ask(tier="fast"))
    await model.aclose()
    assert endpoint.bodies[0]["model"] == "fast-model"
    assert response.model == "fast-model"


async def test_usage_and_cost_are_counted() -> None:
    endpoint = Endpoint(completion(json.dumps(GOOD), usage={"prompt_tokens": 1000, "completion_tokens": 500}))
    model, _ = make_model(endpoint, model="gpt-4o-mini-2024-07-18")
    response = await model.complete(ask())
    await model.aclose()
    usage = response.usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.calls, usage.retries) == (1000, 500, 1, 0)
    assert usage.cost_usd == pytest.approx((1000 * 0.15 + 500 * 0.60) / 1_000_000)


async def test_missing_usage_is_estimated_and_an_unknown_price_is_unknown_not_zero() -> None:
    model, _ = make_model(Endpoint(completion(json.dumps(GOOD))), model="llama3.1:8b")
    response = await model.complete(ask())
    await model.aclose()
    assert (
        response.usage.prompt_tokens > 0
        and response.usage.completion_tokens == (len(json.dumps(GOOD)) + 3) // 4
    )
    assert response.usage.cost_usd is None


# --- construction from settings ----------------------------------------------------------------------


def test_no_endpoint_is_a_config_error_saying_what_to_set() -> None:
    with pytest.raises(ConfigError) as caught:
        OpenAIChatModel.from_settings(Settings(api_key="", base_url=""))
    assert str(caught.value) == NO_ENDPOINT_MESSAGE
    assert "OPENAI_API_KEY" in NO_ENDPOINT_MESSAGE and "OPENAI_BASE_URL" in NO_ENDPOINT_MESSAGE
    assert "http://localhost:11434/v1" in NO_ENDPOINT_MESSAGE


async def test_base_url_without_key_uses_placeholder_and_settings(tmp_path: Path) -> None:
    prices = tmp_path / "prices.toml"
    prices.write_text('"local-model" = { input = 1.0, output = 2.0 }\n', encoding="utf-8")
    endpoint = Endpoint(completion("hello", usage={"prompt_tokens": 1_000_000, "completion_tokens": 0}))
    settings = Settings(
        base_url="http://localhost:11434/v1", model="local-model", fast_model="", price_table=prices
    )
    seen: list[str] = []

    def server(request: httpx.Request) -> httpx.Response:  # says no context window anywhere
        seen.append(f"{request.method} {request.url.path}")
        return endpoint(request) if request.url.path.endswith("/chat/completions") else httpx.Response(404)

    client = httpx.AsyncClient(transport=httpx.MockTransport(server))
    model = OpenAIChatModel.from_settings(settings, http_client=client)
    response = await model.complete(ask("synthesize", schema=None, tier="fast"))
    await model.aclose()
    # a local server is asked for its context window once, where servers say it (all at once), before the first call
    assert sorted(seen[:-1]) == ["GET /props", "GET /slots", "GET /v1/models", "POST /api/show"]
    assert seen[-1] == "POST /v1/chat/completions"
    assert endpoint.requests[0].headers["Authorization"] == f"Bearer {PLACEHOLDER_API_KEY}"
    assert str(endpoint.requests[0].url) == "http://localhost:11434/v1/chat/completions"
    assert endpoint.bodies[0]["model"] == "local-model"  # fast falls back to the main model
    assert response.usage.cost_usd == pytest.approx(1.0)


def test_parse_retry_after_forms() -> None:
    now = 1_700_000_000.0
    assert parse_retry_after({"Retry-After": "3"}) == 3.0
    assert parse_retry_after({"retry-after-ms": "250", "Retry-After": "9"}) == 0.25
    assert parse_retry_after({"Retry-After": "3600"}) == 60.0
    assert parse_retry_after({"Retry-After": "Tue, 14 Nov 2023 22:13:40 GMT"}, now=now) == 20.0
    assert parse_retry_after({"Retry-After": "Tue, 14 Nov 2023 22:00:00 GMT"}, now=now) == 0.0
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after({}) is None


# --- prices ------------------------------------------------------------------------------------------


def test_price_lookup_exact_prefix_and_unknown() -> None:
    table = PriceTable.default()
    assert table.lookup("gpt-4o") == Price(2.50, 10.00)
    assert table.lookup("gpt-4o-mini-2024-07-18") == table.lookup("gpt-4o-mini")
    assert table.lookup("gpt-4.1-nano") == Price(0.10, 0.40)
    assert table.lookup("openai/gpt-5-mini") == Price(0.25, 2.00)
    assert not table.known("qwen2.5:7b") and table.cost("qwen2.5:7b", 10_000, 10_000) is None
    assert table.cost("gpt-4o", 1_000_000, 1_000_000) == pytest.approx(12.5)


def test_price_table_load_extends_defaults(tmp_path: Path) -> None:
    toml_file = tmp_path / "p.toml"
    toml_file.write_text('"my-model" = {input = 0.15, output = 0.6}\n[gpt-4o]\ninput = 2\noutput = 8\n')
    table = PriceTable.load(toml_file)
    assert table.lookup("my-model") == Price(0.15, 0.6)
    assert table.lookup("gpt-4o") == Price(2.0, 8.0)
    assert table.lookup("gpt-4.1") == Price(2.00, 8.00)
    json_file = tmp_path / "p.json"
    json_file.write_text(json.dumps({"Other": {"input": 1, "output": 1}}))
    assert PriceTable.load(json_file).known("other")


@pytest.mark.parametrize(
    ("name", "text", "why"),
    [
        ("bad.toml", "this is = = not toml", "p"),
        ("neg.toml", "m = {input = -1, output = 1}", "non-negative number for 'input'"),
        ("shape.toml", "m = 3", "must be a table"),
        ("extra.json", '{"m": {"input": 1, "output": 1, "cached": 0}}', "unknown key"),
        ("list.json", "[1, 2]", "expected a table"),
    ],
)
def test_price_table_bad_file_names_the_file(tmp_path: Path, name: str, text: str, why: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ConfigError, match=f"price table {path}") as caught:
        PriceTable.load(path)
    assert why in str(caught.value)
    with pytest.raises(ConfigError, match="price table .*missing.toml"):
        PriceTable.load(tmp_path / "missing.toml")


async def test_strict_schema_sent_without_string_lengths_and_an_overlong_answer_is_cut_not_refused() -> None:
    from tests.test_schema_bounds import DRAFT_SCHEMA as DRAFT  # the JSON draft of 0.2: big bounds to cut to

    too_long = {"title": "x" * 500, "executive_summary": "s", "key_findings": ["f"] * 14,
                "sections": [{"heading": "h", "body": "b"}], "limitations": []}
    endpoint = Endpoint(completion(json.dumps(too_long)))
    model, _ = make_model(endpoint)
    response = await model.complete(ChatRequest(stage="draft", system="s", user="u", schema=DRAFT))
    await model.aclose()
    assert len(endpoint.bodies) == 1  # no repair round for what can be cut locally
    assert response.data["title"] == "x" * 200 and len(response.data["key_findings"]) == 10
    assert response.notes == ("/title: cut from 500 to 200 characters", "/key_findings: cut from 14 to 10 items")
    sent = endpoint.bodies[0]["response_format"]["json_schema"]["schema"]
    assert "maxLength" not in json.dumps(sent) and sent["properties"]["key_findings"]["maxItems"] == 10
    assert sent["properties"]["sections"]["items"]["required"] == ["heading", "body"]
