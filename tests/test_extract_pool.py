"""Extraction in worker processes: order, bounds, crashes, hangs, cancellation, lazy start.

The misbehaving extractors come in through parameters (``extractor=``, the pool's
function); see tests/support/extractors.py. Limits here are configured limits, never
races: a hanging job blocks forever and only its time limit ends it.
"""

from __future__ import annotations

import asyncio
import ctypes
import functools
import multiprocessing
import os
import signal
import threading
from pathlib import Path

import pytest

from research_agent.errors import Cancelled
from research_agent.fetch import FetchFailure, Page
from research_agent.fetch.processes.overlap import OverlapExtraction
from research_agent.fetch.processes.pool import CRASHED, TIMED_OUT, ExtractionPool, Failed
from research_agent.search.corpus_index import CorpusIndex
from tests.support import extractors, http_server
from tests.support.extractors import CRASH, HANG, HANG_GUARD, RAISE, misbehaving, worker_processes
from tests.support.fetch import SITE, make_fetcher
from tests.support.http_server import LocalServer, article_html

local_server = http_server.local_server  # the fixture
pytestmark = pytest.mark.skipif(not os.path.isdir("/proc"), reason="counts processes through /proc")


def _html(title: str, body: str) -> str:
    return f"<html><head><title>{title}</title></head><body><p>{body}</p></body></html>"


