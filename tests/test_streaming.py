"""The writer's answer, streamed: token progress, an idle limit (not a total one), and what a cut
or stalled stream keeps (issue 19, points 1, 2, 3, 5 and 7). The endpoint is an
httpx.MockTransport under the real openai client; time moves only when the test moves it."""

from __future__ import annotations

import asyncio
import io
import json

import pytest
from rich.console import Console

from research_agent.cli.progress import RichProgress
from research_agent.errors import LLMTimeout
from research_agent.llm import ChatRequest, UsageRecorder
from research_agent.progress import TokenMeter
from research_agent.stages.writing.writer import ask_writer
from tests.support.llm import completion, make_model
from tests.support.streams import (
    DONE,
    ManualTicker,
    Streaming,
    content_events,
    event,
    events_then,
    usage_event,
)

IDLE = 180.0
HANG_GUARD = 60.0
TWO_PARAGRAPHS = (
    "## Summary\n\nVacuum reclaims the space of dead tuples in place [1].\n\n"
    "## Key Findings\n\n- Autovacuum runs vacuum when enough rows changed [2].\n\n"
)
WRITER = ChatRequest(stage="draft", system="write", user="Question: q")




def streaming_model(handler, ticker):
    model, _ = make_model(handler, timeout=IDLE, ticker=ticker)
    return model


async def test_progress_hears_rising_token_counts_before_the_last_chunk_is_released() -> None:
    ticker, heard, release = ManualTicker(), asyncio.Event(), asyncio.Event()
    events = content_events("Vacuum reclaims space.", size=8)  # three chunks
    handler = Streaming(lambda: events_then(events, hold=release,
                                            end=[*map(_sse, [event(None, "stop"), usage_event(40, 7)]), DONE]))
    model = streaming_model(handler, ticker)
    counts: list[tuple[int, str]] = []

    def on_tokens(n: int, piece: str) -> None:
        counts.append((n, piece))
        if piece == "space.":
            heard.set()

    task = asyncio.create_task(model.stream(WRITER, on_tokens))
    async with asyncio.timeout(HANG_GUARD):  # a guard against a hang, not a timing
        await asyncio.wait({task, asyncio.ensure_future(heard.wait())}, return_when=asyncio.FIRST_COMPLETED)
    # (0, "") first: the request was sent and the server reads the prompt ("reading the prompt"); then
    # at least one a chunk, and at least the text's estimate (four characters a token)
    assert counts == [(0, ""), (2, "Vacuum r"), (4, "eclaims "), (6, "space.")] and not task.done()  # the end held back
    release.set()
    response = await task
    assert counts[4:] == [(7, "")]  # the endpoint's own count, from the usage-only chunk
    await model.aclose()
    assert response.text == "Vacuum reclaims space." and response.finish_reason == "stop"
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (40, 7)  # from the usage-only chunk
    body = handler.requests[0]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}


async def test_a_stall_after_two_paragraphs_keeps_them_with_no_retry() -> None:
    ticker, stalled = ManualTicker(), asyncio.Event()
    arrived = TWO_PARAGRAPHS + "## How it works\n\nThe visibility map lets vacuum skip pa"
    handler = Streaming(lambda: events_then(content_events(arrived), before_end=stalled, hold=asyncio.Event()))
    model = streaming_model(handler, ticker)
    task = asyncio.create_task(ask_writer(model, WRITER, idle=IDLE))
    await stalled.wait()
    await ticker.advance(IDLE - 1, checked=True)  # idle, but not for long enough yet
    assert not task.done()
    await ticker.advance(1)
    draft = await task
    await model.aclose()
    assert len(handler.requests) == 1  # usable paragraphs had arrived: no retry
    assert draft.cut == "stalled"
    assert draft.executive_summary == "Vacuum reclaims the space of dead tuples in place [1]."
    assert draft.key_findings == ("Autovacuum runs vacuum when enough rows changed [2].",)
    assert draft.sections == ()  # the paragraph that stalled midway is left out


async def test_a_stall_before_anything_usable_is_asked_once_more_then_times_out() -> None:
    ticker = ManualTicker()
    stalls = [asyncio.Event(), asyncio.Event()]
    handler = Streaming(*(lambda s=s: events_then([event("## Summ")], before_end=s, hold=asyncio.Event())
                          for s in stalls))  # fmt: skip
    model = streaming_model(handler, ticker)
    task = asyncio.create_task(ask_writer(model, WRITER, idle=IDLE))
    for stall in stalls:
        await stall.wait()
        await ticker.advance(IDLE)
    with pytest.raises(LLMTimeout) as caught:
        await task
    await model.aclose()
    assert len(handler.requests) == 2
    assert str(caught.value) == (
        "model call for stage draft timed out: no token for 180s before a usable paragraph (2 attempts)"
    )


async def test_a_slow_steady_stream_longer_than_the_idle_limit_in_total_finishes() -> None:
    ticker = ManualTicker()
    pieces = content_events(TWO_PARAGRAPHS, size=20)

    async def slow():
        for piece in pieces:  # each piece comes 100 s after the one before: 100 s idle at most
            yield _sse(piece)
            await ticker.advance(100, checked=True)
        yield _sse(event(None, "stop"))
        yield DONE

    handler = Streaming(slow)
    model = streaming_model(handler, ticker)
    response = await model.stream(WRITER)
    await model.aclose()
    assert ticker.time == 100 * len(pieces) > 3 * IDLE  # far longer than the idle limit, in total
    assert response.finish_reason == "stop" and response.text == TWO_PARAGRAPHS.strip()


