"""Prompts fitted to the server's context window (issue 32 point 5): the window learned where servers
say it, every writer prompt plus its answer budgeted to it (sources' passages cut first), and a
refusal for size asked again once, smaller, never the same request twice."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from research_agent.errors import ContextExceeded
from research_agent.llm import ChatModel, ChatRequest, ChatResponse
from research_agent.llm.budget import ContextBudget, prompt_estimate
from research_agent.llm.client.window import Windows, ask_window, refusal, window_questions
from research_agent.sources import Source
from research_agent.stages.writing.draft_text import ReportDraft
from research_agent.stages.writing.synthesize import draft_report, revise_report
from tests.support.llm import completion, make_model

PASSAGE = " ".join(f"Vacuum reclaims page {n} of the table so that new rows can use it." for n in range(50))  # ~800 tokens
SOURCES = tuple(Source(f"/docs/{n}.md", f"Doc {n}", f"/docs/{n}.md", f"/docs/{n}.md", PASSAGE, "local")
                for n in range(1, 13))  # fmt: skip
ANSWER = "## Summary\n\nVacuum reclaims the space of dead tuples in place [1].\n\n## Key Findings\n\n- It runs often [2]."
LLAMA_CPP_PYTHON = "Requested tokens (9467) exceed context window of 8192"
OPENAI_STYLE = ("This model's maximum context length is 8192 tokens. However, you requested 11251 tokens "
                "(11231 in the messages, 20 in the completion). Please reduce the length of the messages or completion.")
LLAMA_CPP = "the request exceeds the available context size, try increasing it"


# --- where servers say it -----------------------------------------------------------------------


def _said(where: str, data) -> tuple[int, bool] | None:
    question = next(q for q in window_questions("http://127.0.0.1:8080/v1", "smollm2") if q.where == where)
    return question.read(data)


def test_each_server_says_its_window_in_its_own_place() -> None:
    assert [q.url for q in window_questions("http://127.0.0.1:8080/v1", "m")] == [
        "http://127.0.0.1:8080/props", "http://127.0.0.1:8080/slots", "http://127.0.0.1:8080/v1/models",
        "http://127.0.0.1:8080/api/show",
    ]  # fmt: skip
    assert _said("llama.cpp /props", {"default_generation_settings": {"n_ctx": 8192}}) == (8192, True)
    assert _said("llama.cpp /slots", [{"id": 0, "n_ctx": 4096}, {"id": 1, "n_ctx": 4096}]) == (4096, True)
    assert _said("/models max_model_len", {"data": [{"id": "smollm2", "max_model_len": 32768}]}) == (32768, True)
    show = {"model_info": {"llama.context_length": 131072}, "parameters": "stop <|im_end|>\nnum_ctx 16384"}
    assert _said("Ollama /api/show", show) == (16384, True)
    # no num_ctx: Ollama runs the model in its default 4,096 tokens, whatever the model could take
    assert _said("Ollama /api/show", {"model_info": {"llama.context_length": 131072}}) == (4096, False)
    assert _said("llama.cpp /props", {"default_generation_settings": {"n_ctx": True}}) is None
    assert _said("llama.cpp /props", ["not", "props"]) is None


async def test_the_setting_serves_where_the_server_says_nothing_and_caps_what_it_says() -> None:
    async def says(window):
        async def ask(model):
            return window

        return ask

    assert (await Windows(None, await says(None)).budget("m")) is None
    assert (await Windows(6000, await says(None)).budget("m")).window == 6000
    assert (await Windows(None, await says(ContextBudget(8192, "llama.cpp /props"))).budget("m")).window == 8192
    assert (await Windows(6000, await says(ContextBudget(8192, "llama.cpp /props"))).budget("m")).window == 6000
    guessed = ContextBudget(4096, "Ollama /api/show (guessed)")
    assert (await Windows(32768, await says(guessed)).budget("m")).window == 32768  # a guess yields to the setting


def test_a_refusal_for_size_says_the_window_and_the_prompt_when_the_server_does() -> None:
    assert refusal(500, LLAMA_CPP_PYTHON) == refusal(400, LLAMA_CPP_PYTHON)
    assert (refusal(400, LLAMA_CPP_PYTHON).window, refusal(400, LLAMA_CPP_PYTHON).prompt_tokens) == (8192, 9467)
    assert (refusal(400, OPENAI_STYLE).window, refusal(400, OPENAI_STYLE).prompt_tokens) == (8192, 11231)
    said = refusal(400, LLAMA_CPP, {"message": LLAMA_CPP, "n_ctx": 4096, "n_prompt_tokens": 5000})
    assert (said.window, said.prompt_tokens) == (4096, 5000)
    assert refusal(400, "invalid temperature") is None and refusal(503, LLAMA_CPP_PYTHON) is None


# --- prompts budgeted to the window -------------------------------------------------------------


class Writer(ChatModel):
    """A writer with a known window that records what it is asked."""

    def __init__(self, window: int | None, answers=None) -> None:
        self.window = window
        self.requests: list[ChatRequest] = []
        self.answers = list(answers or [])

    async def context_budget(self):
        return ContextBudget(self.window, "test") if self.window else None

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        answer = self.answers.pop(0) if self.answers else ANSWER
        if isinstance(answer, Exception):
            raise answer
        return ChatResponse(data=None, text=answer, model="writer")


def _size(request: ChatRequest) -> int:
    return prompt_estimate([request.system, request.user])


async def test_a_draft_prompt_is_budgeted_to_a_small_window_its_passages_cut_first() -> None:
    unbounded, small = Writer(None), Writer(6000)
    await draft_report(unbounded, "How does vacuum work?", SOURCES, target_words=1200, source_tokens=450)
    await draft_report(small, "How does vacuum work?", SOURCES, target_words=1200, source_tokens=450)
    (whole,), (fitted,) = unbounded.requests, small.requests
    budget = ContextBudget(6000)
    assert _size(whole) > budget.prompt_room(whole.max_tokens)  # 12 sources x 450 tokens would not fit
    assert _size(fitted) <= budget.prompt_room(fitted.max_tokens) and fitted.max_tokens == whole.max_tokens == 2640
    assert _size(fitted) >= 0.9 * budget.prompt_room(fitted.max_tokens)  # cut no more than it had to
    assert fitted.system == whole.system and fitted.user.count("<<<DATA") == 12  # every source, shorter


async def test_revise_cuts_the_passages_then_the_feedback_then_the_answer() -> None:
    draft = ReportDraft("Vacuum reclaims the space of dead tuples in place [1]. " * 60, ("It runs often [2].",), (), ())
    feedback = "- [critical] an unsupported claim: cite it or remove it\n" * 400  # ~5,800 tokens, capped at 12,000 chars
    sizes = {}
    for window in (16000, 11000, 4096):  # revise's prompt starts as the draft's did: every source's passages
        writer = Writer(window, [ANSWER])
        await revise_report(writer, "How does vacuum work?", draft, feedback, SOURCES, target_words=1200,
                            source_tokens=450)  # fmt: skip
        (request,) = writer.requests
        sizes[window] = (request.user.count("cite it or remove it"), len(request.user.split("Sources:")[1]),
                         request.max_tokens)  # fmt: skip
        assert _size(request) <= ContextBudget(window).prompt_room(request.max_tokens) or window == 4096
    assert sizes[16000][0] == sizes[11000][0] > sizes[4096][0]  # the feedback is cut only after the passages
    assert sizes[16000][1] > sizes[11000][1] > sizes[4096][1]
    assert sizes[4096][2] < sizes[11000][2]  # last of all, the answer's length


# --- a refusal for size -------------------------------------------------------------------------


def _refusing(times: int, counted: int | None = None):
    """An endpoint that refuses the first ``times`` requests as llama.cpp does (4,096 tokens), then answers;
    it counts a prompt's tokens as ``counted``, else at 3 characters a token."""
    bodies: list[dict] = []

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        bodies.append(body)
        if len(bodies) <= times:
            prompt = counted or sum(len(m["content"]) for m in body["messages"]) // 3  # more than our estimate
            error = {"code": 400, "message": LLAMA_CPP, "type": "exceed_context_size_error",
                     "n_prompt_tokens": prompt, "n_ctx": 4096}  # fmt: skip
            return httpx.Response(400, json={"error": error})
        return completion(ANSWER)

    return handler, bodies


