"""Reliability under failure (issue 6): the installed CLI against a fault-injecting endpoint.

Every test runs ``research-agent`` in a subprocess against ``FakeOpenAIServer`` with the
deterministic ``ResearchResponder`` over a small corpus, and then checks what is on disk:
only complete reports, run records and critiques, never a temp file after the next run.

Where a test must act at a moment of the run (Ctrl-C during a call, a corpus folder
that vanishes mid-run), it waits for the request of that stage to reach the server
(:class:`Tap`), never for a wall-clock time. No elapsed time is asserted: a stalled
call stalls for an hour (until the server shuts down), so "Ctrl-C stops it" and "the
timeout ends it" are proved by the run ending at all; every wait is a hang guard of at
least :data:`HANG_GUARD` seconds. Crash and concurrency tests are in
``test_reliability_crash.py``.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from research_agent.llm import ChatModel
from research_agent.search.corpus_index import CorpusIndex
from tests.support.cli import CLI
from tests.support.fake_openai_server import STATUS_KINDS, FakeOpenAIServer, Faults
from tests.support.pipeline import DOCS, QUERY, source_entries, write_docs
from tests.support.reliability import (
    HANG_GUARD,
    Tap,
    _mount,
    check_folder,
    cli_env,
    fresh_index_rows,
    index_rows,
    message_lines,
    mounted,
    run_cli,
    start_cli,
    temp_files,
    with_default_sigint,
)

pytestmark = pytest.mark.skipif(os.name != "posix", reason="signals and mounts are POSIX")

FOREVER = 3600.0  # a stall that outlasts every hang guard: it ends when the server shuts down


# --------------------------------------------------------------------------- helpers


def snapshot(reports: Path) -> dict[str, bytes]:
    return {str(p.relative_to(reports)): p.read_bytes() for p in sorted(reports.rglob("*"))
            if p.is_file() and p.name != "critique.log"}


# --------------------------------------------------------------------------- fixtures


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return write_docs(tmp_path / "corpus")


@pytest.fixture
def tap() -> Tap:
    return Tap()


@pytest.fixture
def server(tap: Tap) -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(tap) as srv:
        yield srv


# --------------------------------------------------------------------------- transient faults


def test_transient_faults_still_give_a_complete_report_and_the_record_counts_every_retry(
    tmp_path, corpus, server
):
    # 30% of calls fail with 500, 503 or 429; 429/503 say Retry-After: 0, 500s back off.
    server.set_faults(Faults(rate=0.3, mix=("500", "503", "429"), seed=2, retry_after="0"))
    env = cli_env(tmp_path / "home", server.base_url, {"llm_max_retries": 6})
    reports = tmp_path / "reports"
    proc = run_cli(env, "run", QUERY, "--corpus", str(corpus), "--reports-dir", str(reports), "--no-critique",
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    found = check_folder(reports)
    assert len(found["reports"]) == 1 and len(found["records"]) == 1
    record = yaml.safe_load(found["records"][0].read_text(encoding="utf-8"))
    assert record["gate_decision"] == "full_report"

    faulted = [r for r in server.requests if r.fault in STATUS_KINDS]
    kinds = {r.fault for r in faulted}  # the seed's draws hold both kinds: backoff and Retry-After paths
    assert "500" in kinds and kinds & {"429", "503"}, kinds
    retries = sum(u["retries"] for u in record["usage"].values())
    assert retries == len(faulted)  # every injected failure was retried and counted, nothing else
    by_stage: dict[str, int] = {}
    for r in faulted:
        by_stage[r.stage] = by_stage.get(r.stage, 0) + 1
    assert {stage: record["usage"][stage]["retries"] for stage in by_stage} == by_stage
    answered = [r for r in server.requests if r.stage == "relevance" and r.fault not in STATUS_KINDS]
    assert record["usage"]["relevance"]["calls"] == len(answered)  # the sources batched: calls, not sources


# --------------------------------------------------------------------------- hangs and deadlines


def test_a_hung_endpoint_ends_in_a_timeout_error_within_its_bound(tmp_path, corpus, server):
    server.set_faults(Faults(always={"*": "stall"}, stall_seconds=FOREVER))  # headers, then nothing
    # Only the client's timeout can end this run: two attempts of 1 s plus one backoff.
    env = cli_env(tmp_path / "home", server.base_url, {"llm_timeout": 1.0, "llm_max_retries": 1})
    proc = run_cli(env, "run", QUERY, "--corpus", str(corpus), "--reports-dir", str(tmp_path / "reports"),
                   "--no-critique", cwd=tmp_path, timeout=HANG_GUARD)
    assert proc.returncode == 3, proc.stderr
    lines = message_lines(proc.stderr)
    assert lines == [
        "! model call for stage decompose timed out after 1s (2 attempts); searching for the question itself, "
        "the domain is 'other'",
        "! 4 source(s) could not be scored and are left out (model call for stage relevance timed out after 1s "
        "(2 attempts)); 4 source(s) left without a score had been asked again in smaller batches first",
        "error: no answer of the model endpoint could be read in this run: model call for stage relevance "
        "timed out after 1s (2 attempts)",
    ], proc.stderr
    assert not (tmp_path / "reports").exists() or not check_folder(tmp_path / "reports")["reports"]


@pytest.mark.parametrize("stage", ["decompose", "draft"], ids=["hung-first-call", "hung-draft"])
def test_the_overall_deadline_stops_the_run_and_names_its_stage(tmp_path, corpus, server, stage):
    # The stage hangs for longer than the test may take, so only the deadline can end the run;
    # the deadline leaves the stages before it ample time on a loaded machine (they take well under 1 s).
    deadline = "10"
    server.set_faults(Faults(always={stage: "stall"}, stall_seconds=FOREVER))
    env = cli_env(tmp_path / "home", server.base_url, {"llm_timeout": HANG_GUARD})
    reports = tmp_path / "reports"
    proc = run_cli(env, "run", QUERY, "--corpus", str(corpus), "--reports-dir", str(reports), "--no-critique",
                   "--timeout", deadline, cwd=tmp_path, timeout=2 * HANG_GUARD)
    assert proc.returncode == 6, proc.stderr
    assert message_lines(proc.stderr) == [
        f"error: the run passed its {deadline}s deadline during the {stage} stage (raise it with --timeout)"
    ]
    assert "Traceback" not in proc.stderr
    assert check_folder(reports)["reports"] == [] and temp_files(reports) == []


# --------------------------------------------------------------------------- invalid output


def test_an_unreadable_skeptic_still_gives_the_report_says_so_and_exits_0(tmp_path, corpus, server):
    server.set_faults(Faults(always={"skeptic": "badschema"}))
    env = cli_env(tmp_path / "home", server.base_url)
    reports = tmp_path / "reports"
    proc = run_cli(env, "run", QUERY, "--corpus", str(corpus), "--reports-dir", str(reports), "--no-critique",
                   "--model", "main-model-7", "--fast-model", "fast-model-1", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    note, done = message_lines(proc.stderr)
    assert note.startswith("! the skeptic stage got invalid output from model main-model-7 after 3 attempts: "), note
    assert note.endswith("; the report goes out without adversarial findings"), note
    assert re.match(r"done \([0-9a-f]{7}\): full_report, ", done) and done.endswith(" tokens, cost unknown"), done
    skeptic = [r for r in server.requests if r.stage == "skeptic"]
    assert len(skeptic) == 3 and {r.model for r in skeptic} == {"main-model-7"}
    assert {r.stage for r in server.requests} == {"decompose", "relevance", "draft", "skeptic"}
    found = check_folder(reports)
    (report,) = found["reports"]
    assert "claims were not independently challenged" in report.read_text(encoding="utf-8")
    record = yaml.safe_load(found["records"][0].read_text(encoding="utf-8"))
    assert record["warnings"] == [note.removeprefix("! ")] and record["usage"]["skeptic"]["calls"] == 3


def test_an_unreadable_draft_fails_naming_the_stage_and_model_after_three_attempts(tmp_path, corpus, server):
    server.set_faults(Faults(always={"draft": "badschema"}))
    env = cli_env(tmp_path / "home", server.base_url)
    reports = tmp_path / "reports"
    proc = run_cli(env, "run", QUERY, "--corpus", str(corpus), "--reports-dir", str(reports), "--no-critique",
                   "--model", "main-model-7", "--fast-model", "fast-model-1", cwd=tmp_path)
    assert proc.returncode == 3, proc.stderr
    (line,) = message_lines(proc.stderr)
    assert line.startswith("error: the draft stage got invalid output from model main-model-7 after 3 attempts: "), line
    draft = [r for r in server.requests if r.stage == "draft"]
    assert len(draft) == 3 and {r.model for r in draft} == {"main-model-7"}  # three attempts, then stop
    assert check_folder(reports)["reports"] == []


# --------------------------------------------------------------------------- Ctrl-C


# SIGTERM (timeout, docker stop, systemd, CI cancellation) takes the same path as Ctrl-C, exit 143.
STOPS = {signal.SIGINT: (130, "interrupted"), signal.SIGTERM: (143, "terminated")}


@pytest.mark.parametrize(
    ("stage", "sent"),
    [("relevance", signal.SIGINT), ("draft", signal.SIGINT), ("critique", signal.SIGINT),
     ("draft", signal.SIGTERM), ("critique", signal.SIGTERM)],
)
def test_ctrl_c_stops_a_stalled_call_with_one_line_and_no_partial_files(tmp_path, corpus, server, tap, stage, sent):
    # The call stalls for longer than the hang guard, and the model timeout (120 s by default)
    # is longer than the guard too: the run can only end in time because Ctrl-C stopped the call.
    server.set_faults(Faults(always={stage: "stall"}, stall_seconds=FOREVER))
    env = cli_env(tmp_path / "home", server.base_url)
    reports = tmp_path / "reports"
    proc = start_cli(env, "run", QUERY, "--corpus", str(corpus), "--reports-dir", str(reports),
                     "--wait-critique", cwd=tmp_path)
    try:
        assert tap.wait_for(lambda stages: stage in stages, HANG_GUARD), "the run never reached the stage"
        proc.send_signal(sent)
        code = proc.wait(timeout=HANG_GUARD)
    finally:
        if proc.poll() is None:
            proc.kill()
        out, err = proc.communicate(timeout=HANG_GUARD)
    exit_code, word = STOPS[sent]
    assert code == exit_code, err
    assert "Traceback" not in err
    (line,) = message_lines(err)[-1:] if stage == "critique" else message_lines(err)
    assert line.startswith(word), err
    found = check_folder(reports)
    assert temp_files(reports) == [] and found["critiques"] == []
    if stage == "critique":  # the report was already written and stays; the critique never started writing
        assert len(found["reports"]) == 1 and len(found["records"]) == 1
        assert out.strip() == str(found["reports"][0])
    else:
        assert found["reports"] == [] and found["records"] == []


def _read_line_containing(fd: int, marker: bytes) -> bytes:
    """Read ``fd`` one byte at a time up to the end of the first line containing ``marker``.

    Reading no further leaves the rest in the pipe, so a writer that fills it blocks.
    """
    line = bytearray()
    while True:
        byte = os.read(fd, 1)
        if not byte:
            return bytes(line)  # the writer ended first; the caller's assertions say so
        line += byte
        if byte == b"\n":
            if marker in line:
                return bytes(line)
            line.clear()


def test_ctrl_c_while_a_large_corpus_is_indexed_stops_and_the_next_run_resumes(tmp_path, server):
    # Progress lines (one per 25 files) go to a 4 KiB pipe that is not read while Ctrl-C is
    # sent: the indexing thread blocks on it long before the last of 3,000 files, so the
    # signal lands during indexing however fast or slow the machine is.
    corpus = write_docs(tmp_path / "corpus-with-a-long-folder-name-so-that-progress-lines-are-long")
    for i in range(3000):
        (corpus / f"note{i:04d}.md").write_text(f"# Note {i}\n\nPostgreSQL VACUUM note number {i}.\n")
    env = cli_env(tmp_path / "home", server.base_url)
    reports = tmp_path / "reports"
    args = ("run", QUERY, "--corpus", str(corpus), "--reports-dir", str(reports), "--no-critique")
    import fcntl  # POSIX only, like this module

    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, 4096)
    try:
        proc = subprocess.Popen(with_default_sigint([str(CLI), *args]), stdout=subprocess.PIPE, stderr=write_end,
                                env=env, cwd=tmp_path)
    finally:
        os.close(write_end)
    drained: list[bytes] = []
    try:
        first = _read_line_containing(read_end, b"files read")
        assert b"files read" in first, "the run never reported indexing progress"
        proc.send_signal(signal.SIGINT)
        drain = threading.Thread(target=lambda: drained.append(_read_all(read_end)), daemon=True)
        drain.start()
        code = proc.wait(timeout=HANG_GUARD)
        drain.join(HANG_GUARD)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=HANG_GUARD)
        os.close(read_end)
    rest = b"".join(drained).decode("utf-8", "replace")
    assert code == 130, rest
    assert message_lines(rest) == ["interrupted: stopped before writing anything"]
    # The first model call runs while the corpus is indexed; nothing after it can have started.
    assert {r.stage for r in server.requests} <= {"decompose"} and check_folder(reports)["reports"] == []

    again = run_cli(env, *args, cwd=tmp_path)  # picks up where the index stopped
    assert again.returncode == 0, again.stderr
    (db,) = (tmp_path / "home" / "cache" / "corpus").glob("*.sqlite")
    assert index_rows(db) == fresh_index_rows(corpus, tmp_path / "fresh-cache")


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    return b"".join(chunks)


def test_cancelling_a_run_stops_its_indexing_thread_at_the_next_file(tmp_path):
    """Without this, asyncio.run would wait for the whole corpus to be read after Ctrl-C."""
    import asyncio

    class Unanswered(ChatModel):  # the first model call runs while the corpus is indexed: it waits to be cancelled
        async def complete(self, request):
            await asyncio.wait_for(asyncio.Event().wait(), HANG_GUARD)

    from research_agent.config import Settings
    from research_agent.memory.lessons.select import LessonSelection
    from research_agent.pipeline import research

    corpus = write_docs(tmp_path / "corpus")
    total = 1000 + len(DOCS)
    for i in range(1000):
        (corpus / f"note{i:04d}.md").write_text(f"# Note {i}\n\nPostgreSQL VACUUM note number {i}.\n")
    settings = Settings(reports_dir=tmp_path / "reports", cache_dir=tmp_path / "cache", context_path=None,
                        corpus_dirs=(corpus,))

    class CancelWhileIndexing:  # called from the indexing thread
        def __init__(self) -> None:
            self.task: asyncio.Task | None = None
            self.loop: asyncio.AbstractEventLoop | None = None
            self.cancelled = threading.Event()

        def stage(self, name: str, detail: str = "") -> None:
            if "files read" in detail and self.task is not None:
                task, self.task = self.task, None
                self.loop.call_soon_threadsafe(task.cancel)
                # Hold the indexing thread until the run has been cancelled, so "stopped at the
                # next file" does not depend on which thread the scheduler runs first.
                assert self.cancelled.wait(HANG_GUARD), "the run was not cancelled"

        def counts(self, **values: int) -> None:
            return None

        def note(self, message: str) -> None:
            return None

    async def scenario() -> None:
        progress = CancelWhileIndexing()
        progress.loop = asyncio.get_running_loop()
        progress.task = asyncio.ensure_future(
            research(QUERY, settings=settings, model=Unanswered(), progress=progress, lessons=LessonSelection.none)
        )
        task = progress.task
        task.add_done_callback(lambda _: progress.cancelled.set())
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())  # returns once the indexing thread has ended
    (db,) = (tmp_path / "cache" / "corpus").glob("*.sqlite")
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        indexed = conn.execute("SELECT count(*) FROM files").fetchone()[0]
    finally:
        conn.close()
    assert indexed < total  # it stopped early instead of reading every file
    CorpusIndex(corpus, tmp_path / "cache").refresh()
    assert index_rows(db) == fresh_index_rows(corpus, tmp_path / "fresh-cache")


# --------------------------------------------------------------------------- full and read-only disks


def _fill(folder: Path) -> Path:
    """Write a file into ``folder`` until its file system says ENOSPC."""
    filler = folder / "filler.bin"
    chunk = b"\0" * 65536
    with open(filler, "wb", buffering=0) as handle:
        while True:
            try:
                handle.write(chunk)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC, exc
                break
    return filler


def test_a_full_disk_fails_the_run_clearly_and_keeps_earlier_reports_and_critiques(tmp_path, corpus, server):
    reports = tmp_path / "reports"
    env = cli_env(tmp_path / "home", server.base_url)
    with mounted("-t", "tmpfs", "-o", "size=2m", "tmpfs", target=reports):
        first = run_cli(env, "run", QUERY, "--corpus", str(corpus), "--reports-dir", str(reports),
                        "--wait-critique", cwd=tmp_path)
        assert first.returncode == 0, first.stderr
        before = check_folder(reports)
        assert [len(before[k]) for k in ("reports", "records", "critiques")] == [1, 1, 1]
        kept = snapshot(reports)
        filler = _fill(reports)

        full = run_cli(env, "run", QUERY, "--corpus", str(corpus), "--reports-dir", str(reports),
                       "--wait-critique", cwd=tmp_path)
        assert full.returncode == 5, full.stderr
        (line,) = message_lines(full.stderr)
        assert line.startswith("error: disk full while writing ") and str(reports) in line, line

        record = before["records"][0]
        again = run_cli(env, "critique", "--run", str(record), "--reports-dir", str(reports), cwd=tmp_path)
        assert again.returncode == 5, again.stderr
        assert "disk full" in again.stderr and "Traceback" not in again.stderr

        filler.unlink()
        assert {k: v for k, v in snapshot(reports).items()} == kept  # nothing earlier was touched
        assert temp_files(reports) == []
        after = run_cli(env, "run", QUERY, "--corpus", str(corpus), "--reports-dir", str(reports),
                        "--no-critique", cwd=tmp_path)
        assert after.returncode == 0, after.stderr
        assert len(check_folder(reports)["reports"]) == 2


def test_a_read_only_reports_folder_fails_before_any_model_call_and_keeps_its_files(tmp_path, corpus, server):
    reports = tmp_path / "reports"
    env = cli_env(tmp_path / "home", server.base_url)
    first = run_cli(env, "run", QUERY, "--corpus", str(corpus), "--reports-dir", str(reports), "--wait-critique",
                    cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    kept = snapshot(reports)
    with mounted("--bind", str(reports), target=reports):
        _mount("-o", "remount,bind,ro", str(reports))
        server.clear()
        proc = run_cli(env, "run", QUERY, "--corpus", str(corpus), "--reports-dir", str(reports),
                       "--no-critique", cwd=tmp_path)
        assert proc.returncode == 5, proc.stderr
        (line,) = message_lines(proc.stderr)
        assert line.startswith("error: cannot write ") and "read-only file system" in line, line
        assert server.requests == []  # no tokens spent on a run that could not be saved
    assert snapshot(reports) == kept and temp_files(reports) == []


def test_a_reports_path_under_a_regular_file_fails_with_one_clear_line(tmp_path, corpus, server):
    # Root ignores permission bits, but nobody can make a folder inside a regular file.
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the reports folder's parent should be\n", encoding="utf-8")
    env = cli_env(tmp_path / "home", server.base_url)
    proc = run_cli(env, "run", QUERY, "--corpus", str(corpus), "--reports-dir", str(blocker / "reports"),
                   cwd=tmp_path)
    assert proc.returncode == 5, proc.stderr
    (line,) = message_lines(proc.stderr)
    assert str(blocker) in line and "Not a directory" in line, line
    assert server.requests == []
    assert blocker.read_text(encoding="utf-8").startswith("a file where")


# --------------------------------------------------------------------------- a moving corpus


def test_a_corpus_folder_that_vanishes_mid_run_answers_from_its_index(tmp_path, corpus, server, tap):
    # The first model call (decompose) runs while the corpus is indexed; the folder goes once
    # the run has searched its index, when the first source is scored.
    tap.hooks["relevance"] = lambda: shutil.rmtree(corpus, ignore_errors=True)
    env = cli_env(tmp_path / "home", server.base_url)
    reports = tmp_path / "reports"
    proc = run_cli(env, "run", QUERY, "--corpus", str(corpus), "--reports-dir", str(reports), "--no-critique",
                   cwd=tmp_path)
    assert not corpus.exists()
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    (report,) = check_folder(reports)["reports"]
    entries = source_entries(report.read_text(encoding="utf-8"))
    assert entries and all(str(corpus) in entry for entry in entries.values())

    # The next run over the vanished folder says so in one line, before any model call.
    server.clear()
    again = run_cli(env, "run", QUERY, "--corpus", str(corpus), "--reports-dir", str(reports), cwd=tmp_path)
    assert again.returncode == 2 and message_lines(again.stderr) == [f"error: corpus folder {corpus} does not exist"]
    assert server.requests == []
    (db,) = (tmp_path / "home" / "cache" / "corpus").glob("*.sqlite")
    assert set(index_rows(db)) == set(DOCS)  # the index is intact, not half-emptied


def test_a_corpus_file_rewritten_while_being_indexed_is_skipped_or_whole_never_torn(tmp_path, corpus, server):
    growing = corpus / "growing.md"
    stop = threading.Event()
    versions = [f"# Growing notes\n\n{'PostgreSQL VACUUM dead tuples reclaim space. ' * n}\n" for n in (50, 400)]

    def rewrite() -> None:  # keeps changing size and mtime, like an editor saving over and over
        n = 0
        while not stop.is_set():
            growing.write_text(versions[n % 2], encoding="utf-8")
            n += 1

    writer = threading.Thread(target=rewrite, daemon=True)
    growing.write_text(versions[0], encoding="utf-8")
    writer.start()
    env = cli_env(tmp_path / "home", server.base_url)
    reports = tmp_path / "reports"
    try:
        proc = run_cli(env, "run", QUERY, "--corpus", str(corpus), "--reports-dir", str(reports), "--no-critique",
                       cwd=tmp_path)
    finally:
        stop.set()
        writer.join(timeout=HANG_GUARD)
    assert proc.returncode == 0, proc.stderr
    check_folder(reports)
    (db,) = (tmp_path / "home" / "cache" / "corpus").glob("*.sqlite")
    rows = index_rows(db)
    if "growing.md" in rows:  # indexed whole, as one of the two versions, never a mix
        assert "".join(rows["growing.md"]).count("reclaim space") in (50, 400)
    # Once the file is still, a refresh brings the index to exactly what a fresh build holds.
    CorpusIndex(corpus, tmp_path / "home" / "cache").refresh()
    assert index_rows(db) == fresh_index_rows(corpus, tmp_path / "fresh-cache")
