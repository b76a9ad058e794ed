"""The one layer above every endpoint (issue 47, point 4): an endpoint only sends and returns the
raw answer; CheckedModel reads it, validates it, cuts it to its bounds, runs the request's check,
asks again showing the model its error, and adds up what the attempts spent. What a model can do
beyond answering whole is declared, with defaults, never probed."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from research_agent.errors import InvalidModelOutput, LLMTimeout
from research_agent.llm import (
    ChatEndpoint,
    ChatModel,
    ChatRequest,
    ChatResponse,
    CheckedModel,
    RawResponse,
    Usage,
)
from research_agent.llm.protocol import Turn

SCHEMA = {
    "type": "object",
    "properties": {"reason": {"type": "string", "maxLength": 5}},
    "required": ["reason"],
    "additionalProperties": False,
}
ASKED = ChatRequest(stage="skeptic", system="s", user="u", schema=SCHEMA)
ONE = Usage(prompt_tokens=10, completion_tokens=4, calls=1, cost_usd=0.5)


class Replies(ChatEndpoint):
    """Answers with the texts given, in order (an exception is raised), and keeps what it was sent."""

    def __init__(self, *replies: str | Exception) -> None:
        self.replies = list(replies)
        self.sent: list[tuple[ChatRequest, tuple[Turn, ...]]] = []

    async def send(self, request: ChatRequest, repair: Sequence[Turn] = ()) -> RawResponse:
        self.sent.append((request, tuple(repair)))
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return RawResponse(content=reply, model="m", usage=ONE)


async def test_an_invalid_answer_is_asked_again_with_its_error_and_every_attempt_is_counted() -> None:
    endpoint = Replies("no json here", '{"reason": "dead tuples"}')
    response = await CheckedModel(endpoint).complete(ASKED)

    assert response.data == {"reason": "dead "} and response.notes  # cut to maxLength, and said so
    assert response.usage == Usage(prompt_tokens=20, completion_tokens=8, calls=2, retries=1, cost_usd=1.0)
    first, second = endpoint.sent
    assert first == (ASKED, ()) and second[0] is ASKED
    assert second[1] == (
        {"role": "assistant", "content": "no json here"},
        {"role": "user", "content": "Your previous answer was invalid: not JSON (no JSON object or array found in "
                                    "the answer). Answer again with only JSON matching the schema."},
    )  # fmt: skip


async def test_three_unusable_answers_raise_with_the_last_reason_and_what_they_cost() -> None:
    no = ChatRequest(stage="decompose", system="s", user="u", schema=SCHEMA, check=lambda data: "too short")
    with pytest.raises(InvalidModelOutput) as caught:
        await CheckedModel(Replies(*['{"reason": "x"}'] * 3)).complete(no)
    assert str(caught.value) == "the decompose stage got invalid output from model m after 3 attempts: too short"
    assert caught.value.usage == Usage(prompt_tokens=30, completion_tokens=12, calls=3, retries=2, cost_usd=1.5)


async def test_an_endpoint_failure_after_an_attempt_carries_what_the_earlier_attempts_spent() -> None:
    late = LLMTimeout("timed out")
    late.usage = Usage(retries=1)  # what the failing send itself spent
    with pytest.raises(LLMTimeout) as caught:
        await CheckedModel(Replies("nothing", late)).complete(ASKED)
    assert caught.value.usage == Usage(prompt_tokens=10, completion_tokens=4, calls=1, retries=2, cost_usd=0.5)

    first = LLMTimeout("timed out at once")
    with pytest.raises(LLMTimeout) as caught:
        await CheckedModel(Replies(first)).complete(ASKED)
    assert caught.value.usage is None  # nothing was spent before it: the endpoint's own word stands


async def test_control_characters_and_reasoning_never_reach_the_stage() -> None:
    plain = ChatRequest(stage="draft", system="s", user="u")
    response = await CheckedModel(Replies("<think>hm</think>\x1b[31mThe answer.\x07")).complete(plain)
    assert response.text == "The answer." and response.controls_dropped == len("\x1b[31m\x07")
    with pytest.raises(InvalidModelOutput, match="the answer was empty"):
        await CheckedModel(Replies("", "<think>cut off", "   ")).complete(plain)


async def test_an_endpoint_that_does_not_stream_answers_a_stream_whole_and_checked() -> None:
    endpoint = Replies("", "Whole.")
    heard: list[tuple[int, str]] = []
    model = CheckedModel(endpoint)
    response = await model.stream(ChatRequest(stage="draft", system="s", user="u"), lambda n, piece: heard.append((n, piece)))
    assert response.text == "Whole." and response.usage.calls == 2 and not heard
    assert await model.context_budget() is None  # declared defaults: no window known, nothing to close
    await model.aclose()


async def test_a_model_declares_what_it_leaves_out() -> None:
    class OnlyComplete(ChatModel):
        async def complete(self, request: ChatRequest) -> ChatResponse:
            return ChatResponse(data=None, text="whole", model="m")

    model = OnlyComplete()
    assert (await model.stream(ChatRequest(stage="draft", system="s", user="u"))).text == "whole"
    assert await model.context_budget() is None
    await model.aclose()


async def test_a_script_that_drifts_from_the_schema_fails_loudly_and_says_why() -> None:
    from tests.conftest import ScriptedModel

    model = ScriptedModel().enqueue("skeptic", {"reason": 3})
    with pytest.raises(AssertionError, match=r"nothing scripted\); asked again after: .*invalid: at /reason: 3 is not"):
        await model.complete(ASKED)
    assert len(model.calls("skeptic")) == 1  # one request, however many attempts
