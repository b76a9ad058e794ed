"""Unreadable answers are named, retried like a 5xx, bounded in size; a run that could read no
answer at all is an endpoint failure (issue 26, points 4 and 10)."""

from __future__ import annotations

import httpx
import pytest

from research_agent.errors import LLMUnavailable, UnreadableAnswer
from research_agent.llm import ChatRequest, OpenAIChatModel
from research_agent.llm.client.answers import MAX_ANSWER_BYTES
from research_agent.memory.lessons.select import LessonSelection
from research_agent.pipeline import research
from tests.support.cli import cli
from tests.support.fake_openai_server import FakeOpenAIServer, Faults
from tests.support.llm import completion, make_model
from tests.support.pipeline import QUERY, DocsProvider, Recorded, settings_for
from tests.support.research_responder import ResearchResponder
from tests.support.streams import DONE, event, sse, usage_event

ASK = ChatRequest(stage="decompose", system="s", user="u", schema={"type": "object"})


def raw(body: bytes, content_type: str = "application/json") -> httpx.Response:
    return httpx.Response(200, headers={"content-type": content_type}, content=body)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (raw(b""), "the answer was an empty body"),
        (raw(b"{"), "the answer is not JSON: '{'"),
        (raw(b'{"choices": [{"message": {"content": "\xff"}}]}'), "the answer is not UTF-8 text"),
        (raw(b'{"id": "x", "choices": []}'), "the answer has no choices"),
        (raw(b'{"choices": [{"message": {"role": "assistant", "content": null}}]}'),
         "the answer's message content is null"),
        (raw(b"<html><body>Please sign in</body></html>", "text/html"),
         "the answer is HTML, not a chat completion (a login page or a proxy's error?)"),
        (raw(b'{"type": "message", "content": [{"type": "text", "text": "hi"}], "stop_reason": "end_turn"}'),
         "the answer is not an OpenAI chat completion (its fields: content, stop_reason, type)"),
        (raw(b'{"error": {"message": "model is loading"}}'), "the answer carries an error, not a completion: "
                                                              "model is loading"),
    ],
    ids=["empty", "brace", "bad-utf8", "no-choices", "null-content", "html", "other-vendor", "error-in-200"],
)
async def test_an_unreadable_answer_is_retried_like_a_5xx_then_named(body: httpx.Response, reason: str) -> None:
    calls: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        return body

    model, sleeps = make_model(handler, max_retries=2)
    with pytest.raises(UnreadableAnswer) as caught:
        await model.complete(ASK)
    await model.aclose()
    assert len(calls) == 3 and len(sleeps.calls) == 2  # backoff between attempts, as for a 5xx
    message = str(caught.value)
    assert message.startswith("model endpoint http://llm.test/v1 gave an unreadable answer for stage decompose: ")
    assert reason in message and message.endswith("(3 attempts)")
    assert caught.value.usage.retries == 2


async def test_an_unreadable_answer_then_a_good_one_is_used() -> None:
    answers = [raw(b"<html>busy</html>", "text/html"), completion('{"ok": true}')]
    model, _ = make_model(lambda request: answers.pop(0))
    response = await model.complete(ASK)
    await model.aclose()
    assert response.data == {"ok": True} and response.usage.retries == 1


async def test_an_endless_answer_is_read_only_up_to_the_cap() -> None:
    """A 50 MB (or endless) answer costs at most the cap's worth of reading per attempt: the
    deadline is never held up by its size (issue 26, point 10)."""
    pulled: list[int] = []
    size = 256 * 1024

    async def endless():
        yield b'{"choices": [{"message": {"content": "'
        while True:
            pulled.append(size)
            yield b"x" * size

    model, _ = make_model(lambda request: httpx.Response(200, content=endless()), max_retries=0)
    with pytest.raises(UnreadableAnswer, match="the answer is larger than the 4 MB cap"):
        await model.complete(ASK)
    await model.aclose()
    assert sum(pulled) <= MAX_ANSWER_BYTES + size


async def test_the_cap_is_a_setting_and_a_declared_length_over_it_is_refused_unread() -> None:
    body = completion("y" * 2_000_000)
    model, _ = make_model(lambda request: body, max_retries=0, max_answer_bytes=1024 * 1024)
    with pytest.raises(UnreadableAnswer, match=r"the answer is 2,000,\d+ bytes, over the 1 MB cap"):
        await model.complete(ChatRequest(stage="draft", system="s", user="u"))
    await model.aclose()