async def test_an_exceeded_context_is_asked_again_once_smaller_and_says_so() -> None:
    handler, bodies = _refusing(1)
    model, _ = make_model(handler, timeout=60.0)
    heard: list[str] = []
    draft = await draft_report(model, "How does vacuum work?", SOURCES, target_words=1200, source_tokens=450,
                               notify=heard.append)  # fmt: skip
    await model.aclose()
    assert draft.key_findings == ("It runs often [2].",)
    first, second = (prompt_estimate([m["content"] for m in b["messages"]]) for b in bodies)
    assert len(bodies) == 2 and second < first  # never the same request twice
    refused_at = sum(len(m["content"]) for m in bodies[0]["messages"]) // 3
    # the second prompt fits what the server counted: its tokens per estimated token, applied
    assert second * refused_at / first + bodies[1]["max_tokens"] <= 4096
    (said,) = heard
    assert said.startswith(f"the draft prompt ({refused_at:,} tokens) and its answer do not fit the model's context "
                           "window of 4,096 tokens: asked once more with the sources' passages cut to ")  # fmt: skip


async def test_a_second_refusal_for_size_is_the_stage_error_and_says_what_was_tried() -> None:
    handler, bodies = _refusing(10, counted=5000)  # its tokenizer counts far more than the estimate learns
    model, _ = make_model(handler, timeout=60.0)
    with pytest.raises(ContextExceeded) as caught:
        await draft_report(model, "How does vacuum work?", SOURCES, target_words=1200, source_tokens=450)
    await model.aclose()
    assert len(bodies) == 2
    assert "do not fit the model's context window of 4,096 tokens, even with the sources' passages cut to" in str(
        caught.value)  # fmt: skip


