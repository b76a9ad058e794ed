"""No run lost to a slow stage (issue 19, points 2, 4 and 5): a stage that times out degrades like
one that answers badly, the deadline publishes the best draft there is, a cut draft is a report
with the cut noted, and the progress line shows the writer's tokens as they arrive."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
import yaml

from research_agent.errors import LLMTimeout, RunTimeout
from research_agent.llm import ChatModel
from research_agent.memory.lessons.select import LessonSelection
from research_agent.pipeline import research
from research_agent.review.review import review_draft
from tests.support.llm import completion, make_model
from tests.support.pipeline import (
    CRITICAL,
    QUERY,
    DocsProvider,
    Recorded,
    queue,
    record_of,
    run,
    settings_for,
    use,
)
from tests.support.research_responder import ResearchResponder
from tests.support.streams import (
    DONE,
    JumpingLoop,
    ManualTicker,
    content_events,
    event,
    events_then,
    sse_response,
)


def timed_out(stage: str) -> LLMTimeout:
    return LLMTimeout(f"model call for stage {stage} timed out after 180s (2 attempts)")


async def test_a_skeptic_that_never_answers_still_gives_the_report_and_says_why(tmp_path, scripted_model):
    queue(scripted_model, ResearchResponder(), skeptic=[timed_out("skeptic")])
    progress = Recorded()
    result = await run(tmp_path, scripted_model, progress)
    assert result.final_decision == "proceed" and result.report_path.is_file()
    assert progress.notes == ["model call for stage skeptic timed out after 180s (2 attempts); "
                              "the report goes out without adversarial findings"]
    limits = " ".join(result.report_markdown.split("## Limitations & Gaps", 1)[1].split())
    assert ("The skeptic's answers could not be used (model call for stage skeptic timed out after 180s "
            "(2 attempts)), so this report has no adversarial findings") in limits


async def test_a_decompose_that_never_answers_searches_for_the_question_itself(tmp_path, scripted_model):
    queue(scripted_model, ResearchResponder(), decompose=[timed_out("decompose")])
    result = await run(tmp_path, scripted_model)
    assert result.final_decision == "proceed" and record_of(result)["sub_queries"] == [QUERY]
    assert result.warnings[0].endswith("; searching for the question itself, the domain is 'other'")


async def test_a_revision_that_never_answers_keeps_the_draft(tmp_path, scripted_model):
    responder = ResearchResponder(findings=[CRITICAL])
    queue(scripted_model, responder, revise=[timed_out("revise")])
    result = await run(tmp_path, scripted_model)
    assert result.final_decision == "proceed" and CRITICAL["claim"] in result.report_markdown
    assert "model call for stage revise timed out after 180s (2 attempts); the previous draft is kept" in result.warnings


async def test_a_revision_cut_short_keeps_the_previous_draft_and_is_counted(tmp_path, scripted_model):
    responder = ResearchResponder(findings=[CRITICAL])
    revisions: list = []

    class CutRevision(ChatModel):
        async def complete(self, request):
            return await scripted_model.complete(request)

        async def stream(self, request, on_tokens=None):
            response = await scripted_model.complete(request)
            if request.stage != "revise":
                return response
            revisions.append(request)
            return type(response)(data=None, text=response.text[: len(response.text) // 2], model=response.model,
                                  usage=response.usage, finish_reason="length")

    queue(scripted_model, responder, revise=[use(responder), use(responder)])
    result = await research(QUERY, settings=settings_for(tmp_path, max_revisions=1), model=CutRevision(),
                            providers=[DocsProvider(tmp_path)], lessons=LessonSelection.none)
    assert CRITICAL["claim"] in result.report_markdown  # the draft, not the half revision
    assert "the revision was cut short (the model stopped at its token limit); the previous draft is kept" in result.warnings
    # cut at the token limit: asked once more, for half the words in short paragraphs; never a third time
    assert len(revisions) == 2 and not revisions[0].retry and revisions[1].retry
    assert "SHORTER: about 600 words" in revisions[1].user and "SHORTER" not in revisions[0].user
    record = record_of(result)
    assert record["cut_answers"] == 1 and record["draft_cut"] == ""
    assert record["usage"]["revise"]["retries"] == 1


class HangingSkeptic(ChatModel):
    """Answers from ``inner``; the skeptic call moves the event loop's clock past the run's deadline and hangs."""

    def __init__(self, inner, loop) -> None:
        self.inner, self.loop = inner, loop

    async def complete(self, request):
        if request.stage == "skeptic":
            self.loop.offset += 7200.0
            await asyncio.Event().wait()
        return await self.inner.complete(request)


def test_the_deadline_passing_during_the_skeptic_publishes_the_draft(tmp_path, scripted_model) -> None:
    responder = ResearchResponder()
    queue(scripted_model, responder, skeptic=[])
    loop = JumpingLoop()
    progress = Recorded()
    try:
        result = loop.run_until_complete(research(
            QUERY, settings=settings_for(tmp_path, run_timeout=3600.0), model=HangingSkeptic(scripted_model, loop),
            providers=[DocsProvider(tmp_path)], lessons=LessonSelection.none, progress=progress,
        ))  # fmt: skip
    finally:
        loop.close()
    warning = ("the run passed its 3600s deadline during the skeptic stage (raise it with --timeout); "
               "the latest draft is published as it stood")
    assert progress.notes == [warning] and result.warnings == (warning,)
    record = record_of(result)
    assert record["stop_reason"] == "deadline" and record["final_decision"] == "proceed"
    assert "Plain VACUUM marks the space as reusable" in result.report_markdown
    limits = " ".join(result.report_markdown.split("## Limitations & Gaps", 1)[1].split())
    assert ("The run reached its 3600s deadline during the skeptic stage: this is the latest draft as it stood, "
            "published before the skeptic challenged it.") in limits
    assert "The skeptic's answers could not be used" not in limits  # said once, by the line above
    assert "The skeptic gave no usable answer; claims were not independently challenged." in result.report_markdown
    assert record["skeptic"]["unavailable"] == "the run reached its deadline before the skeptic answered"


class WriterCaughtByTheDeadline(ChatModel):
    """Streams ``arrived`` for the draft, then moves the loop's clock past the deadline and hangs."""

    def __init__(self, inner, loop, arrived: str) -> None:
        self.inner, self.loop, self.arrived = inner, loop, arrived

    async def complete(self, request):
        return await self.inner.complete(request)

    async def stream(self, request, on_tokens=None):
        pieces = [self.arrived[i : i + 10] for i in range(0, len(self.arrived), 10)]
        for n, piece in enumerate(pieces, start=1):
            on_tokens(n, piece)
        self.loop.offset += 7200.0
        await asyncio.Event().wait()


