"""One chat request on the wire without the openai package (issue 37): what is sent, and how an
error answer is read. The whole client's behaviour over this transport is tests/test_llm.py's."""

from __future__ import annotations

import json
import ssl
import subprocess
import sys

import httpx
import pytest

from research_agent.llm.client import transport
from research_agent.llm.client.transport import MAX_ERROR_BYTES, ChatTransport, ConnectionFailed, StatusError


def client(handler) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


async def test_a_request_is_a_post_with_the_key_its_headers_and_its_own_time_limit():
    seen: list[httpx.Request] = []

    def endpoint(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"ok": True})

    wire = ChatTransport("http://llm.test/v1/", "sk-x", client(endpoint), timeout=60)
    kwargs = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "timeout": 7.5,
              "extra_headers": {"X-Research-Agent-Stage": "decompose"}}  # fmt: skip
    async with wire.send(kwargs) as response:
        assert json.loads(await response.aread()) == {"ok": True}
    request = seen[0]
    assert (request.method, str(request.url)) == ("POST", "http://llm.test/v1/chat/completions")
    assert request.headers["Authorization"] == "Bearer sk-x"
    assert request.headers["X-Research-Agent-Stage"] == "decompose"
    assert request.headers["Content-Type"] == "application/json"
    assert json.loads(request.content) == {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    assert request.extensions["timeout"] == {"connect": 7.5, "read": 7.5, "write": 7.5, "pool": 7.5}


@pytest.mark.parametrize(
    ("answer", "body", "message"),
    [
        (httpx.Response(400, json={"error": {"message": "bad 'temperature'", "type": "invalid"}}),
         {"message": "bad 'temperature'", "type": "invalid"}, "Error code: 400 - bad 'temperature'"),
        (httpx.Response(500, json={"detail": "overloaded"}), {"detail": "overloaded"}, "Error code: 500"),
        (httpx.Response(502, text="<html>Bad Gateway</html>"), "<html>Bad Gateway</html>", "Error code: 502"),
        (httpx.Response(503, content=b"x" * (MAX_ERROR_BYTES + 1)), None, "Error code: 503"),
    ],
)
async def test_an_error_answer_is_named_as_the_sdk_named_it(answer, body, message):
    answer.headers["Retry-After"] = "3"
    wire = ChatTransport("http://llm.test/v1", "k", client(lambda request: answer), timeout=5)
    with pytest.raises(StatusError) as caught:
        async with wire.send({"model": "m"}):
            pass
    error = caught.value
    assert (error.status_code, error.body, error.message) == (answer.status_code, body, message)
    assert error.headers["retry-after"] == "3"


async def test_no_answer_is_a_connection_failure_with_its_cause_or_a_timeout():
    def refused(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    def slow(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("slow", request=request)

    with pytest.raises(ConnectionFailed) as caught:
        async with ChatTransport("http://llm.test/v1", "k", client(refused), timeout=5).send({"model": "m"}):
            pass
    assert isinstance(caught.value.__cause__, httpx.ConnectError)
    with pytest.raises(TimeoutError):
        async with ChatTransport("http://llm.test/v1", "k", client(slow), timeout=5).send({"model": "m"}):
            pass


def test_the_tls_context_made_ahead_goes_to_the_next_client_only():
    transport.load_tls_ahead()
    made = transport._ahead.take()
    assert isinstance(made, ssl.SSLContext) and made.verify_mode == ssl.CERT_REQUIRED and made.check_hostname
    assert transport._ahead.take() is True, "httpx makes its own for every later client"


def test_a_model_call_never_imports_the_openai_package():
    code = (
        "import asyncio, sys, httpx\n"
        "from research_agent.llm import ChatRequest, OpenAIChatModel\n"
        "answer = {'choices': [{'message': {'content': 'hello'}, 'finish_reason': 'stop'}]}\n"
        "http = httpx.AsyncClient(transport=httpx.MockTransport(lambda r: httpx.Response(200, json=answer)))\n"
        "model = OpenAIChatModel('m', base_url='http://llm.test/v1', http_client=http)\n"
        "reply = asyncio.run(model.complete(ChatRequest(stage='decompose', system='s', user='u')))\n"
        "assert reply.text == 'hello', reply\n"
        "assert 'openai' not in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
