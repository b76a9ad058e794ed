"""A search provider's reply is bounded: an endless body, a gzip bomb and a trickle each fail that
provider within its limits, in little memory, and the run goes on with the other providers."""

from __future__ import annotations

import json
import threading
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from research_agent.search.base import ProviderFailure
from research_agent.search.registry import search_all
from research_agent.search.web import ProviderError, SearxngProvider, TavilyProvider
from research_agent.sources import SearchHit
from tests.support import http_server
from tests.support.cli import cli
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.http_server import TAVILY_KEY, LocalServer
from tests.support.research_responder import ResearchResponder

local_server = http_server.local_server  # the fixture

CAP = 1024 * 1024
HANG_GUARD = 60.0  # seconds; only against a hang, never a timing assumption
OPENING = b'{"results": ['
ROW = json.dumps({"url": "https://example.org/a", "title": "t", "content": "c" * 200}).encode() + b","


def endless(h: Any, sent: list[int]) -> None:
    """A results list that never ends (counts what it could send before the client hung up)."""

    def rows() -> Iterator[bytes]:
        yield OPENING
        while True:
            sent[0] += len(ROW) * 256
            yield ROW * 256

    h.stream(200, rows(), "application/json")


def bomb(h: Any) -> None:
    """About 64 MB of JSON whitespace in well under 100 KB of gzip."""
    h.send(200, http_server.gzip_bomb(), "application/json", Content_Encoding="gzip")


class SteppedClock:
    """The provider's clock, in lock step with a server that sends one byte each time the
    provider has looked at the clock, and moves it on by ``step`` seconds first: a reply
    that trickles a byte every two seconds, without anyone waiting two seconds."""

    def __init__(self, step: float) -> None:
        self.step = step
        self.now = 0.0
        self.seen = 0.0  # the latest time the provider read
        self._released = False
        self._read = threading.Event()
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            self._read.set()
            self.seen = self.now
            return self.now

    def next_byte(self) -> bool:
        """Wait until the provider has read the clock, then move it on; False once released."""
        if not self._read.wait(HANG_GUARD) or self._released:
            return False
        with self._lock:
            self._read.clear()
            self.now += self.step
            return True

    def release(self) -> None:
        self._released = True
        self._read.set()


def trickle(clock: SteppedClock) -> Any:
    def route(h: Any) -> None:
        def one_byte_at_a_time() -> Iterator[bytes]:
            for byte in OPENING + ROW * 50:
                if h.server.owner.stopping.is_set() or not clock.next_byte():
                    return
                yield bytes([byte])

        h.stream(200, one_byte_at_a_time(), "application/json")

    return route


def stall(h: Any) -> None:
    h.stream(200, iter([OPENING, b""]), "application/json")
    h.server.owner.stopping.wait(60)


def providers(server: LocalServer, client: httpx.AsyncClient, **limits: Any) -> list[Any]:
    return [
        SearxngProvider(server.url("/bad"), client, max_bytes=CAP, **limits),
        TavilyProvider(TAVILY_KEY, client, server.url("/bad"), max_bytes=CAP, **limits),
    ]


def route_both(server: LocalServer, route: Any) -> None:
    server.extra_routes[("GET", "/bad/search")] = route
    server.extra_routes[("POST", "/bad/search")] = route


@pytest.mark.parametrize("kind", ["endless", "bomb"])
async def test_a_reply_past_the_cap_fails_the_provider_in_little_memory(local_server: LocalServer, kind: str) -> None:
    sent = [0]
    route_both(local_server, (lambda h: endless(h, sent)) if kind == "endless" else bomb)
    async with httpx.AsyncClient() as client:
        for provider in providers(local_server, client):
            tracemalloc.start()
            try:
                with pytest.raises(ProviderError) as info:
                    await provider.search("q", max_results=5)
                peak = tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
            assert info.value.reason == "answered with more than 1,048,576 bytes (the reply cap)"
            assert peak < 16 * CAP, f"{provider.name} held {peak:,} bytes for a reply capped at {CAP:,}"
    if kind == "endless":  # it stopped reading: the server could not push much past the cap
        assert sent[0] < 64 * CAP


async def test_a_trickling_reply_fails_at_the_whole_request_limit(local_server: LocalServer) -> None:
    async with httpx.AsyncClient() as client:
        for name in ("searxng", "tavily"):
            clock = SteppedClock(step=2.0)
            route_both(local_server, trickle(clock))
            provider = {p.name: p for p in providers(local_server, client, timeout=20.0, clock=clock)}[name]
            try:
                with pytest.raises(ProviderError, match=r"timed out after 20s"):
                    await provider.search("q", max_results=5)
            finally:
                clock.release()  # the route stops at its next byte
            # It gave up at its first look at the clock past the limit: after ten bytes of two seconds each.
            assert clock.seen == 20.0


async def test_a_reply_that_stalls_fails_at_the_whole_request_limit(local_server: LocalServer) -> None:
    route_both(local_server, stall)
    async with httpx.AsyncClient() as client:
        for provider in providers(local_server, client, timeout=0.3):
            with pytest.raises(ProviderError, match=r"timed out after 0.3s"):
                await provider.search("q", max_results=5)


async def test_json_nested_past_the_parser_stack_is_invalid_json_not_a_crash(local_server: LocalServer) -> None:
    route_both(local_server, lambda h: h.send(200, "[" * 200_000, "application/json"))
    async with httpx.AsyncClient() as client:
        for provider in providers(local_server, client):
            with pytest.raises(ProviderError, match="answered with invalid JSON"):
                await provider.search("q", max_results=5)


class GoodProvider:
    name = "ddgs"

    async def search(self, query: str, *, max_results: int) -> list[SearchHit]:
        return [SearchHit(title="ok", location="https://example.org/ok", snippet="s", provider=self.name)]


async def test_the_others_serve_the_search_when_one_provider_is_bombed(local_server: LocalServer) -> None:
    route_both(local_server, bomb)
    reported: list[ProviderFailure] = []
    async with httpx.AsyncClient() as client:
        bad = SearxngProvider(local_server.url("/bad"), client, max_bytes=CAP)
        results = await search_all([bad, GoodProvider()], ["q"], max_results=5, on_failure=reported.append)
    assert [h.location for h in results.hits["q"]] == ["https://example.org/ok"]
    assert [f.provider for f in reported] == ["searxng"]


def test_a_run_whose_searxng_sends_a_gzip_bomb_goes_on_with_the_corpus(tmp_path: Path, corpus: Path) -> None:
    server = LocalServer()
    server.extra_routes[("GET", "/search")] = bomb
    config = tmp_path / "config.toml"
    config.write_text(f"search_reply_max_bytes = {CAP}\n")
    with server, FakeOpenAIServer(ResearchResponder()) as llm:
        proc = cli(tmp_path, "run", "How well do heat pumps work in cold climates?", "--search", "searxng",
                   "--searxng-url", server.url("/"), "--corpus", str(corpus), "--no-critique",
                   "--reports-dir", str(tmp_path / "reports"), base_url=llm.base_url,
                   env={"RESEARCH_AGENT_CONFIG": str(config)})
    assert proc.returncode == 0, proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if "search provider" in line]
    assert warnings == ["! search provider searxng failed: answered with more than 1,048,576 bytes (the reply cap)"]
    assert "Traceback" not in proc.stderr
