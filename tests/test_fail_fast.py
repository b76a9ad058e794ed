"""Fail fast, and blame the right part (issue 33, point 4).

A first model call that cannot connect at all (connection refused, a host name that does not
resolve) ends at once: no retry, no stage degraded around it, exit 3 with one line that says
what to run. Retries stay for what passes: timeouts, 429, 5xx, and a refused connection once
the endpoint has answered before (a server restarting).
"""

from __future__ import annotations

import socket
from pathlib import Path

import httpx
import pytest

from research_agent.errors import EndpointUnreachable, LLMUnavailable
from research_agent.llm import ChatRequest
from research_agent.memory.lessons.select import LessonSelection
from research_agent.pipeline import research
from tests.support.cli import cli
from tests.support.llm import completion, make_model
from tests.support.pipeline import DocsProvider, settings_for

REQUEST = ChatRequest(stage="decompose", system="s", user="u")


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (it was just released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def cannot_connect(cause: OSError) -> httpx.ConnectError:
    error = httpx.ConnectError(str(cause))
    error.__cause__ = cause
    return error


@pytest.mark.parametrize(
    ("cause", "why"),
    [
        (ConnectionRefusedError(111, "Connection refused"), "connection refused"),
        (socket.gaierror(-2, "Name or service not known"), "the host name does not resolve"),
    ],
)
async def test_a_first_call_that_cannot_connect_ends_at_once(cause: OSError, why: str) -> None:
    asked: list[httpx.Request] = []

    def endpoint(request: httpx.Request) -> httpx.Response:
        asked.append(request)
        raise cannot_connect(cause)

    model, sleeps = make_model(endpoint, max_retries=4)
    with pytest.raises(EndpointUnreachable) as caught:
        await model.complete(REQUEST)
    await model.aclose()
    assert str(caught.value) == (
        f"cannot reach the model endpoint at http://llm.test/v1 ({why}); run `research-agent doctor`"
    )
    assert len(asked) == 1 and sleeps.calls == [] and caught.value.exit_code == 3


async def test_once_the_endpoint_answered_a_refused_connection_is_retried_as_transient() -> None:
    replies = [completion('{"ok": 1}'), cannot_connect(ConnectionRefusedError(111, "Connection refused"))]

    def endpoint(request: httpx.Request) -> httpx.Response:
        reply = replies.pop(0) if len(replies) > 1 else replies[0]
        if isinstance(reply, Exception):
            raise reply
        return reply

    model, sleeps = make_model(endpoint, max_retries=2)
    await model.complete(ChatRequest(stage="decompose", system="s", user="u"))
    with pytest.raises(LLMUnavailable) as caught:
        await model.complete(REQUEST)
    await model.aclose()
    assert not isinstance(caught.value, EndpointUnreachable) and len(sleeps.calls) == 2
    assert "(3 attempts)" in str(caught.value)


async def test_a_run_whose_model_cannot_be_reached_stops_at_its_first_call(tmp_path: Path) -> None:
    asked: list[httpx.Request] = []

    def endpoint(request: httpx.Request) -> httpx.Response:
        asked.append(request)
        raise cannot_connect(ConnectionRefusedError(111, "Connection refused"))

    model, sleeps = make_model(endpoint)
    provider = DocsProvider(tmp_path)
    with pytest.raises(EndpointUnreachable):
        await research(
            "How does VACUUM work?", settings=settings_for(tmp_path), model=model, providers=[provider],
            lessons=lambda domain: LessonSelection.none(domain),
        )  # fmt: skip
    await model.aclose()
    assert len(asked) == 1 and sleeps.calls == [] and provider.calls == []  # decompose, once; no search
    assert not (tmp_path / "reports").exists() or not list((tmp_path / "reports").glob("*.md"))


def test_the_cli_names_the_model_first_when_model_and_search_are_both_down(tmp_path: Path, corpus: Path) -> None:
    base_url = f"http://127.0.0.1:{closed_port()}/v1"
    env = {"OPENAI_API_KEY": "sk-test", "RESEARCH_AGENT_SEARCH": "searxng",
           "RESEARCH_AGENT_SEARXNG_URL": f"http://127.0.0.1:{closed_port()}"}  # fmt: skip
    web = cli(tmp_path, "run", "How does VACUUM work?", "--no-critique", base_url=base_url, env=env)
    local = cli(tmp_path, "run", "How does VACUUM work?", "--corpus", str(corpus), "--no-critique", base_url=base_url)
    for done in (web, local):
        assert done.returncode == 3, done.stderr
        last = done.stderr.strip().splitlines()[-1]
        assert last.endswith(f"cannot reach the model endpoint at {base_url} (connection refused); "
                             "run `research-agent doctor`")  # fmt: skip
        assert "… search" not in done.stderr and "search provider" not in done.stderr
    assert not list((tmp_path / "reports").glob("*.md")) if (tmp_path / "reports").exists() else True
