"""Crash safety and concurrency (issue 6): SIGKILL at random points, eight runs at once.

Kill points are chosen by a seeded generator as "after the k-th model answer, plus a
short pause", so they land in every stage (starting, indexing, each model call, the
write, the critique) on a fast or a slow machine alike; no assertion depends on time.
"""

from __future__ import annotations

import random
import signal
import sqlite3
import time
from collections import Counter
from pathlib import Path

import yaml

from research_agent.files.atomic import TEMP_SUFFIX
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.pipeline import QUERY, write_docs
from tests.support.reliability import (
    HANG_GUARD,
    Tap,
    check_folder,
    check_report,
    cli_env,
    fresh_index_rows,
    index_rows,
    run_cli,
    start_cli,
    temp_files,
)

KILLS = 20


def _wait_for_answers(tap: Tap, proc, count: int) -> bool:
    """Wait until the server has answered ``count`` model calls, or the process ended."""
    while proc.poll() is None:
        if tap.wait_for(lambda stages: len(stages) >= count, timeout=0.05):
            return True
    return False


def test_sigkill_at_random_points_never_leaves_a_partial_file_and_the_next_run_works(tmp_path):
    corpus = write_docs(tmp_path / "corpus")
    reports = tmp_path / "reports"
    rng = random.Random(20240606)
    tap = Tap()
    landed: Counter[str] = Counter()
    with FakeOpenAIServer(tap) as server:
        env = cli_env(tmp_path / "home", server.base_url)
        for i in range(KILLS):
            server.delay = rng.uniform(0.05, 0.2)
            # after 1-10 answers (a standard run asks 9 model calls, 10 with its critique); every
            # seventh run is killed before any answer: while starting, indexing or classifying
            answers = 0 if i % 7 == 3 else rng.randint(1, 10)
            pause = rng.uniform(0.0, 0.25) if answers else rng.uniform(0.1, 1.5)
            tap.reset()
            tap.marker = f"Attempt {i}"
            proc = start_cli(env, "run", f"{QUERY} {tap.marker}", "--corpus", str(corpus), "--reports-dir",
                             str(reports), "--wait-critique" if i % 2 == 0 else "--no-critique", cwd=tmp_path)
            try:
                if answers:
                    _wait_for_answers(tap, proc, answers)
                time.sleep(pause)  # where the kill lands, not an assertion
                alive = proc.poll() is None
                proc.send_signal(signal.SIGKILL)
            finally:
                proc.wait(timeout=HANG_GUARD)
                proc.communicate(timeout=HANG_GUARD)
            landed[f"after {tap.stages[-1]}" if tap.stages else "before any call"] += 1 if alive else 0
            landed["finished before the kill"] += 0 if alive else 1
            check_folder(reports)  # after every kill: only complete files

        print("SIGKILL landed:", dict(landed))  # visible with -s; shows the spread over stages
        before = check_folder(reports)
        # A kill inside the write itself leaves a temp file; make sure at least one exists,
        # named as the dead writer's (the last killed pid) exactly as fsutil names them.
        for folder, name in ((reports, "x.md"), (reports / "meta", "run-x.yaml")):
            (folder / f".{name}.{proc.pid}.0badf00d{TEMP_SUFFIX}").write_text("half a fi", encoding="utf-8")

        tap.reset()
        tap.marker = ""
        server.delay = 0.0
        proc = run_cli(env, "run", QUERY, "--corpus", str(corpus), "--reports-dir", str(reports),
                       "--wait-critique", cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert check_report(Path(proc.stdout.strip()))["query"] == QUERY
        after = check_folder(reports)
        assert len(after["reports"]) == len(before["reports"]) + 1
        assert len(after["critiques"]) == len(before["critiques"]) + 1
        assert temp_files(reports) == []  # whatever the kills left, the next run cleaned up
        validate = run_cli(env, "memory", "--reports-dir", str(reports), "validate", cwd=tmp_path)
        assert validate.returncode == 0, validate.stdout + validate.stderr
    (db,) = (tmp_path / "home" / "cache" / "corpus").glob("*.sqlite")
    assert index_rows(db) == fresh_index_rows(corpus, tmp_path / "fresh-cache")


def test_eight_runs_at_once_share_reports_and_corpus_index_without_losing_or_mixing_anything(tmp_path):
    corpus = write_docs(tmp_path / "corpus")
    reports = tmp_path / "reports"
    names = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
    queries = [f"{QUERY} Team {name}" for name in names]
    with FakeOpenAIServer(Tap(), delay=0.05) as server:
        env = cli_env(tmp_path / "home", server.base_url)
        procs = [
            start_cli(env, "run", query, "--corpus", str(corpus), "--reports-dir", str(reports), "--wait-critique",
                      cwd=tmp_path)
            for query in queries
        ]
        outcomes = []
        for proc in procs:
            try:
                out, err = proc.communicate(timeout=180)
            finally:
                if proc.poll() is None:
                    proc.kill()
            outcomes.append((proc.returncode, out, err))
        validate = run_cli(env, "memory", "--reports-dir", str(reports), "validate", cwd=tmp_path)

    for code, _out, err in outcomes:
        assert code == 0, err
    for query, (_code, out, _err) in zip(queries, outcomes, strict=True):
        assert check_report(Path(out.strip()))["query"] == query  # each run got its own report
    found = check_folder(reports)  # records name their own reports; critiques their own records
    assert [len(found[k]) for k in ("reports", "records", "critiques")] == [8, 8, 8]
    records = [yaml.safe_load(p.read_text(encoding="utf-8")) for p in found["records"]]
    assert sorted(r["query"] for r in records) == sorted(queries)
    assert len({r["id"] for r in records}) == 8
    assert temp_files(reports) == []
    assert validate.returncode == 0 and "8 valid, 0 invalid" in validate.stdout, validate.stdout

    (db,) = (tmp_path / "home" / "cache" / "corpus").glob("*.sqlite")
    assert index_rows(db) == fresh_index_rows(corpus, tmp_path / "fresh-cache")  # not corrupted
    conn = sqlite3.connect(db)
    try:
        first, last, count = conn.execute("SELECT min(id), max(id), count(*) FROM files").fetchone()
    finally:
        conn.close()
    assert (first, last) == (1, count)  # every file inserted exactly once: the corpus was indexed once
