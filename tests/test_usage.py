"""Honest accounting (issue 9, parts 4 and 6b) and the wait shown on the progress line (issue 10).

Every call that returned usage is counted, failed validation included, and the run
record's tokens match what the endpoint reported. An unknown price is unknown (null),
never $0. While a model call is in flight the progress line says how long it has waited;
the clock and the ticks are injected, so nothing here depends on wall-clock time.
"""

from __future__ import annotations

import asyncio
import io

import pytest
from rich.console import Console

from research_agent.cli.progress import RichProgress, cost_text, waiting_text
from research_agent.errors import LLMTimeout
from research_agent.llm import ChatModel, ChatRequest, ChatResponse, OpenAIChatModel
from research_agent.llm.usage import Usage, UsageRecorder, total_cost
from research_agent.llm.waiting import report_waits
from research_agent.memory.lessons.select import LessonSelection
from research_agent.pipeline import research
from research_agent.progress import TokenMeter, stream_text
from tests.support.fake_openai_server import FakeOpenAIServer, Faults
from tests.support.pipeline import QUERY, DocsProvider, Recorded, queue, settings_for
from tests.support.research_responder import ResearchResponder
from tests.support.streams import ManualTicker

HANG_GUARD = 30.0


async def run_against(server: FakeOpenAIServer, tmp_path, *, model: str, fast_model: str = ""):
    chat = OpenAIChatModel(model=model, fast_model=fast_model, base_url=server.base_url, timeout=30,
                           max_retries=2, form_cache={})
    try:
        return await research(QUERY, settings=settings_for(tmp_path, model=model), model=chat,
                              providers=[DocsProvider(tmp_path)], lessons=lambda d: LessonSelection.none(d))
    finally:
        await chat.aclose()


# --- every answered call counts -------------------------------------------------------------------


async def test_the_run_record_counts_every_answered_call_and_matches_the_endpoints_tokens(tmp_path) -> None:
    # Half the relevance answers are broken (truncated JSON or the wrong shape): they cost tokens too.
    faults = Faults(rate=0.5, mix=("badschema", "truncate"), seed=1, stages=frozenset({"relevance"}))  # seed: 2 broken in a row
    with FakeOpenAIServer(ResearchResponder(), faults=faults) as server:
        result = await run_against(server, tmp_path, model="gpt-4o-mini")
        answered = [r for r in server.requests if r.ok]
    broken = [r for r in answered if r.fault in ("badschema", "truncate")]
    assert len(broken) >= 2, "the seed must break some relevance answers for this test to mean anything"
    usage = result.record["usage"]
    assert "total" not in usage
    for stage in {r.stage for r in answered}:
        mine = [r for r in answered if r.stage == stage]
        assert usage[stage]["calls"] == len(mine), stage
        assert usage[stage]["prompt_tokens"] == sum(r.prompt_tokens for r in mine), stage
        assert usage[stage]["completion_tokens"] == sum(r.completion_tokens for r in mine), stage
    unscored = [s for s in result.sources if s.status == "unscored"]  # three broken answers in a row
    assert usage["relevance"]["retries"] == len(broken) - len(unscored)  # every other one was asked again
    total = result.total_usage
    assert total.prompt_tokens == sum(r.prompt_tokens for r in answered)
    assert total.completion_tokens == sum(r.completion_tokens for r in answered)
    expected = (total.prompt_tokens * 0.15 + total.completion_tokens * 0.60) / 1_000_000
    assert result.record["cost_usd"] == pytest.approx(expected, abs=1e-6)


async def test_a_stage_that_degraded_still_counts_what_it_spent(tmp_path, scripted_model) -> None:
    from tests.conftest import INVALID

    queue(scripted_model, ResearchResponder(), skeptic=[INVALID] * 3)
    result = await research(QUERY, settings=settings_for(tmp_path), model=scripted_model,
                            providers=[DocsProvider(tmp_path)], lessons=lambda d: LessonSelection.none(d))
    skeptic = result.usage["skeptic"]
    assert skeptic.calls == 3 and skeptic.completion_tokens == 150 and skeptic.prompt_tokens > 0