@pytest.mark.parametrize("kind", ["huge", "gzipbomb"])
async def test_a_huge_or_compressed_bomb_answer_from_a_real_socket_is_refused(kind: str) -> None:
    with FakeOpenAIServer(faults=Faults(always={"*": kind})) as server:
        model = OpenAIChatModel(model="m", base_url=server.base_url, max_retries=0, form_cache={})
        with pytest.raises(UnreadableAnswer, match="larger than the 4 MB cap|over the 4 MB cap"):
            await model.complete(ASK)
        await model.aclose()


async def test_a_streams_usage_only_final_chunk_is_fine() -> None:
    async def body():
        yield sse(event("Vacuum reclaims space [1]."))
        yield sse(event(None, "stop"))
        yield sse(usage_event(12, 5))  # {"choices": [], "usage": ...}: not an unreadable chunk
        yield DONE

    model, _ = make_model(lambda request: httpx.Response(200, headers={"content-type": "text/event-stream"},
                                                         content=body()))  # fmt: skip
    response = await model.stream(ChatRequest(stage="draft", system="s", user="u"))
    await model.aclose()
    assert response.text == "Vacuum reclaims space [1]." and response.finish_reason == "stop"
    assert response.usage.prompt_tokens == 12 and response.usage.completion_tokens == 5


async def test_an_unreadable_skeptic_degrades_the_stage_not_the_run(tmp_path) -> None:
    with FakeOpenAIServer(ResearchResponder(), faults=Faults(always={"skeptic": "html"})) as server:
        base_url = server.base_url
        model = OpenAIChatModel(model="m", base_url=server.base_url, max_retries=1, form_cache={},
                                sleep=_no_wait)  # fmt: skip
        progress = Recorded()
        result = await research(QUERY, settings=settings_for(tmp_path), model=model, providers=[DocsProvider(tmp_path)],
                                lessons=LessonSelection.none, progress=progress)  # fmt: skip
        await model.aclose()
    assert result.final_decision == "proceed" and result.report_path.is_file()
    (note,) = progress.notes
    assert note.startswith(f"model endpoint {base_url} gave an unreadable answer for stage skeptic: the answer "
                           "is HTML, not a chat completion")  # fmt: skip
    assert "so this report has no adversarial findings" in result.report_markdown


def test_a_run_that_reads_no_answer_at_all_fails_at_the_endpoint_and_writes_nothing(tmp_path, corpus) -> None:
    kind = "nochoices"
    reports = tmp_path / "reports"
    config = tmp_path / "config.toml"
    config.write_text("llm_max_retries = 0\n", encoding="utf-8")  # no backoff waits: every answer is unreadable
    with FakeOpenAIServer(ResearchResponder(), faults=Faults(always={"*": kind})) as server:
        proc = cli(tmp_path, "run", QUERY, "--corpus", str(corpus), "--reports-dir", str(reports), "--no-critique",
                   base_url=server.base_url, env={"RESEARCH_AGENT_CONFIG": str(config)})
    assert proc.returncode == 3, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith("error: no answer of the model endpoint could be read in this run: ")
    assert "gave an unreadable answer" in errors[0] and "Traceback" not in proc.stderr
    assert not list(reports.glob("*.md")) and not list((reports / "meta").glob("run-*.yaml"))
    assert "could not find sources" not in proc.stderr


async def _no_wait(seconds: float) -> None:
    return None


@pytest.mark.parametrize("kind", ["nullcontent", "html", "vendor", "brace", "empty"])
async def test_no_readable_answer_in_a_run_is_an_endpoint_failure_not_a_report(tmp_path, kind: str) -> None:
    with FakeOpenAIServer(ResearchResponder(), faults=Faults(always={"*": kind})) as server:
        model = OpenAIChatModel(model="m", base_url=server.base_url, max_retries=0, form_cache={})
        with pytest.raises(LLMUnavailable, match="no answer of the model endpoint could be read in this run: "):
            await research(QUERY, settings=settings_for(tmp_path), model=model, providers=[DocsProvider(tmp_path)],
                           lessons=LessonSelection.none)  # fmt: skip
        await model.aclose()
        stages = [r.stage for r in server.requests]
    assert stages.count("decompose") == 1, stages  # no replan: another plan cannot help
    assert not list((tmp_path / "reports").glob("*.md"))
