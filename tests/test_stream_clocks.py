"""A streamed answer's ends and clocks (issue 31 point 3, issue 32 point 6), and model text read as
text (issue 31 point 2), through the real openai client over an httpx.MockTransport. Time moves only
when a test moves it; an event that is never set stands in for a connection the server holds open."""

from __future__ import annotations

import asyncio
import json

import pytest

from research_agent.errors import LLMTimeout
from research_agent.llm import ChatRequest, UsageRecorder
from research_agent.stages.writing.writer import ask_writer
from tests.support.llm import completion, make_model
from tests.support.streams import (
    ManualTicker,
    Streaming,
    content_events,
    event,
    events_then,
    sse,
    usage_event,
)

IDLE = 180.0
HANG_GUARD = 60.0  # a guard against a hang, not a timing
LAST_WITHOUT_NEWLINE = (
    "## Summary\n\nVacuum reclaims the space of dead tuples in place [1].\n\n"
    "## Limitations\n\n- Only the manual was read, not the mailing lists [2]."
)
PROMPT = "Question: how does vacuum work?\n\n" + "Source passage about vacuum and dead tuples. " * 200  # ~2,300 tokens
WRITER = ChatRequest(stage="draft", system="write", user=PROMPT)




def model_for(handler, ticker, **kwargs):
    model, _ = make_model(handler, timeout=IDLE, ticker=ticker, **kwargs)
    return model


async def _settled(task: asyncio.Task, *events: asyncio.Event) -> None:
    """Wait until ``task`` ends or one of ``events`` is set."""
    waiters = {task, *(asyncio.ensure_future(e.wait()) for e in events)}
    async with asyncio.timeout(HANG_GUARD):
        await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)


# --- a finished stream is finished (issue 31 point 3) -------------------------------------------


async def test_a_stop_with_its_usage_ends_the_read_at_once_though_the_server_holds_the_connection() -> None:
    held = asyncio.Event()  # never set: the server keeps the connection open, no [DONE]
    body = lambda: events_then([*content_events(LAST_WITHOUT_NEWLINE), event(None, "stop"),  # noqa: E731
                                usage_event(900, 40)], hold=held, end=[])
    ticker = ManualTicker()
    model = model_for(Streaming(body), ticker)
    draft = await asyncio.wait_for(ask_writer(model, WRITER, idle=IDLE), HANG_GUARD)
    await model.aclose()
    assert ticker.time == 0.0  # the clock never moved: the read ended at the finish
    assert draft.cut == "" and draft.limitations == ("Only the manual was read, not the mailing lists [2].",)


async def test_a_stop_without_usage_waits_seconds_for_it_not_the_idle_limit_and_keeps_the_last_paragraph() -> None:
    held, finished = asyncio.Event(), asyncio.Event()
    body = lambda: events_then([*content_events(LAST_WITHOUT_NEWLINE), event(None, "stop")],  # noqa: E731
                               before_end=finished, hold=held, end=[])
    ticker = ManualTicker()
    model = model_for(Streaming(body), ticker)
    task = asyncio.create_task(ask_writer(model, WRITER, idle=IDLE))
    await finished.wait()
    await ticker.advance(2.0)  # the usage event's grace (FINISH_TAIL), not the 180 s idle limit
    await _settled(task)
    assert task.done()
    draft = await task
    await model.aclose()
    assert ticker.time == 2.0
    # the answer ended without a newline after its last paragraph: that paragraph is complete
    assert draft.cut == "" and draft.limitations == ("Only the manual was read, not the mailing lists [2].",)


# --- two clocks: the first token, then the idle limit (issue 32 point 6) -----------------------