async def test_the_recorder_counts_a_failed_call_and_passes_the_error_on() -> None:
    class Failing(ChatModel):
        async def complete(self, request: ChatRequest) -> ChatResponse:
            error = LLMTimeout("timed out")
            error.usage = Usage(100, 20, calls=1, retries=2, cost_usd=None)
            raise error

    class Refused(ChatModel):
        async def complete(self, request: ChatRequest) -> ChatResponse:
            raise LLMTimeout("nothing came back")  # no usage: nothing to count

    recorder = UsageRecorder(Failing())
    with pytest.raises(LLMTimeout):
        await recorder.complete(ChatRequest(stage="draft", system="", user="u"))
    assert recorder.by_stage == {"draft": Usage(100, 20, 1, 2, None)}
    refused = UsageRecorder(Refused())
    with pytest.raises(LLMTimeout):
        await refused.complete(ChatRequest(stage="draft", system="", user="u"))
    assert refused.by_stage == {}


# --- an unknown price is unknown --------------------------------------------------------------------


def test_unknown_cost_stays_unknown_in_every_sum() -> None:
    known, unknown = Usage(10, 5, 1, 0, 0.25), Usage(10, 5, 1, 0, None)
    assert (known + known).cost_usd == 0.5
    assert (known + unknown).cost_usd is None and (unknown + known).cost_usd is None
    assert (known + unknown).as_dict() == {"prompt_tokens": 20, "completion_tokens": 10, "calls": 2,
                                           "retries": 0, "cost_usd": None}
    assert total_cost({"a": known, "b": unknown}) is None and total_cost({"a": known}) == 0.25
    assert cost_text(None) == "cost unknown" and cost_text(0.0123456) == "~$0.0123" and cost_text(0.0) == "~$0.0000"


async def test_a_local_model_run_records_null_cost_per_stage_and_in_total(tmp_path) -> None:
    with FakeOpenAIServer(ResearchResponder()) as server:
        result = await run_against(server, tmp_path, model="llama-3.2-local")
    assert result.cost_usd is None and result.record["cost_usd"] is None
    assert all(stage["cost_usd"] is None for stage in result.record["usage"].values())
    assert result.summary()["cost_usd"] is None


async def test_a_known_main_model_with_an_unknown_fast_model_has_an_unknown_total(tmp_path) -> None:
    with FakeOpenAIServer(ResearchResponder()) as server:
        result = await run_against(server, tmp_path, model="gpt-4o-mini", fast_model="qwen2.5:0.5b")
    usage = result.record["usage"]
    assert usage["draft"]["cost_usd"] > 0  # the main model's stages are priced
    assert usage["relevance"]["cost_usd"] is None  # the fast tier
    assert usage["decompose"]["cost_usd"] > 0  # the first plan also names the domain, on the main model
    assert result.record["cost_usd"] is None and result.summary()["cost_usd"] is None


# --- how long the run has waited ----------------------------------------------------------------------


class Held(ChatModel):
    """Wraps a ChatModel; a call of ``stage`` waits (after ``entered`` is set) until ``release``."""

    def __init__(self, inner, stage: str) -> None:
        self.inner, self.stage = inner, stage
        self.entered, self.release = asyncio.Event(), asyncio.Event()

    async def complete(self, request: ChatRequest) -> ChatResponse:
        if request.stage == self.stage:
            self.entered.set()
            await self.release.wait()
        return await self.inner.complete(request)


class Watching(Recorded):
    """A Progress that wakes the test when a given ``waiting`` value arrives."""

    def __init__(self, want: int) -> None:
        super().__init__()
        self.want, self.seen = want, asyncio.Event()

    def counts(self, **values: int) -> None:
        super().counts(**values)
        if values.get("waiting") == self.want:
            self.seen.set()


def test_the_progress_line_says_how_long_it_has_waited() -> None:
    assert waiting_text(45) == "waiting for the model, 45 s" and waiting_text(0) == ""
    terminal = RichProgress(Console(file=io.StringIO(), force_terminal=True))
    terminal.stage("draft", "6 sources")
    terminal.counts(tokens=1234, waiting=45)
    assert terminal._line() == "draft: 6 sources · tokens 1,234 · waiting for the model, 45 s"
    terminal.counts(waiting=0)
    assert terminal._line() == "draft: 6 sources · tokens 1,234"
    terminal.stop()


def test_without_a_terminal_a_long_wait_is_printed_every_thirty_seconds() -> None:
    out = io.StringIO()
    plain = RichProgress(Console(file=out, force_terminal=False, width=200))
    plain.stage("draft")
    for seconds in (1, 29, 30, 31, 59, 61, 0, 12, 30):
        plain.counts(waiting=seconds)
    lines = out.getvalue().splitlines()
    assert lines == ["… draft", "… draft: waiting for the model, 30 s", "… draft: waiting for the model, 61 s",
                     "… draft: waiting for the model, 30 s"]


