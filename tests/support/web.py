"""The web workbench for tests: in-process behind httpx's ASGI transport (any client address, any
Host), or as ``research-agent serve`` in a subprocess for the browser; a memory to show, the folder
a workbench test allows (:func:`docs_corpus`) and a page's server-sent events read back (:func:`sse_events`)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from research_agent.memory.store.critique_types import ProposedLesson
from research_agent.service import ServiceOptions
from research_agent.web import WebBind, Workbench, build_app
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.mcp import HoldingResponder, server_env
from tests.support.memory import NOW, make_critique, put
from tests.support.pipeline import write_docs
from tests.support.research_responder import ResearchResponder

HANG_GUARD = 60.0  # seconds; only against a hang, never a timing assumption
PORT = 8600
BASE = f"http://127.0.0.1:{PORT}"
COUNTER = "counterarguments:missing"
IDEA = "Add a sub-query for the official release notes of the version asked about."
PLANTED = "Planted lesson text <b>from a critique</b>"
_CSRF = re.compile(r'name="csrf" value="([^"]+)"')
_SSE = re.compile(r"event: (\w+)\r?\ndata: (.*)")


@pytest.fixture
def docs_corpus(tmp_path: Path) -> Path:
    """The pipeline's DOCS in ``tmp_path/corpus``, the folder a workbench test allows (without the
    binary file of conftest's ``corpus``): a test module takes it as ``corpus = docs_corpus``."""
    return write_docs(tmp_path / "corpus")


def sse_events(text: str) -> list[tuple[str, dict]]:
    """The ``(event name, data)`` of each server-sent event in ``text``, its data read as JSON."""
    return [(kind, json.loads(data)) for kind, data in _SSE.findall(text)]


def options_for(tmp_path: Path, *, base_url: str = "http://127.0.0.1:9/v1", allow_dirs: tuple[Path, ...] = (),
                max_runs: int = 2, **overrides: Any) -> ServiceOptions:  # fmt: skip
    """Service options of a workbench whose files all live in ``tmp_path``."""
    settings = {
        "reports_dir": tmp_path / "reports", "state_dir": tmp_path / "state", "cache_dir": tmp_path / "cache",
        "base_url": base_url, "api_key": "test-key", "model": "fake-model", "context_path": "none",
        **overrides,
    }  # fmt: skip
    return ServiceOptions(overrides=settings, allow_dirs=tuple(d.resolve() for d in allow_dirs), max_runs=max_runs)


@dataclass
class InProcess:
    """A workbench app and an httpx client to it."""

    bench: Workbench
    client: httpx.AsyncClient

    async def csrf(self) -> str:
        page = await self.client.get("/")
        return _CSRF.search(page.text).group(1)  # type: ignore[union-attr]


@asynccontextmanager
async def in_process(
    options: ServiceOptions, *, client_ip: str = "127.0.0.1", bind: WebBind | None = None, browser: Path | None = None
) -> AsyncIterator[InProcess]:
    """The workbench for ``options``, reached as ``client_ip`` through ``bind`` (loopback:8600)."""
    bench = Workbench(options, browser=browser, clock=lambda: NOW)
    app = build_app(options, bind or WebBind("127.0.0.1", PORT), bench=bench)
    transport = httpx.ASGITransport(app=app, client=(client_ip, 50000))
    try:
        async with httpx.AsyncClient(transport=transport, base_url=BASE, timeout=HANG_GUARD) as client:
            yield InProcess(bench, client)
    finally:
        await bench.close()


@dataclass
class HeldInDraft:
    """A workbench in-process whose model holds each run's draft call until ``responder.release``."""

    web: InProcess
    responder: HoldingResponder
    server: FakeOpenAIServer


