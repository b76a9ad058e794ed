"""The corpus is indexed while the first model call runs (issue 13: overhead), and
what indexing refuses still ends the run with its own error."""

from __future__ import annotations

import asyncio
import threading

import pytest
import yaml

from research_agent.errors import InputError
from research_agent.llm import ChatModel
from research_agent.memory.lessons.select import LessonSelection
from research_agent.pipeline import research
from tests.support.pipeline import DOCS, QUERY, script, settings_for, write_docs
from tests.support.research_responder import ResearchResponder

HANG_GUARD = 60.0  # seconds; only ever reached when the behaviour under test is broken


class HeldIndexing:
    """Progress whose indexing report waits until the first model call has arrived."""

    def __init__(self) -> None:
        self.first_call = threading.Event()
        self.held = False

    def stage(self, name: str, detail: str = "") -> None:
        if "files read" in detail:  # called from the indexing thread
            self.held = True
            assert self.first_call.wait(HANG_GUARD), "no model call ran while the corpus was indexed"

    def counts(self, **values: int) -> None:
        return None

    def note(self, message: str) -> None:
        return None


async def test_the_first_model_call_runs_while_the_corpus_is_indexed(tmp_path, scripted_model):
    corpus = write_docs(tmp_path / "corpus")
    progress = HeldIndexing()
    script(scripted_model, ResearchResponder())
    first_plan = scripted_model.queues["decompose"].popleft()

    def plan_while_indexing(request):
        progress.first_call.set()  # indexing may finish now
        return first_plan(request)

    scripted_model.queues["decompose"].appendleft(plan_while_indexing)
    settings = settings_for(tmp_path).replace(corpus_dirs=(corpus,))
    result = await research(QUERY, settings=settings, model=scripted_model, progress=progress,
                            lessons=LessonSelection.none)  # fmt: skip
    assert progress.held and result.gate_decision in ("full_report", "short_report")
    record = yaml.safe_load(result.run_record_path.read_text(encoding="utf-8"))
    assert [c["documents"] for c in record["corpus"]] == [len(DOCS)]  # what indexing did is on record


async def test_a_corpus_with_nothing_indexable_ends_the_run_without_waiting_for_the_model(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "blob.bin").write_bytes(b"\x00\x01" * 100)
    answered = asyncio.Event()

    class Unanswered(ChatModel):  # the first call would hang: indexing's error must end the run first
        async def complete(self, request):
            await asyncio.wait_for(answered.wait(), HANG_GUARD)

    settings = settings_for(tmp_path).replace(corpus_dirs=(empty,))
    with pytest.raises(InputError, match="holds no indexable files"):
        await research(QUERY, settings=settings, model=Unanswered(), lessons=LessonSelection.none)


async def test_a_missing_corpus_folder_is_refused_before_any_model_call(tmp_path, scripted_model):
    settings = settings_for(tmp_path).replace(corpus_dirs=(tmp_path / "missing",))
    with pytest.raises(InputError, match="missing does not exist"):
        await research(QUERY, settings=settings, model=scripted_model, lessons=LessonSelection.none)
    assert scripted_model.requests == []


class ReadLog:
    """Progress that logs the corpus files read (from the indexing thread) and says when all are."""

    def __init__(self, log: list[str]) -> None:
        self.log = log
        self.all_read = threading.Event()

    def stage(self, name: str, detail: str = "") -> None:
        if "files read" in detail:
            self.log.append("read")
            done, total = detail.rsplit(" ", 3)[-3].split("/")
            if done == total:
                self.all_read.set()

    def counts(self, **values: int) -> None:
        return None

    def note(self, message: str) -> None:
        return None


async def test_the_index_refreshes_once_the_first_request_is_on_its_way(tmp_path):
    # Its CPU would delay that request (issue 46): start_indexing checks the folders at once and
    # reads them only once ``after`` is done (in a run: the model SDK imported, the request leaving).
    from research_agent.run.indexing import start_indexing

    corpus = write_docs(tmp_path / "corpus")
    log: list[str] = []
    progress = ReadLog(log)
    out = asyncio.Event()

    async def first_request_out() -> None:
        await out.wait()
        log.append("request out")

    indexing = start_indexing(settings_for(tmp_path).replace(corpus_dirs=(corpus,)), progress, [],
                              after=first_request_out)  # fmt: skip
    await asyncio.to_thread(lambda: None)  # a refresh that did not wait could be reading by now
    assert log == [] and not indexing.done
    out.set()
    assert await asyncio.to_thread(progress.all_read.wait, HANG_GUARD)  # not waited for: it starts by itself
    await indexing.ready()
    assert log[0] == "request out" and "read" in log
    assert [c.documents for c in indexing.corpus] == [len(DOCS)]


async def test_an_index_waited_for_refreshes_at_once_whatever_the_first_request_does(tmp_path):
    # A run with a plan of the person's makes no model call before it searches.
    from research_agent.run.indexing import start_indexing

    corpus = write_docs(tmp_path / "corpus")
    never = asyncio.Event()
    indexing = start_indexing(settings_for(tmp_path).replace(corpus_dirs=(corpus,)), ReadLog([]), [],
                              after=never.wait)  # fmt: skip
    await asyncio.wait_for(indexing.ready(), HANG_GUARD)
    assert [c.documents for c in indexing.corpus] == [len(DOCS)]
    await indexing.stop()
