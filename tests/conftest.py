"""Shared fixtures. The scripted model lives here, like simonw/llm's mock model."""

from __future__ import annotations

import copy
from collections import defaultdict, deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from research_agent.errors import InvalidModelOutput, LLMError
from research_agent.llm import STRUCTURED_ATTEMPTS, ChatRequest, ChatResponse, Usage
from research_agent.llm.schema_bounds import answer_schema, clamp
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.pipeline import DOCS
from tests.support.research_responder import ResearchResponder

Answer = Any  # a dict/list/str, INVALID, an Exception to raise, or a callable(request) -> one of those


class Invalid:
    """A scripted answer that does not validate: one failed attempt of a request."""

    def __init__(self, reason: str = "not JSON (no JSON object or array found in the answer)") -> None:
        self.reason = reason


INVALID = Invalid()


@pytest.fixture(autouse=True, scope="session")
def _private_state_dir(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The user state folder (keys, trusted hashes) of every test run lives in a temporary
    folder, never in the real home. A test that needs its own passes ``state_dir``."""
    import os

    os.environ.setdefault("RESEARCH_AGENT_STATE_DIR", str(tmp_path_factory.mktemp("state")))


class ScriptedModel:
    """A ChatModel that answers from per-stage queues and fails loudly.

    ``enqueue(stage, answer, times=1)`` adds answers for a stage. A call for a stage
    with nothing queued raises AssertionError; ``assert_done()`` raises if anything
    queued was never asked for. Answers are validated against the request's schema
    like the real implementation does (upper bounds cut, with notes), so a script cannot
    drift from the prompts. Each queued answer is one *attempt*: an :data:`INVALID` one
    is an answer that did not validate, and the request takes the next queued answer,
    up to ``STRUCTURED_ATTEMPTS``; so is one that the request's ``check`` finds unusable.
    Then it raises InvalidModelOutput carrying the usage of every attempt, like the real
    model does.
    """

    def __init__(self, *, validate: bool = True) -> None:
        self.queues: dict[str, deque[Answer]] = defaultdict(deque)
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
        spent, reason = Usage(), ""
        for attempt in range(STRUCTURED_ATTEMPTS):
            answer = self._next(request)
            if isinstance(answer, BaseException):
                if isinstance(answer, LLMError) and attempt:
                    answer.usage = spent
                raise answer
            spent = spent + Usage(
                prompt_tokens=(len(request.system) + len(request.user)) // 4,
                completion_tokens=50,
                calls=1,
                retries=1 if attempt else 0,
            )
            if isinstance(answer, Invalid):
                reason = answer.reason
                continue
            response = self._respond(request, copy.deepcopy(answer), spent)
            problem = request.check(response.data) if request.check is not None and self.validate else None
            if problem:  # unusable though it fits the schema: asked again, like the real model does
                reason = problem
                continue
            return response
        error = InvalidModelOutput(
            f"the {request.stage} stage got invalid output from model scripted after {STRUCTURED_ATTEMPTS} "
            f"attempts: {reason}",
            stage=request.stage,
            model="scripted",
        )
        error.usage = spent
        raise error

    def _next(self, request: ChatRequest) -> Answer:
        queue = self.queues.get(request.stage)
        if not queue:
            raise AssertionError(f"unexpected call for stage {request.stage!r} (nothing scripted)")
        answer = queue.popleft()
        if callable(answer) and not isinstance(answer, type | Invalid):
            answer = answer(request)
        return answer

    def _respond(self, request: ChatRequest, data: Any, usage: Usage) -> ChatResponse:
        notes: tuple[str, ...] = ()
        if request.schema is not None and self.validate:
            jsonschema.validate(data, answer_schema(dict(request.schema)))
            data, notes = clamp(data, request.schema)
        text = data if isinstance(data, str) else ""
        return ChatResponse(
            data=None if request.schema is None else data, text=text, model="scripted", usage=usage, notes=notes
        )

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
