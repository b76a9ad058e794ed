"""The writer's answer bounded by its structure (issue 31 point 1), published in any form (issue 32
point 1), and asked again shorter once after a cut (issue 32 point 2). The endpoint is an
httpx.MockTransport under the real openai client (or the OpenAI-compatible server on 127.0.0.1 for a
whole run); counts, never timings."""

from __future__ import annotations

import httpx

from research_agent.llm import ChatModel, ChatRequest, ChatResponse, OpenAIChatModel, UsageRecorder
from research_agent.memory.lessons.select import LessonSelection
from research_agent.pipeline import research
from research_agent.stages.writing.draft_text import DraftBound, DraftLimits, complete_sentences
from research_agent.stages.writing.writer import ask_writer, kept_part
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.llm import make_model
from tests.support.pipeline import QUERY, DocsProvider, settings_for
from tests.support.research_responder import ResearchResponder
from tests.support.streams import (
    ManualTicker,
    Streaming,
    content_events,
    event,
    events_then,
    sse,
)

WRITER = ChatRequest(stage="draft", system="write", user="Question: how does vacuum work?", max_tokens=2640)
STANDARD = DraftLimits.for_target(1200)




def model_for(handler):
    model, _ = make_model(handler, timeout=180.0, ticker=ManualTicker())
    return model


# --- bounded by structure -----------------------------------------------------------------------


class Endless(httpx.AsyncByteStream):
    """20,000 short sections, each event made when it is read; ``closed`` once the client closes it."""

    def __init__(self) -> None:
        self.sections, self.closed = 0, False

    async def __aiter__(self):
        for number in range(20_000):
            self.sections += 1
            yield sse(event(f"## Part {number}\n\nVacuum reclaims dead tuples in part {number} [1].\n\n"))
        yield sse(event(None, "stop"))

    async def aclose(self) -> None:
        self.closed = True


async def test_a_stream_of_20000_sections_is_closed_at_the_section_limit() -> None:
    endless = Endless()
    requests: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=endless)

    model = UsageRecorder(model_for(handler))
    draft = await ask_writer(model, WRITER, target_words=1200)
    await model.inner.aclose()
    assert endless.closed and endless.sections <= STANDARD.sections + 2  # read no further than the limit
    assert len(requests) == 1  # enough arrived: no retry
    assert draft.cut == "bounded" and len(draft.sections) == STANDARD.sections
    assert all(body.endswith(".") for _, body in draft.sections)  # cut at a heading: every section whole


async def test_an_answer_past_the_word_limit_from_a_model_that_does_not_stream_is_cut_there() -> None:
    paragraph = "Vacuum reclaims the space of dead tuples in place and autovacuum runs it [1]. "
    text = "## Summary\n\n" + "\n\n".join(paragraph * 3 for _ in range(400))  # 14,400 words

    class Whole(ChatModel):
        async def complete(self, request):
            return ChatResponse(data=None, text=text, model="whole")

    draft = await ask_writer(Whole(), WRITER, target_words=1200)
    assert draft.cut == "bounded" and STANDARD.words - 40 <= draft.word_count <= STANDARD.words


def test_the_bound_counts_pieces_as_one_whole() -> None:
    text = "".join(f"## S{n}\n\nText of section {n} [1].\n\n" for n in range(100)) + "word " * 5000
    whole, pieces = DraftBound(STANDARD), DraftBound(STANDARD)
    whole.feed(text)
    for start in range(0, len(text), 7):
        if pieces.feed(text[start : start + 7]):
            break
    assert (whole.cut_at, whole.why, whole.at_block) == (pieces.cut_at, pieces.why, True)
    assert text[: whole.cut_at].count("\n## ") + 1 == STANDARD.sections


# --- a draft in any form is published --------------------------------------------------------

RAMBLE = (
    "## Summary\nVacuum reclaims the space of dead tuples in place [1]. Autovacuum runs it when enough rows "
    "changed [2]. Plain vacuum does not return space to the operating system [1]. Vacuum full rewrites the "
    "table under an exclusive lock [3]. The visibility map lets vacuum skip pages [2]. It keeps going and goi"
)


def test_complete_sentences_become_short_paragraphs() -> None:
    kept = complete_sentences(RAMBLE)
    paragraphs = kept.split("\n\n")
    assert paragraphs[0] == "## Summary" and kept.endswith("lets vacuum skip pages [2].")
    assert [p.count(". ") + 1 for p in paragraphs[1:]] == [3, 2]
    assert complete_sentences("## Summary\nno sentence has ended her") == ""


