"""Every chat request goes through the openai SDK (issue 43), over an httpx client that carries the
project's limits: bounded bodies and no redirect to another origin (issue 45). The whole client's
behaviour over this path is tests/test_llm.py's; here, what the SDK sends, how its failures are
named, and what the httpx client under it refuses."""

from __future__ import annotations

import gzip
import json
import ssl
from pathlib import Path
from typing import Any

import httpx
import pytest

from research_agent.errors import ConfigError, LLMUnavailable
from research_agent.fetch.outcome import FetchRefused
from research_agent.llm import ChatRequest, OpenAIChatModel
from research_agent.llm.client import transport
from research_agent.llm.client.sdk import ConnectionFailed, SdkSender, StatusError
from research_agent.llm.client.transport import MAX_ERROR_BYTES, RedirectRefused, model_http_client
from tests.support.cli import cli
from tests.support.http_server import LocalServer
from tests.support.llm import Endpoint, completion, make_model
from tests.support.pipeline import QUERY

ASK = ChatRequest(stage="decompose", system="s", user="u")
BODY = {"model": "m", "messages": [{"role": "user", "content": "u"}]}
SECRET = "OTHER-HOST-SECRET-REPLY"


def guarded(handler: Any, max_bytes: int = 1024 * 1024) -> httpx.AsyncClient:
    return model_http_client(60, max_bytes=max_bytes, transport=httpx.MockTransport(handler))


def sender(handler: Any) -> SdkSender:
    return SdkSender("http://llm.test/v1", "sk-x", guarded(handler), timeout=60)


async def test_a_chat_request_is_sent_by_the_openai_sdk_with_the_key_the_stage_and_its_own_time_limit():
    endpoint = Endpoint(completion("hello"))
    model, _ = make_model(endpoint, http_client=guarded(endpoint), timeout=7.5)
    reply = await model.complete(ASK)
    await model.aclose()
    assert reply.text == "hello"
    (request,) = endpoint.requests
    assert (request.method, str(request.url)) == ("POST", "http://llm.test/v1/chat/completions")
    assert request.headers["User-Agent"].startswith("AsyncOpenAI/Python ")
    assert request.headers["X-Stainless-Lang"] == "python" and request.headers["X-Stainless-Retry-Count"] == "0"
    assert request.headers["Authorization"] == "Bearer sk-test"
    assert request.headers["X-Research-Agent-Stage"] == "decompose"
    assert request.headers["Accept-Encoding"] == "gzip, deflate", "what the bounded decoder can undo"
    assert set(json.loads(request.content)) == {"model", "messages", "temperature"}
    assert request.extensions["timeout"] == {"connect": 7.5, "read": 7.5, "write": 7.5, "pool": 7.5}


@pytest.mark.parametrize(
    ("answer", "body"),
    [
        (httpx.Response(400, json={"error": {"message": "bad 'temperature'", "type": "invalid"}}),
         {"message": "bad 'temperature'", "type": "invalid"}),
        (httpx.Response(500, json={"detail": "overloaded"}), {"detail": "overloaded"}),
        (httpx.Response(502, text="<html>Bad Gateway</html>"), "<html>Bad Gateway</html>"),
    ],
)
async def test_an_error_answer_is_named_from_the_sdks_error(answer, body):
    """The status, the body's ``error`` object (else the body) and the headers, as the SDK gives them
    (its message's wording differs between its versions: what the client reads is the body)."""
    answer.headers["Retry-After"] = "3"
    with pytest.raises(StatusError) as caught:
        async with sender(lambda request: answer).send(BODY):
            pass
    error = caught.value
    assert (error.status_code, error.body) == (answer.status_code, body)
    assert error.headers["retry-after"] == "3"


@pytest.mark.parametrize("encoding", ["identity", "gzip"])
async def test_an_error_answer_the_sdk_reads_itself_is_cut_at_the_error_cap(encoding):
    """The SDK reads an error body whole; the client under it gives it at most 256 KB, decoded
    under that cap: a 50 MB error page or a gzip bomb costs no more."""
    raw = b"x" * (50 * 1024 * 1024)
    headers = {}
    if encoding == "gzip":
        raw, headers = gzip.compress(raw), {"Content-Encoding": "gzip"}

    async def body():  # streamed, not read into the answer by the test's own httpx.Response
        for start in range(0, len(raw), 64 * 1024):
            yield raw[start : start + 64 * 1024]

    with pytest.raises(StatusError) as caught:
        async with sender(lambda request: httpx.Response(503, content=body(), headers=headers)).send(BODY):
            pass
    assert caught.value.status_code == 503
    assert isinstance(caught.value.body, str) and len(caught.value.body) <= MAX_ERROR_BYTES
    assert caught.value.body or encoding == "gzip", "plain text is cut at the cap; gzip before the chunk past it"