def test_while_the_writer_streams_the_line_shows_its_tokens_and_rate() -> None:
    assert stream_text(812, 84_583) == "812 tokens, 9.6 tok/s" and stream_text(3, 200) == "3 tokens"
    terminal = RichProgress(Console(file=io.StringIO(), force_terminal=True))
    terminal.stage("draft", "6 sources")
    terminal.counts(waiting=45, streamed=812, streamed_ms=84_583)
    assert terminal._line() == "draft: 6 sources · 812 tokens, 9.6 tok/s"
    terminal.counts(streamed=0)
    assert terminal._line() == "draft: 6 sources · waiting for the model, 45 s"
    terminal.stop()
    out = io.StringIO()
    plain = RichProgress(Console(file=out, force_terminal=False, width=200))
    plain.stage("draft")
    for tokens in (1, 50, 400):
        plain.counts(streamed=tokens, streamed_ms=tokens * 100)
    plain.counts(waiting=30)  # the thirty-second line shows the stream, not the wait
    plain.counts(streamed=0, streamed_ms=40_000)
    assert out.getvalue().splitlines() == ["… draft", "… draft: 400 tokens, 10.0 tok/s", "… draft: 400 tokens, 10.0 tok/s"]


def test_the_token_meter_rates_from_the_first_token_and_starts_again_on_a_new_stream() -> None:
    progress, clock = Recorded(), {"now": 100.0}
    meter = TokenMeter(progress, lambda: clock["now"])
    meter(1, "Vac")
    clock["now"] = 110.0
    meter(96, "uum")
    assert progress.values[-1] == {"streamed": 96, "streamed_ms": 10_000} and meter.rate == 9.6
    meter(90, "")  # the endpoint's own count at the end: a correction, not a new stream
    assert progress.values[-1] == {"streamed": 90, "streamed_ms": 10_000}
    meter(1, "Vac")  # the writer asked again: a new stream
    assert progress.values[-1] == {"streamed": 1, "streamed_ms": 0}
    meter.finish()
    assert progress.values[-1] == {"streamed": 0, "streamed_ms": 0}
    meter(0)  # a request sent, no token yet: the server reads the prompt
    assert progress.values[-1] == {"streamed": 0, "reading": 1}
    meter(1)
    assert progress.values[-1] == {"streamed": 1, "streamed_ms": 0, "reading": 0}


async def test_report_waits_shows_the_oldest_call_in_flight_at_each_tick() -> None:
    ticker = ManualTicker(1000.0)
    held = Held(_Answer(), "draft")
    recorder = UsageRecorder(held, clock=ticker.now)
    progress = Watching(want=45)
    reporter = asyncio.create_task(report_waits(recorder, progress, ticker))
    call = asyncio.create_task(recorder.complete(ChatRequest(stage="draft", system="", user="u")))
    await asyncio.wait_for(held.entered.wait(), HANG_GUARD)
    ticker.time += 45
    ticker.step()
    await asyncio.wait_for(progress.seen.wait(), HANG_GUARD)
    held.release.set()
    await asyncio.wait_for(call, HANG_GUARD)
    assert recorder.waited() == 0.0
    progress.want, progress.seen = 0, asyncio.Event()
    ticker.step()
    await asyncio.wait_for(progress.seen.wait(), HANG_GUARD)
    reporter.cancel()
    assert [v["waiting"] for v in progress.values] == [45, 0]


async def test_a_run_reports_its_wait_for_a_slow_draft_through_progress(tmp_path, scripted_model) -> None:
    queue(scripted_model, ResearchResponder())
    ticker = ManualTicker(1000.0)
    held = Held(scripted_model, "draft")
    progress = Watching(want=125)
    task = asyncio.create_task(research(
        QUERY, settings=settings_for(tmp_path), model=held, providers=[DocsProvider(tmp_path)],
        lessons=lambda d: LessonSelection.none(d), progress=progress, ticker=ticker,
    ))
    await asyncio.wait_for(held.entered.wait(), HANG_GUARD)
    ticker.time += 125
    ticker.step()
    await asyncio.wait_for(progress.seen.wait(), HANG_GUARD)
    held.release.set()
    result = await asyncio.wait_for(task, HANG_GUARD)
    assert result.final_decision == "proceed"
    waits = [v["waiting"] for v in progress.values if "waiting" in v]
    assert waits == [125, 0]  # the draft's wait, then cleared when the run ended


class _Answer(ChatModel):
    async def complete(self, request: ChatRequest) -> ChatResponse:
        return ChatResponse(data=None, text="ok", model="m", usage=Usage(1, 1, 1))