@pytest.mark.parametrize("usable", [True, False])
def test_the_deadline_during_the_first_draft_publishes_its_complete_paragraphs(tmp_path, scripted_model, usable):
    queue(scripted_model, ResearchResponder(), draft=[], skeptic=[])
    arrived = ("## Summary\n\nVacuum marks the space of dead tuples as reusable [1].\n\n## Key Findings\n\n"
               "- Autovacuum runs it in the background [2].\n- VACUUM FULL rewr") if usable else "## Summary\n\nVac"
    loop = JumpingLoop()
    model = WriterCaughtByTheDeadline(scripted_model, loop, arrived)
    run_it = research(QUERY, settings=settings_for(tmp_path, run_timeout=3600.0), model=model,
                      providers=[DocsProvider(tmp_path)], lessons=LessonSelection.none)  # fmt: skip
    try:
        if not usable:  # nothing complete arrived: no draft exists, the deadline is the error
            with pytest.raises(RunTimeout, match="deadline during the draft stage"):
                loop.run_until_complete(run_it)
            assert not list((tmp_path / "reports").glob("*.md"))
            return
        result = loop.run_until_complete(run_it)
    finally:
        loop.close()
    record = record_of(result)
    assert record["stop_reason"] == "deadline" and record["draft_cut"] == "deadline" and record["cut_answers"] == 1
    report = result.report_markdown
    assert "Vacuum marks the space of dead tuples as reusable [1]." in report and "rewr" not in report
    limits = " ".join(report.split("## Limitations & Gaps", 1)[1].split())
    assert "The draft was cut short (the run reached its deadline while the model was writing)" in limits