async def test_a_prompt_that_fits_without_its_answer_is_asked_again_with_a_shorter_answer() -> None:
    bodies: list[dict] = []

    def handler(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        if len(bodies) == 1:
            return httpx.Response(400, json={"error": {"message": OPENAI_STYLE.replace("11231", "7000")}})
        return completion('{"ok": true}')

    model, _ = make_model(handler, timeout=60.0)
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    response = await model.complete(ChatRequest(stage="skeptic", system="s", user="u", schema=schema, max_tokens=4000))
    await model.aclose()
    assert response.data == {"ok": True} and response.usage.retries == 1
    assert [b["max_tokens"] for b in bodies] == [4000, bodies[1]["max_tokens"]] and bodies[1]["max_tokens"] < 1200


# --- asked at once (issue 37) ----------------------------------------


async def test_every_place_is_asked_at_once_and_the_first_in_order_wins() -> None:
    asked: list[str] = []
    all_asked = asyncio.Event()

    async def server(request: httpx.Request) -> httpx.Response:
        asked.append(request.url.path)
        if len(asked) == 4:
            all_asked.set()
        if request.url.path == "/props":  # answers only once every other place has been asked
            await all_asked.wait()
            return httpx.Response(200, json={"default_generation_settings": {"n_ctx": 8192}})
        if request.url.path == "/slots":
            return httpx.Response(200, json=[{"id": 0, "n_ctx": 4096}])
        return httpx.Response(404)

    async with httpx.AsyncClient(transport=httpx.MockTransport(server)) as http, asyncio.timeout(30):
        said = await ask_window(http, "http://127.0.0.1:8080/v1", "smollm2", {}, 5.0)
    assert said == ContextBudget(8192, "llama.cpp /props"), "the first place in order wins, not the first to answer"
    assert sorted(asked) == ["/api/show", "/props", "/slots", "/v1/models"]
