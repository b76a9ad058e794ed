"""Shared fixtures. The scripted model lives here, like simonw/llm's mock model."""

from __future__ import annotations

import json
from collections import defaultdict, deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from research_agent.llm import ChatEndpoint, ChatRequest, ChatResponse, CheckedModel, RawResponse, Usage
from research_agent.llm.protocol import Turn
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.pipeline import DOCS
from tests.support.research_responder import ResearchResponder

Answer = Any  # a dict/list/str, INVALID, an Exception to raise, or a callable(request) -> one of those


class Invalid:
    """A scripted answer that does not validate: one failed attempt of a request.

    It is served as ``text`` (not JSON) to a request for JSON, and as an empty answer to a request
    for plain text, so that the shared layer (:class:`~research_agent.llm.checked.CheckedModel`)
    rejects it and asks again, as it would a real model's."""

    def __init__(self, text: str = "This answer is not JSON.") -> None:
        self.text = text


INVALID = Invalid()


@pytest.fixture(autouse=True, scope="session")
def _private_state_dir(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The user state folder (keys, trusted hashes) of every test run lives in a temporary
    folder, never in the real home. A test that needs its own passes ``state_dir``."""
    import os

    os.environ.setdefault("RESEARCH_AGENT_STATE_DIR", str(tmp_path_factory.mktemp("state")))


class ScriptedEndpoint(ChatEndpoint):
    """An endpoint that pops raw answers from per-stage queues and fails loudly when a stage has none."""

    def __init__(self) -> None:
        self.queues: dict[str, deque[Answer]] = defaultdict(deque)

    async def send(self, request: ChatRequest, repair: Sequence[Turn] = ()) -> RawResponse:
        queue = self.queues.get(request.stage)
        if not queue:
            why = f"; asked again after: {repair[-1]['content']}" if repair else ""
            raise AssertionError(f"unexpected call for stage {request.stage!r} (nothing scripted){why}")
        answer = queue.popleft()
        if callable(answer) and not isinstance(answer, type | Invalid):
            answer = answer(request)
        if isinstance(answer, BaseException):
            raise answer
        return RawResponse(content=_served(answer, request), model="scripted", usage=_spent(request))


def _served(answer: Answer, request: ChatRequest) -> str:
    """What a model would have sent: a str as it is, anything else as JSON."""
    if isinstance(answer, Invalid):
        return answer.text if request.schema is not None else ""
    return answer if isinstance(answer, str) else json.dumps(answer)


def _spent(request: ChatRequest) -> Usage:
    return Usage(prompt_tokens=(len(request.system) + len(request.user)) // 4, completion_tokens=50, calls=1)


class ScriptedModel(CheckedModel):
    """A ChatModel whose endpoint answers from per-stage queues and fails loudly.

    ``enqueue(stage, answer, times=1)`` adds answers for a stage. A call for a stage
    with nothing queued raises AssertionError; ``assert_done()`` raises if anything
    queued was never asked for. Each queued answer is one *attempt*, served raw (a dict as
    JSON) to the same :class:`~research_agent.llm.checked.CheckedModel` the product uses, so a
    script cannot drift from the prompts: an answer that does not fit the schema, an
    :data:`INVALID` one, or one the request's ``check`` finds unusable is asked again and takes
    the next queued answer, up to ``STRUCTURED_ATTEMPTS``. ``requests`` holds the requests the
    stages made (one per ``complete``, however many attempts it took). ``validate=False`` is a
    model that checks nothing: each answer is handed over as it was scripted.
    """

    def __init__(self, *, validate: bool = True) -> None:
        self.script = ScriptedEndpoint()
        super().__init__(self.script)
        self.queues = self.script.queues
        self.requests: list[ChatRequest] = []
        self.validate = validate

    def enqueue(self, stage: str, answer: Answer, times: int = 1) -> ScriptedModel:
        for _ in range(times):
            self.queues[stage].append(answer)
        return self

    def calls(self, stage: str) -> list[ChatRequest]:
        return [r for r in self.requests if r.stage == stage]

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        if not self.validate:
            raw = await self.script.send(request)
            data = json.loads(raw.content) if request.schema is not None else None
            return ChatResponse(data=data, text=raw.content, model=raw.model, usage=raw.usage)
        return await super().complete(request)

    def assert_done(self) -> None:
        left = {stage: len(q) for stage, q in self.queues.items() if q}
        if left:
            raise AssertionError(f"scripted answers never asked for: {left}")


@pytest.fixture
def default_sigint():
    """SIGINT raised in this process reaches Python's handler (KeyboardInterrupt) for the test, even
    in a suite started in the background (`pytest &`), which inherits SIGINT ignored."""
    import signal

    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


@pytest.fixture
def scripted_model() -> ScriptedModel:
    model = ScriptedModel()
    yield model
    model.assert_done()


def answer_by(fn: Callable[[ChatRequest], Answer]) -> Callable[[ChatRequest], Answer]:
    """Mark a function as a content-dependent answer (for readability in tests)."""
    return fn


@pytest.fixture
def corpus(tmp_path) -> Path:
    """A folder with the DOCS of tests.support.pipeline and one binary file (for CLI runs)."""
    folder = tmp_path / "corpus"
    folder.mkdir()
    for name, (title, text) in DOCS.items():
        (folder / name).write_text(f"# {title}\n\n{text}\n", encoding="utf-8")
    (folder / "blob.txt").write_bytes(b"\x00\x01binary\x00" * 100)
    return folder


@pytest.fixture
def server():
    """An OpenAI-compatible server on 127.0.0.1 answering with ResearchResponder."""
    with FakeOpenAIServer(ResearchResponder()) as srv:
        yield srv


@pytest.fixture(autouse=True)
def _one_verdict(request: pytest.FixtureRequest):
    """After each test that has a ``tmp_path``, every report a run wrote there is reviewed as
    ``research-agent review`` would, and must get its run's verdict and word count (issue 33)."""
    if "tmp_path" not in request.fixturenames or request.node.get_closest_marker("own_mode"):
        yield
        return
    folder = request.getfixturevalue("tmp_path")  # set up now, so that it is torn down after this
    yield
    from tests.support.one_verdict import verdict_disagreements

    found = verdict_disagreements(folder)
    if found:
        pytest.fail("review disagrees with the run:\n" + "\n".join(found), pytrace=False)