def test_a_draft_caught_by_the_deadline_reads_sources_named_in_words_as_citations(tmp_path, scripted_model):
    queue(scripted_model, ResearchResponder(), draft=[], skeptic=[])
    arrived = ("## Summary\n\nThe source 1 says that plain VACUUM marks the space of dead tuples as reusable.\n\n"
               "The source 2 says that autovacuum runs VACUUM in the background on busy tables.\n\nThe source 3 rew")
    loop = JumpingLoop()
    model = WriterCaughtByTheDeadline(scripted_model, loop, arrived)
    run_it = research(QUERY, settings=settings_for(tmp_path, run_timeout=3600.0), model=model,
                      providers=[DocsProvider(tmp_path)], lessons=LessonSelection.none)  # fmt: skip
    try:
        result = loop.run_until_complete(run_it)
    finally:
        loop.close()
    assert "The source [1] says that plain VACUUM" in result.report_markdown
    assert "no citations" not in result.run_record.review.reasons  # conftest's _one_verdict: review agrees


def test_the_deadline_before_any_draft_is_still_the_error(tmp_path, scripted_model) -> None:
    loop = JumpingLoop()

    async def stuck(request):
        loop.offset += 7200.0
        await asyncio.Event().wait()

    class HangingDecompose:
        complete = staticmethod(stuck)

    try:
        with pytest.raises(RunTimeout, match="deadline during the decompose stage"):
            loop.run_until_complete(research(QUERY, settings=settings_for(tmp_path, run_timeout=60.0),
                                             model=HangingDecompose(), providers=[DocsProvider(tmp_path)],
                                             lessons=LessonSelection.none))  # fmt: skip
    finally:
        loop.close()
    assert not list((tmp_path / "reports").glob("*.md"))


async def test_a_model_that_cannot_stream_runs_the_whole_pipeline(tmp_path, scripted_model):
    assert not scripted_model.endpoint.streams  # its stream() answers whole
    responder = ResearchResponder(findings=[CRITICAL])
    queue(scripted_model, responder, revise=[use(responder)])  # the revision removes the claim: one is enough
    result = await run(tmp_path, scripted_model)
    assert result.final_decision == "proceed" and result.report_path.is_file()
    assert {r.stage for r in scripted_model.requests} == {"decompose", "relevance", "draft", "skeptic", "revise"}
    assert all(r.schema is None for r in scripted_model.requests if r.stage in ("draft", "revise"))


class PipelineEndpoint:
    """Answers every structured call from the responder; the draft as a stream that holds its end."""

    def __init__(self, draft_end: asyncio.Event, *, finish: str = "stop") -> None:
        self.responder = ResearchResponder()
        self.draft_end = draft_end
        self.finish = finish

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        stage = request.headers["X-Research-Agent-Stage"]
        answer = self.responder(body, stage)
        if not body.get("stream"):
            return completion(answer)
        events = [*content_events(answer, size=40)]
        return sse_response(lambda: events_then(events, hold=self.draft_end,
                                                end=[_sse(event(None, self.finish)), DONE]))