async def test_a_draft_with_no_blank_line_cut_at_the_limit_is_asked_once_shorter_then_kept_as_sentences() -> None:
    cut = lambda text: lambda: events_then([*content_events(text), event(None, "length")])  # noqa: E731
    handler = Streaming(cut(RAMBLE), cut(RAMBLE[:200]))
    model = UsageRecorder(model_for(handler))
    draft = await ask_writer(model, WRITER, target_words=1200)
    await model.inner.aclose()
    users = [body["messages"][-1]["content"] for body in handler.requests]
    assert len(users) == 2 and "SHORTER: about 600 words" in users[1] and "SHORTER" not in users[0]
    assert handler.requests[0]["max_tokens"] == handler.requests[1]["max_tokens"]  # fewer words, same limit
    assert draft.cut == "length"  # the longer of the two: its five complete sentences
    assert draft.executive_summary.count(" [") == 5 and draft.executive_summary.endswith("skip pages [2].")
    assert model.by_stage["draft"].retries == 1


async def test_the_shorter_answer_is_used_when_it_is_whole() -> None:
    short = "## Summary\n\nVacuum reclaims the space of dead tuples in place [1].\n\n## Key Findings\n\n- It runs often [2]."
    handler = Streaming(lambda: events_then([*content_events(RAMBLE), event(None, "length")]),
                        lambda: events_then([*content_events(short), event(None, "stop")]))  # fmt: skip
    model = model_for(handler)
    draft = await ask_writer(model, WRITER, target_words=1200)
    await model.aclose()
    assert draft.cut == "" and draft.key_findings == ("It runs often [2].",) and len(handler.requests) == 2


def test_a_draft_cut_at_the_deadline_keeps_its_sentences_too() -> None:
    kept = kept_part(RAMBLE, "deadline", 1200)
    assert kept is not None and kept.cut == "deadline" and kept.executive_summary.endswith("skip pages [2].")
    assert kept_part("## Summary\nno sentence ended her", "deadline", 1200) is None


async def test_a_later_plan_whose_writer_fails_publishes_the_earlier_draft(tmp_path) -> None:
    class FailingSecondDraft(ResearchResponder):
        drafts = 0

        def _draft(self, system: str, user: str) -> str:
            self.drafts += 1
            return super()._draft(system, user) if self.drafts == 1 else '{"report": "in JSON"}'

    finding = {"lens": "scope", "severity": "critical", "claim": "", "confidence": 0.9, "fix": "search again",
               "reason": "the sources do not cover how autovacuum is tuned: search for its settings"}  # fmt: skip
    responder = FailingSecondDraft(viability=[10, 90], findings=[finding])
    with FakeOpenAIServer(responder) as server:
        model = OpenAIChatModel(model="fake", api_key="x", base_url=server.base_url, timeout=60.0)
        result = await research(QUERY, settings=settings_for(tmp_path, max_plans=2), model=model,
                                providers=[DocsProvider(tmp_path)], lessons=LessonSelection.none)  # fmt: skip
        await model.aclose()
    assert responder.drafts == 4  # plan 1's draft, then plan 2's three answers in JSON
    assert any(w.endswith("; the draft of plan 1 is published as it stood") for w in result.warnings)
    assert result.run_record.stop_reason.startswith("writer failed: the draft stage got invalid output")
    assert "The sources address the question from several angles" in result.report_markdown


async def test_the_shorter_retry_is_announced_with_the_tokens_of_the_cut_answer() -> None:
    # issue 45, point 13: the progress line's count dropped to 0 with no word why
    cut = lambda text: lambda: events_then([*content_events(text), event(None, "length")])  # noqa: E731
    handler = Streaming(cut(RAMBLE), cut(RAMBLE[:200]))
    model = model_for(handler)
    heard: list[int] = []
    notes: list[str] = []
    revise = ChatRequest(stage="revise", system="write", user="Question: how does vacuum work?", max_tokens=2640)
    await ask_writer(model, revise, target_words=1200, keep_cut=False, on_tokens=lambda n, _: heard.append(n),
                     notify=notes.append)  # fmt: skip
    await model.aclose()
    cut_at = max(heard[: heard.index(0, 1)])  # the first answer's count, before the retry's request starts afresh
    assert notes == [f"the revise answer was cut at its length limit after {cut_at} tokens; asking once more for a "
                     "shorter one (about 600 words)"]  # fmt: skip
    assert cut_at > 0