async def test_no_answer_is_a_connection_failure_with_its_cause_or_a_timeout():
    def refused(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    def slow(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("slow", request=request)

    with pytest.raises(ConnectionFailed) as caught:
        async with sender(refused).send(BODY):
            pass
    assert isinstance(caught.value.__cause__, httpx.ConnectError)
    with pytest.raises(TimeoutError):
        async with sender(slow).send(BODY):
            pass


async def test_one_retry_policy_the_sdk_retries_nothing_and_retry_after_is_waited_once_per_attempt():
    limited = httpx.Response(429, json={"error": {"message": "slow down"}}, headers={"Retry-After": "7"})
    endpoint = Endpoint(limited)
    model, sleeps = make_model(endpoint, max_retries=2)
    with pytest.raises(LLMUnavailable):
        await model.complete(ASK)
    await model.aclose()
    assert len(endpoint.requests) == 3, "three attempts of the project's loop, none stacked by the SDK"
    assert [r.headers["X-Stainless-Retry-Count"] for r in endpoint.requests] == ["0", "0", "0"]
    assert sleeps.calls == [7.0, 7.0]


async def test_an_answer_body_is_decoded_under_the_cap_in_the_client_itself():
    bomb = gzip.compress(b"\0" * (8 * 1024 * 1024))
    http = guarded(lambda r: httpx.Response(200, content=bomb, headers={"Content-Encoding": "gzip"}))
    async with http, http.stream("GET", "http://llm.test/v1/x") as response:
        assert "content-encoding" not in response.headers, "decoded here, never by httpx"
        with pytest.raises(FetchRefused) as caught:
            await response.aread()
    assert caught.value.reason == "too_large"


def test_the_tls_context_made_ahead_goes_to_the_next_client_only():
    transport.load_tls_ahead()
    made = transport._ahead.take()
    assert isinstance(made, ssl.SSLContext) and made.verify_mode == ssl.CERT_REQUIRED and made.check_hostname
    assert transport._ahead.take() is True, "httpx makes its own for every later client"


# --- redirects -----------------------------------------------------------------------------


def _redirecting(to: str, status: int = 307):
    def route(handler) -> None:
        handler.send(status, "moved", "text/plain", Location=to)

    return route


def _answering(handler) -> None:
    handler.send(200, json.dumps({"choices": [{"message": {"content": SECRET}, "finish_reason": "stop"}]}),
                 "application/json")  # fmt: skip


@pytest.mark.parametrize("streamed", [False, True])
async def test_a_307_to_another_port_is_refused_nothing_is_sent_there_and_nothing_of_it_is_quoted(streamed):
    with LocalServer() as other, LocalServer() as endpoint:
        other.extra_routes[("POST", "/v1/chat/completions")] = _answering
        endpoint.extra_routes[("POST", "/v1/chat/completions")] = _redirecting(other.url("/v1/chat/completions"))
        model = OpenAIChatModel("m", base_url=endpoint.url("/v1"), timeout=30)
        with pytest.raises(ConfigError) as caught:
            await (model.stream(ASK) if streamed else model.complete(ASK))
        await model.aclose()
    message = str(caught.value)
    assert other.requests == [], "the prompt never reached the other address"
    assert endpoint.paths() == ["/v1/chat/completions"], "asked once: a redirect is not retried"
    assert "\n" not in message and SECRET not in message and "moved" not in message
    assert f"another origin (http://127.0.0.1:{other.port})" in message and "OPENAI_BASE_URL" in message


async def test_a_redirect_within_the_endpoints_own_origin_is_followed():
    with LocalServer() as endpoint:
        endpoint.extra_routes[("POST", "/v1/chat/completions")] = _redirecting("/v2/chat/completions")
        endpoint.extra_routes[("POST", "/v2/chat/completions")] = _answering
        model = OpenAIChatModel("m", base_url=endpoint.url("/v1"), timeout=30)
        reply = await model.complete(ASK)
        await model.aclose()
    assert reply.text == SECRET and endpoint.paths() == ["/v1/chat/completions", "/v2/chat/completions"]


@pytest.mark.parametrize("location", ["https://llm.test/v1/chat/completions", "http://llm.test:8080/x",
                                      "http://other.test/v1/chat/completions", "http://[::1]:80/x"])  # fmt: skip
async def test_a_redirect_to_another_scheme_host_or_port_is_refused_by_the_client(location):
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(308, headers={"Location": location}, text="gone")

    async with guarded(handler) as http:
        with pytest.raises(RedirectRefused) as caught:
            await http.post("http://llm.test/v1/chat/completions", json={})
    assert seen == ["http://llm.test/v1/chat/completions"]
    assert caught.value.target == transport.origin(httpx.URL(location))


# --- the product path ---------------------------------------------------------------------


def test_every_chat_request_of_a_run_goes_through_the_openai_sdk(tmp_path: Path, corpus, server):
    proc = cli(tmp_path, "run", QUERY, "--corpus", str(corpus), "--reports-dir", str(tmp_path / "r"), "--standard",
               "--no-critique", base_url=server.base_url)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    chats = [r for r in server.requests if r.route == "chat"]
    assert {r.stage for r in chats} >= {"decompose", "relevance", "draft", "skeptic"}
    assert all(r.user_agent.startswith("AsyncOpenAI/Python ") for r in chats), {r.user_agent for r in chats}