async def test_the_progress_line_sees_the_writer_tokens_rise_before_the_stream_ends(tmp_path):
    release, seen = asyncio.Event(), asyncio.Event()

    class Watching(Recorded):
        def counts(self, **values: int) -> None:
            super().counts(**values)
            if values.get("streamed", 0) >= 3:
                seen.set()

    progress = Watching()
    model, _ = make_model(PipelineEndpoint(release), ticker=ManualTicker())
    task = asyncio.create_task(research(QUERY, settings=settings_for(tmp_path), model=model,
                                        providers=[DocsProvider(tmp_path)], lessons=LessonSelection.none,
                                        progress=progress))  # fmt: skip
    async with asyncio.timeout(60):  # a guard against a hang, not a timing
        await asyncio.wait({task, asyncio.ensure_future(seen.wait())}, return_when=asyncio.FIRST_COMPLETED)
    streamed = [v["streamed"] for v in progress.values if "streamed" in v]
    # the request is sent: "reading the prompt" until the first token; then a count of the text, rising
    assert streamed[0] == 0 and 0 < streamed[1] < streamed[2] < streamed[3] and not task.done()
    assert [v.get("reading") for v in progress.values if "streamed" in v][:2] == [1, 0]
    release.set()
    result = await task
    await model.aclose()
    assert [v["streamed"] for v in progress.values if "streamed" in v][-1] == 0  # ended: the line shows waits again
    assert result.final_decision == "proceed"


async def test_a_draft_cut_at_the_token_limit_is_a_report_that_says_so(tmp_path):
    release = asyncio.Event()
    release.set()
    model, _ = make_model(PipelineEndpoint(release, finish="length"), ticker=ManualTicker())
    result = await research(QUERY, settings=settings_for(tmp_path), model=model, providers=[DocsProvider(tmp_path)],
                            lessons=LessonSelection.none)
    await model.aclose()
    limits = " ".join(result.report_markdown.split("## Limitations & Gaps", 1)[1].split())
    assert "The draft was cut short (the model stopped at its token limit): it ends at its last complete paragraph" in limits
    record = record_of(result)
    assert record["draft_cut"] == "length" and record["cut_answers"] == 1 and record["stop_reason"] != "deadline"
    # the report says why it is short, so its length is no critical issue of the review (issue 23)
    assert "under a quarter of the target" not in result.report_markdown
    far_too_short = review_draft(result.report_markdown, target_words=100_000)  # re-read, as `review` would
    assert [i.severity for i in far_too_short.issues if i.type == "length"] == ["warning"]


def _sse(payload: dict) -> bytes:
    return f"data: {json.dumps(payload)}\n\n".encode()


def test_cli_a_draft_cut_at_max_tokens_and_a_silent_skeptic_still_give_a_report_and_exit_0(tmp_path, corpus):
    """Against a real socket: the draft stream ends at the token limit (half its text) and the
    skeptic never answers within --llm-timeout: each costs a Limitations line, not the run."""
    from tests.support.cli import cli
    from tests.support.fake_openai_server import FakeOpenAIServer, Faults

    faults = Faults(always={"draft": "length", "skeptic": "stall"}, stall_seconds=30)
    reports = tmp_path / "reports"
    with FakeOpenAIServer(ResearchResponder(), faults=faults) as server:
        proc = cli(tmp_path, "run", QUERY, "--corpus", str(corpus), "--reports-dir", str(reports), "--no-critique",
                   "--llm-timeout", "1", base_url=server.base_url)
        streamed = [r.stream for r in server.requests if r.stage == "draft"]
    assert proc.returncode == 0, proc.stderr
    assert streamed == [True]  # usable paragraphs arrived before the cut: no retry
    (report,) = reports.glob("*.md")
    limits = " ".join(report.read_text(encoding="utf-8").split("## Limitations & Gaps", 1)[1].split())
    assert "The draft was cut short (the model stopped at its token limit)" in limits
    assert "(model call for stage skeptic timed out after 1s (2 attempts))" in limits
    (record_path,) = (reports / "meta").glob("run-*.yaml")
    record = yaml.safe_load(record_path.read_text(encoding="utf-8"))
    assert record["draft_cut"] == "length" and record["skeptic"]["unavailable"]