def _corpus(root: Path, files: dict[str, str | bytes]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        data = content.encode("utf-8") if isinstance(content, str) else content
        (root / name).write_bytes(data)
    return root


def _within_guard(call, *args, **kw):
    """``call(*args, **kw)`` in a thread, so a hang fails the test instead of blocking it."""
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            outcome["value"] = call(*args, **kw)
        except BaseException as exc:  # handed to the test thread
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(HANG_GUARD)
    assert not thread.is_alive(), f"{call.__name__} hung"
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["value"]


def _in_order(pool: ExtractionPool, jobs) -> list:
    return list(pool.map(jobs))


# --------------------------------------------------------------------------- the pool


def test_results_come_in_input_order_when_a_later_job_finishes_first(tmp_path: Path) -> None:
    marker = tmp_path / "second-done"
    jobs = [(extractors.wait_for_file, marker), (extractors.make_file, marker)]
    jobs += [(extractors.identity, i) for i in range(20)]
    with ExtractionPool(extractors.call, workers=2) as pool:
        results = _within_guard(_in_order, pool, jobs)
    assert results == ["waited", "made", *range(20)]  # job 0 finished after job 1, and came first


def test_map_keeps_a_bounded_number_of_jobs_in_flight() -> None:
    pulled = 0

    def jobs():
        nonlocal pulled
        for i in range(50):
            pulled += 1
            yield (i,)

    with ExtractionPool(extractors.identity, workers=2) as pool:
        results = pool.map(jobs(), window=3)
        assert next(results) == 0
        assert pulled <= 4  # the window, plus the one it is about to hand out
        assert list(results) == list(range(1, 50))


def test_a_worker_over_its_memory_limit_is_replaced_and_the_jobs_go_on() -> None:
    with ExtractionPool(extractors.pid_of_worker, workers=2, max_worker_mb=1) as pool:
        pids = _within_guard(_in_order, pool, [(i,) for i in range(6)])
    assert len(set(pids)) == 6  # every worker retired after its job (any process is over 1 MB)
    assert os.getpid() not in pids


@pytest.mark.skipif(not hasattr(ctypes.CDLL(None), "malloc_trim"), reason="glibc's malloc_trim")
def test_a_worker_hands_back_the_heap_a_big_document_left() -> None:
    with ExtractionPool(extractors.call, workers=1) as pool:
        before = _within_guard(pool.submit(extractors.rss_mb, None).result)
        held = _within_guard(pool.submit(extractors.fragment_heap, 80).result)
        after = _within_guard(pool.submit(extractors.rss_mb, None).result)
    assert held - before > 60  # the blocks were resident
    assert after - before < 30  # and the holes they left were handed back


def test_a_crash_costs_its_job_and_the_pool_goes_on() -> None:
    jobs = [(b"fine one", "text"), (CRASH, "text"), (b"fine two", "text")]
    with ExtractionPool(misbehaving, workers=2) as pool:
        first, crashed, last = _within_guard(_in_order, pool, jobs)
    assert first.text == "fine one" and last.text == "fine two"
    assert isinstance(crashed, Failed) and crashed.reason == CRASHED
    assert "exit code 3" in crashed.detail


def test_a_hung_job_is_killed_at_its_limit_and_the_pool_goes_on() -> None:
    before = worker_processes()
    jobs = [(HANG, "text"), (b"fine", "text"), (HANG, "text"), (b"also fine", "text")]
    with ExtractionPool(misbehaving, workers=2, timeout=2.0) as pool:
        results = _within_guard(_in_order, pool, jobs)
    assert [r.reason for r in results[::2]] == [TIMED_OUT, TIMED_OUT]
    assert [r.text for r in results[1::2]] == ["fine", "also fine"]
    assert worker_processes() <= before  # the hung workers were killed, the others stopped


def test_closing_the_pool_kills_busy_workers_at_once() -> None:
    before = worker_processes()
    pool = ExtractionPool(misbehaving, workers=2, timeout=HANG_GUARD * 10)
    futures = [pool.submit(HANG, "text") for _ in range(3)]
    assert extractors.wait_until(lambda: sum(f.running() for f in futures) == 2), (
        "the workers never took the jobs"
    )
    _within_guard(pool.close)  # would wait forever if it waited for the hung jobs
    assert all(f.cancelled() or f.exception() is not None for f in futures)
    assert worker_processes() <= before
    with pytest.raises(RuntimeError):
        pool.submit(b"late", "text")


def test_start_brings_the_workers_up_before_any_job() -> None:
    before = worker_processes()
    pool = ExtractionPool(extractors.pid_of_worker, workers=2)
    assert not pool.ready.is_set()
    pool.start()
    assert pool.ready.wait(HANG_GUARD)
    assert extractors.wait_until(lambda: len(worker_processes() - before) == 2)
    _within_guard(pool.close)
    assert pool.ready.is_set() and worker_processes() <= before


def test_workers_are_born_deaf_to_a_terminals_ctrl_c() -> None:
    # A terminal sends SIGINT to the whole process group; a worker (or the fork server)
    # that got it while starting would die with a traceback. It is blocked from birth.
    with ExtractionPool(extractors.pid_of_worker, workers=1) as pool:
        pid = _within_guard(pool.submit(0).result)
        status = Path(f"/proc/{pid}/status").read_text(encoding="ascii")
    blocked = int(status.split("SigBlk:")[1].split()[0], 16)
    assert blocked & (1 << (signal.SIGINT - 1))


# --------------------------------------------------------------------------- pages as they come


async def test_one_document_at_a_time_starts_no_worker() -> None:
    extraction = OverlapExtraction(extractors.pid_of_worker)
    assert [await extraction.run(i) for i in range(3)] == [os.getpid()] * 3
    assert not extraction.pool_started
    await extraction.aclose()


async def test_overlapping_documents_go_to_workers_where_a_crash_costs_one(tmp_path: Path) -> None:
    extraction = OverlapExtraction(extractors.staged)
    started, marker = threading.Event(), tmp_path / "made"
    held = asyncio.ensure_future(extraction.run("hold", (started, marker)))  # in this process, until `made`
    assert await asyncio.to_thread(started.wait, HANG_GUARD)
    crashed = await extraction.run("crash", None)  # overlaps `held`: a worker takes it
    made = await extraction.run("make", marker)
    assert isinstance(crashed, Failed) and crashed.reason == CRASHED
    assert made != os.getpid() and extraction.pool_started
    assert await asyncio.wait_for(held, HANG_GUARD) == os.getpid()
    await extraction.aclose()


async def test_a_job_waiting_for_its_turn_when_the_pool_closes_runs_here(tmp_path: Path) -> None:
    extraction = OverlapExtraction(extractors.staged, limit=1)
    started, here_free, worker_free = threading.Event(), tmp_path / "here", tmp_path / "worker"
    held = asyncio.ensure_future(extraction.run("hold", (started, here_free)))  # this process, until `here`
    assert await asyncio.to_thread(started.wait, HANG_GUARD)
    busy = asyncio.ensure_future(extraction.run("wait", worker_free))  # the pool's one slot, until `worker`
    assert await asyncio.to_thread(extractors.wait_until, lambda: extraction.pool_started)
    await asyncio.wait_for(extraction._pool_up, HANG_GUARD)  # type: ignore[arg-type]  # the workers are up
    waiting = asyncio.ensure_future(extraction.run("pid", None))  # its turn comes after `busy`'s
    for _ in range(5):
        await asyncio.sleep(0)  # no timer: lets `waiting` reach the slot, and `busy` its worker
    await extraction.aclose()  # before the fix, `waiting` then asked a pool that was gone
    (here_free).write_text("go")
    worker_free.write_text("go")
    assert await asyncio.wait_for(waiting, HANG_GUARD) == os.getpid()  # it ran here
    assert await asyncio.wait_for(held, HANG_GUARD) == os.getpid()
    await asyncio.gather(busy, return_exceptions=True)


async def test_a_page_that_crashes_the_extractor_fails_alone(local_server: LocalServer) -> None:
    for name, body in (("one", "first"), ("two", "second"), ("three", "third")):
        local_server.extra_routes[("GET", f"/{name}")] = functools.partial(_send, article_html(name, body))
    local_server.extra_routes[("GET", "/crash")] = functools.partial(_send, f"<p>{CRASH.decode()}</p>")
    names = ("one", "crash", "two", "three")
    async with make_fetcher(extractor=misbehaving) as fetcher:
        one, crash, two, three = await asyncio.gather(
            *(fetcher.fetch(local_server.url(f"/{name}", host=SITE)) for name in names)
        )
    assert isinstance(crash, FetchFailure) and crash.reason == "extract_error"
    assert [type(page) for page in (one, two, three)] == [Page, Page, Page]


async def test_a_fetcher_holds_a_bounded_number_of_pages(local_server: LocalServer, tmp_path: Path) -> None:
    go = tmp_path / "go"  # until it exists, no page's extraction ends
    body = f"{extractors.WAIT.decode()}{go}"
    for i in range(40):
        local_server.extra_routes[("GET", f"/held{i}")] = functools.partial(_send, body)
    async with make_fetcher(extractor=extractors.waiting, concurrency=1, per_host=1) as fetcher:
        fetches = [
            asyncio.ensure_future(fetcher.fetch(local_server.url(f"/held{i}", host=SITE))) for i in range(40)
        ]

        def downloads() -> int:
            return sum(1 for path in local_server.paths() if path.startswith("/held"))

        assert fetcher.max_pending < 40
        assert await asyncio.to_thread(extractors.wait_until, lambda: downloads() >= fetcher.max_pending)
        held = downloads()  # nothing is extracted yet, so nothing more may be downloaded
        go.write_text("go", encoding="utf-8")
        pages = await asyncio.wait_for(asyncio.gather(*fetches), HANG_GUARD)
    assert held == fetcher.max_pending
    assert [type(page) for page in pages] == [Page] * 40


def _send(body: str, handler) -> None:
    handler.send(200, body)


# --------------------------------------------------------------------------- the corpus index


def test_a_file_that_crashes_the_extractor_is_skipped_and_the_index_goes_on(tmp_path: Path) -> None:
    root = _corpus(tmp_path / "docs", {
        "alpha.html": _html("Alpha", "alpha vacuum"), "crash.html": CRASH, "omega.html": _html("Omega", "omega vacuum"),
        "notes.md": "# Notes\n\nnotes vacuum",
    })  # fmt: skip
    index = CorpusIndex(root, tmp_path / "cache", extractor=misbehaving)
    stats = _within_guard(index.refresh)
    assert stats.skipped == {"extract_crashed": 1} and stats.skipped_files == (
        ("crash.html", "extract_crashed"),
    )
    assert stats.documents == 3
    assert {Path(h.location).name for h in index.search("vacuum")} == {"alpha.html", "omega.html", "notes.md"}
    again = _within_guard(index.refresh)  # remembered: not read again until it changes
    assert (again.indexed, again.unchanged, again.skipped) == (0, 3, {"extract_crashed": 1})


def test_a_file_that_hangs_the_extractor_is_skipped_at_the_time_limit(tmp_path: Path) -> None:
    root = _corpus(tmp_path / "docs", {
        "alpha.html": _html("Alpha", "alpha vacuum"), "hang.html": HANG, "omega.html": _html("Omega", "omega vacuum"),
    })  # fmt: skip
    before = worker_processes()
    index = CorpusIndex(root, tmp_path / "cache", extractor=misbehaving, extract_timeout=2.0)
    stats = _within_guard(index.refresh)
    assert stats.skipped_files == (("hang.html", "extract_timeout"),)
    assert stats.documents == 2
    assert worker_processes() <= before


@pytest.mark.parametrize("html_files", [1, 2], ids=["in-process", "in-workers"])
def test_an_extractor_exception_skips_the_file(tmp_path: Path, html_files: int) -> None:
    files: dict[str, str | bytes] = {"raise.html": RAISE, "notes.md": "# Notes\n\nnotes vacuum"}
    files.update({f"page{i}.html": _html(f"Page {i}", "page vacuum") for i in range(html_files - 1)})
    index = CorpusIndex(_corpus(tmp_path / "docs", files), tmp_path / "cache", extractor=misbehaving)
    stats = _within_guard(index.refresh)
    assert stats.skipped_files == (("raise.html", "extract_error"),)
    assert stats.documents == html_files


def test_cancelling_an_index_build_leaves_no_worker_processes(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {"a-first.html": _html("First", "first vacuum")}
    files.update({f"b-hang{i}.html": HANG for i in range(4)})  # the workers are busy for ever
    index = CorpusIndex(_corpus(tmp_path / "docs", files), tmp_path / "cache", extractor=misbehaving)
    before, children_before = worker_processes(), set(multiprocessing.active_children())
    seen: list[set[int]] = []

    def cancel(done: int, total: int) -> None:
        seen.append(worker_processes() - before)
        raise Cancelled("indexing stopped")

    with pytest.raises(Cancelled):
        _within_guard(index.refresh, progress=cancel)
    assert seen and seen[0], "no worker was running when the build was cancelled"
    assert worker_processes() <= before
    assert set(multiprocessing.active_children()) <= children_before


def test_plain_text_and_a_single_html_file_start_no_worker(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {"page.html": _html("Page", "page vacuum")}
    files.update({f"note{i}.md": f"# Note {i}\n\nnote vacuum {i}" for i in range(5)})
    root = _corpus(tmp_path / "docs", files)
    children: list[int] = []
    others = set(multiprocessing.active_children())  # what earlier tests left running is not ours

    def count_children(done: int, total: int) -> None:
        children.append(len(set(multiprocessing.active_children()) - others))

    index = CorpusIndex(root, tmp_path / "cache")
    stats = _within_guard(index.refresh, progress=count_children)
    assert stats.documents == 6 and children == [0] * 6

    _corpus(root, {"second.html": _html("Second", "second vacuum"), "third.html": _html("Third", "third")})
    children.clear()
    stats = _within_guard(index.refresh, progress=count_children)
    assert stats.indexed == 2 and children[0] > 0  # two HTML files: worth the workers