async def test_a_cut_at_the_token_limit_keeps_the_complete_paragraphs() -> None:
    arrived = TWO_PARAGRAPHS + "## Limitations\n\n- Only the manual was re"
    handler = Streaming(lambda: events_then([*content_events(arrived), event(None, "length")]))
    model = streaming_model(handler, ManualTicker())
    draft = await ask_writer(model, WRITER, idle=IDLE)
    await model.aclose()
    assert draft.cut == "length" and draft.limitations == () and len(draft.key_findings) == 1


async def test_server_quirks_are_named_once_per_run() -> None:
    no_finish = lambda: events_then(content_events(TWO_PARAGRAPHS), end=[])  # noqa: E731 - ends, no finish, no DONE
    thinking = lambda: events_then([event("<think>plan the report</think>"), *content_events(TWO_PARAGRAPHS),  # noqa: E731
                                    event(None, "stop")])
    handler = Streaming(completion(TWO_PARAGRAPHS), completion(TWO_PARAGRAPHS), no_finish, thinking)
    heard: list[str] = []
    model = UsageRecorder(streaming_model(handler, ManualTicker()), on_quirk=heard.append)
    whole = await model.stream(WRITER)
    await model.stream(WRITER)
    broken = await model.stream(WRITER)
    reasoned = await model.stream(WRITER)
    await model.inner.aclose()
    assert whole.finish_reason == "stop" and whole.quirks == ("ignored_stream",)
    assert broken.finish_reason == "unfinished" and broken.quirks == ("no_finish",)
    assert "<think>" not in reasoned.text and reasoned.text.startswith("## Summary")
    assert heard == [
        "the model server ignored stream=true and sent each answer whole: no token progress is shown",
        "the model server ended a stream without a finish reason: the answer may be cut short",
        "the model streamed <think> reasoning before its answer: the reasoning was left out",
    ]


def _sse(payload: dict) -> bytes:
    return f"data: {json.dumps(payload)}\n\n".encode()


LONG_ANSWER = TWO_PARAGRAPHS * 6  # 800 characters or so


@pytest.mark.parametrize(("usage", "expected"), [((900, 171), 171), (None, (len(LONG_ANSWER) + 3) // 4)])
async def test_an_answer_sent_in_one_event_counts_its_tokens_not_its_events(usage, expected) -> None:
    """Issue 33: "draft: 6 sources: 1 tokens" was one event holding the whole answer."""
    end = [_sse(event(None, "stop")), *([_sse(usage_event(*usage))] if usage else []), DONE]
    handler = Streaming(lambda: events_then([event(LONG_ANSWER)], end=end))
    model = streaming_model(handler, ManualTicker())
    ticker = ManualTicker()
    out = io.StringIO()
    progress = RichProgress(Console(file=out, force_terminal=False, width=200))
    meter = TokenMeter(progress, ticker.now)
    progress.stage("draft", "6 sources")
    response = await model.stream(WRITER, meter)
    meter.finish()
    await model.aclose()
    assert response.text == LONG_ANSWER.strip() and meter.tokens == expected
    assert out.getvalue().splitlines()[-1] == f"… draft: 6 sources: {expected} tokens"


@pytest.mark.parametrize("newline", ["\r", "\n", "\r\n"])
async def test_a_stream_with_any_line_end_the_sse_spec_allows_is_read_as_a_stream(newline) -> None:
    """Issue 45: with CR-only line ends the client saw no event and asked again without streaming.
    Each event is cut across writes, a CRLF between two of them; comments and ids are skipped."""
    text = "Vacuum reclaims space in place."
    events = [*content_events(text, size=9), event(None, "stop"), usage_event(30, 8)]
    wire = "".join(f": ping{newline}id: {n}{newline}data: {json.dumps(e)}{newline}{newline}" for n, e in enumerate(events))
    wire = (wire + f"data: [DONE]{newline}{newline}").encode()

    async def chunks():
        for start in range(0, len(wire), 7):
            yield wire[start : start + 7]

    handler = Streaming(chunks)
    model = streaming_model(handler, ManualTicker())
    response = await model.stream(WRITER)
    await model.aclose()
    assert response.text == text and response.finish_reason == "stop" and response.quirks == ()
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (30, 8)
    assert len(handler.requests) == 1 and handler.requests[0]["stream"] is True, "no second request, whole"


async def test_an_event_of_several_data_lines_is_one_payload_joined_with_newlines() -> None:
    payload = json.dumps(event("two lines", "stop"), indent=1).splitlines()
    wire = ("".join(f"data: {line}\r\n" for line in payload) + "\r\ndata: [DONE]\r\n\r\n").encode()

    async def chunks():
        yield wire

    model = streaming_model(Streaming(chunks), ManualTicker())
    response = await model.stream(WRITER)
    await model.aclose()
    assert response.text == "two lines" and response.finish_reason == "stop"