@asynccontextmanager
async def held_in_draft(tmp_path: Path, corpus: Path, **options: Any) -> AsyncIterator[HeldInDraft]:
    """The workbench of :func:`options_for` (``options`` passed on) over ``corpus``, its model a
    :class:`~tests.support.fake_openai_server.FakeOpenAIServer` whose draft calls wait for the test;
    released on the way out, after the workbench has closed."""
    responder = HoldingResponder(ResearchResponder(), "draft")
    with FakeOpenAIServer(responder) as server:
        try:
            async with in_process(options_for(tmp_path, base_url=server.base_url, allow_dirs=(corpus,), **options)) as web:
                yield HeldInDraft(web, responder, server)
        finally:
            responder.release.set()


def csrf_in(html: str) -> str:
    match = _CSRF.search(html)
    assert match, "no CSRF token on the page"
    return match.group(1)


def seed_memory(meta: Path) -> None:
    """A technology domain with a built lesson measured with and without, a failed critique's
    worth of history, and a proposal; every critique also carries text that must never be shown."""
    tags = ("missing_counterarguments",)
    for i, coverage in enumerate([4, 5, 4, 4, 5, 4]):
        put(meta, _planted(make_critique(i, scores=(4, 4, coverage, 4, 4), tags=tags, applied=(COUNTER,))))
    for i, coverage in enumerate([3, 3, 2, 3, 4]):
        put(meta, _planted(make_critique(10 + i, scores=(4, 3, coverage, 4, 3), tags=tags, withheld=(COUNTER,),
                                         reason="trial")))  # fmt: skip
    proposing = make_critique(30, tags=tags, when=NOW - timedelta(minutes=5))
    put(meta, _planted(proposing, proposed=(ProposedLesson("decompose", IDEA),)))


def _planted(critique: Any, proposed: tuple[ProposedLesson, ...] = ()) -> Any:
    from dataclasses import replace

    lessons = tuple(replace(use, text=PLANTED) for use in critique.lessons_applied)
    return replace(critique, lessons_applied=lessons, proposed_lessons=proposed,
                   weaknesses=("<script>document.title='owned'</script>",))  # fmt: skip


class ServedWorkbench:
    """``python -m research_agent serve --port 0 ARGS`` in ``tmp_path``; ``url`` once it listens."""

    def __init__(self, tmp_path: Path, *args: str, base_url: str, env: dict[str, str] | None = None) -> None:
        self.tmp_path = tmp_path
        self.args = args
        self.env = server_env(tmp_path, base_url, {"RESEARCH_AGENT_STATE_DIR": str(tmp_path / "state"), **(env or {})})
        self.url = ""
        self.lines: list[str] = []
        self._process: subprocess.Popen[str] | None = None

    def __enter__(self) -> ServedWorkbench:
        command = [sys.executable, "-m", "research_agent", "serve", "--port", "0", *self.args]
        self._process = subprocess.Popen(command, cwd=self.tmp_path, env=self.env, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)  # fmt: skip
        listening = threading.Event()

        def read() -> None:
            assert self._process is not None and self._process.stderr is not None
            for line in self._process.stderr:
                self.lines.append(line.rstrip("\n"))
                found = re.search(r"workbench on (http://\S+?)/ ", line)
                if found:
                    self.url = found.group(1)
                    listening.set()
            listening.set()

        threading.Thread(target=read, daemon=True).start()
        if not listening.wait(HANG_GUARD) or not self.url:
            self.__exit__()
            raise AssertionError("the workbench did not start: " + "\n".join(self.lines))
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(HANG_GUARD)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()

    def kill(self) -> None:
        """Stop the server at once (SIGKILL), as a crash or a pulled plug would."""
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
            self._process.wait()

    @property
    def stderr(self) -> str:
        return "\n".join(self.lines)


@contextmanager
def artifacts_dir() -> Iterator[Path]:
    """``tests/artifacts/`` (git-ignored): where the browser tests keep a screenshot of each page."""
    folder = Path(__file__).resolve().parents[1] / "artifacts"
    folder.mkdir(exist_ok=True)
    yield folder