async def test_a_slow_first_token_within_its_own_limit_then_a_stall_after_it() -> None:
    first_token, stalled, release = asyncio.Event(), asyncio.Event(), asyncio.Event()

    async def body():
        await release.wait()  # the server reads the prompt: nothing at all comes
        yield sse(event("## Summary\n\nVacuum reclaims the space of dead tuples in place [1].\n\n"))
        first_token.set()
        await asyncio.Event().wait()  # then it stalls, connection held

    ticker = ManualTicker()
    handler = Streaming(body)
    model = model_for(handler, ticker, prompt_rate=10.0)
    heard: list[tuple[int, str]] = []
    task = asyncio.create_task(model.stream(WRITER, lambda n, piece: heard.append((n, piece))))
    await ticker.advance(IDLE + 60, checked=True)  # past the idle limit, but the prompt takes ~230 s to read
    assert not task.done() and heard == [(0, "")]  # "reading the prompt"
    release.set()
    await first_token.wait()
    await ticker.advance(IDLE - 1, checked=True)  # from the first token on: the idle limit
    assert not task.done()
    stalled.set()
    await ticker.advance(1)
    response = await task
    await model.aclose()
    assert response.finish_reason == "stalled" and response.text.startswith("## Summary")
    assert len(handler.requests) == 1


async def test_no_first_token_in_time_is_asked_once_more_and_counted_then_said_plainly() -> None:
    sent = [asyncio.Event(), asyncio.Event()]

    def silent(flag):
        async def body():
            flag.set()
            await asyncio.Event().wait()
            yield b""  # never reached

        return body

    ticker = ManualTicker()
    handler = Streaming(*(silent(flag) for flag in sent))
    model = UsageRecorder(model_for(handler, ticker, prompt_rate=10.0))
    first_limit = IDLE + 2340 / 10.0  # the idle limit plus the prompt's ~2,340 estimated tokens at 10/s
    task = asyncio.create_task(ask_writer(model, WRITER, idle=IDLE))
    for flag in sent:
        await flag.wait()
        await ticker.advance(first_limit - 20, checked=True)
        assert not task.done()
        await ticker.advance(25)
    with pytest.raises(LLMTimeout) as caught:
        await task
    await model.inner.aclose()
    assert "no first token in the time allowed to read the prompt (2 attempts" in str(caught.value)
    assert len(handler.requests) == 2
    assert model.by_stage["draft"].retries == 1  # the writer's second request is counted as a retry


# --- model text is text (issue 31 point 2) ----------------------------------------------------

HOSTILE = "\x00\x07\x1b]0;PWNED\x07\x1b[31m\u202e\x9b2J"


async def test_controls_are_taken_out_of_a_streamed_answer_and_counted() -> None:
    text = f"## Summary\n\nVacuum{HOSTILE} reclaims the space of dead tuples in place [1].\n\n"
    body = lambda: events_then([*content_events(text, size=5), event(None, "stop")])  # noqa: E731
    model = model_for(Streaming(body), ManualTicker())
    response = await model.stream(WRITER)
    await model.aclose()
    assert response.text == "## Summary\n\nVacuum reclaims the space of dead tuples in place [1]."
    assert response.controls_dropped == len("\x00\x07\x1b]0;PWNED\x07\x1b[31m\u202e\x9b2J")


@pytest.mark.parametrize("answer", [
    json.dumps({"reason": f"dead{HOSTILE} tuples"}),  # JSON escapes (\\u001b): they decode into controls
    '{"reason": "dead' + HOSTILE + ' tuples"}',  # raw controls in the answer's text
], ids=["escaped", "raw"])  # fmt: skip
async def test_controls_are_taken_out_of_a_structured_answer_before_it_is_parsed(answer: str) -> None:
    model = UsageRecorder(model_for(lambda request: completion(answer), ManualTicker()))
    schema = {"type": "object", "properties": {"reason": {"type": "string"}}, "required": ["reason"]}
    response = await model.complete(ChatRequest(stage="skeptic", system="judge", user="x", schema=schema))
    await model.inner.aclose()
    assert response.data == {"reason": "dead tuples"} and response.controls_dropped == len(HOSTILE)
    assert model.controls_dropped == len(HOSTILE)


# --- a stream that ends with no event ---------------------------------------------------------


async def test_an_empty_stream_is_asked_once_more_without_streaming() -> None:
    async def nothing():
        return
        yield b""  # an async generator that yields nothing

    whole = "## Summary\n\nVacuum reclaims the space of dead tuples in place [1]."
    handler = Streaming(nothing, completion(whole))
    model = UsageRecorder(model_for(handler, ManualTicker()))
    response = await model.stream(WRITER)
    await model.inner.aclose()
    assert [r.get("stream", False) for r in handler.requests] == [True, False]
    assert response.text == whole and response.quirks == ("empty_stream",) and response.usage.retries == 1
