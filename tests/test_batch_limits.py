"""The limits a batch's runs share on one endpoint, on a clock the tests move: a 429 with
Retry-After pauses every run's next call; requests and tokens per minute are token buckets,
tokens estimated before a call and corrected from its usage after."""

from __future__ import annotations

import asyncio
import json

import httpx

from research_agent.batch.limits import EndpointLimits, LimitedModel, estimate_tokens, limited_http_client
from research_agent.llm import ChatModel, ChatRequest, ChatResponse, Usage
from tests.support.llm import completion, make_model


class Clock:
    """Time that passes only when someone sleeps on it."""

    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds
        await asyncio.sleep(0)


def _request(user: str, max_tokens: int | None = 100) -> ChatRequest:
    return ChatRequest(stage="draft", system="You write.", user=user, max_tokens=max_tokens)


async def test_a_429_with_retry_after_pauses_every_run_s_next_call() -> None:
    clock = Clock()
    limits = EndpointLimits(clock=clock, sleep=clock.sleep)
    sent: list[tuple[str, float]] = []

    def endpoint(request: httpx.Request) -> httpx.Response:
        user = json.loads(request.content)["messages"][-1]["content"]
        sent.append((user, clock.now))
        if user == "run A" and len(sent) == 1:
            return httpx.Response(429, headers={"Retry-After": "7"}, json={"error": {"message": "slow down"}})
        return completion(f"answer to {user}", usage={"prompt_tokens": 10, "completion_tokens": 5})

    http = limited_http_client(limits, transport=httpx.MockTransport(endpoint))
    inner, own_sleeps = make_model(None, http_client=http)  # the client's own retry waits on its own sleep
    model = LimitedModel(inner, limits)
    answer = await model.complete(_request("run A"))
    assert answer.text == "answer to run A" and own_sleeps.calls == [7.0], "run A waited out its own Retry-After"
    assert limits.paused_until == 107.0 and limits.stats.pauses == 1
    b, c = await asyncio.gather(model.complete(_request("run B")), model.complete(_request("run C")))
    assert (b.text, c.text) == ("answer to run B", "answer to run C")
    times = dict(sent[2:])
    assert times["run B"] >= 107.0 and times["run C"] >= 107.0, "the other runs' next calls waited for the pause"
    assert clock.slept == [7.0], "one wait: the second run found the pause over"
    assert limits.stats.requests == 4 and limits.stats.calls == 3
    await model.aclose()


async def test_a_503_without_retry_after_pauses_nobody() -> None:
    clock = Clock()
    limits = EndpointLimits(clock=clock, sleep=clock.sleep)
    replies = iter([httpx.Response(503, json={"error": {"message": "busy"}}), completion("fine")])
    http = limited_http_client(limits, transport=httpx.MockTransport(lambda request: next(replies)))
    inner, _ = make_model(None, http_client=http)
    assert (await LimitedModel(inner, limits).complete(_request("x"))).text == "fine"
    assert limits.stats.pauses == 0 and limits.paused_until <= clock.now


class Counting(ChatModel):
    """A model that answers at once with the usage it is told to report."""

    def __init__(self, usage_tokens: int) -> None:
        self.usage_tokens = usage_tokens
        self.started: list[float] = []
        self.clock: Clock | None = None

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.started.append(self.clock() if self.clock else 0.0)
        return ChatResponse(None, "ok", "m", Usage(self.usage_tokens, 0, calls=1))


async def test_requests_per_minute_are_spaced_evenly_and_never_more_in_any_minute() -> None:
    clock = Clock()
    limits = EndpointLimits(rpm=30, clock=clock, sleep=clock.sleep)
    inner = Counting(10)
    inner.clock = clock
    model = LimitedModel(inner, limits)
    await asyncio.gather(*(model.complete(_request(f"q{n}")) for n in range(10)))
    gaps = [round(b - a, 6) for a, b in zip(inner.started, inner.started[1:], strict=False)]
    assert gaps == [2.0] * 9, "30 a minute: one every 2 s"
    assert all(sum(1 for t in inner.started if start <= t < start + 60) <= 30 for start in inner.started)


async def test_tokens_are_estimated_before_a_call_and_corrected_after_it() -> None:
    clock = Clock()
    limits = EndpointLimits(tpm=6000, clock=clock, sleep=clock.sleep)  # 100 tokens a second, 100 at once
    request = ChatRequest(stage="draft", system="", user="x" * 400, max_tokens=100)  # 100 prompt + 100 answer
    assert estimate_tokens(request) == 200
    small = LimitedModel(Counting(usage_tokens=20), limits)
    await small.complete(request)  # took 200 (a full bucket, then 100 of debt), then 180 given back
    assert clock.slept == [] and round(limits._tokens.level, 6) == 80.0  # type: ignore[union-attr]
    await small.complete(request)  # needs a full bucket: 20 more tokens, 0.2 s
    assert [round(s, 6) for s in clock.slept] == [0.2]
    big = LimitedModel(Counting(usage_tokens=1200), limits)
    await big.complete(request)
    await big.complete(request)  # the first used 1000 more than estimated: paid before the next starts
    assert round(sum(clock.slept), 6) >= 0.2 + 1000 / 100


async def test_a_retried_request_is_charged_to_the_requests_of_the_minute() -> None:
    clock = Clock()
    limits = EndpointLimits(rpm=60, clock=clock, sleep=clock.sleep)
    replies = iter([httpx.Response(500, json={"error": {"message": "oops"}}), completion("a"), completion("b")])
    http = limited_http_client(limits, transport=httpx.MockTransport(lambda request: next(replies)))
    inner, _ = make_model(None, http_client=http)
    model = LimitedModel(inner, limits)
    await model.complete(_request("first"))  # two HTTP requests for one call
    await model.complete(_request("second"))
    assert clock.slept and round(sum(clock.slept), 6) == 2.0, "the retry used the second's turn: it waited 2 s"


