"""Benchmark the local corpus index: build time, refresh time, query latency, memory, Ctrl-C.

    python -m bench.bench_corpus [--corpus DIR | --generated] [--queries N] [--ctrl-c-after S]

Without --corpus it uses Debian's python3.11-doc HTML when installed, else a generated
corpus of about 500 files. The index goes to a temporary cache folder, deleted after.

Memory is reported twice: this process's own peak (``ru_maxrss``), and the peak of the
whole process tree (this process, the fork server and the extraction workers), sampled
from /proc (see bench/_procs.py: a sum of RSS, which counts shared pages once per
process, and a sum of PSS, which does not). CPU is this process's and, separately,
the processes below it.

Ctrl-C: ``research-agent corpus index`` is started on the same corpus with an empty
cache, in its own session; ``--ctrl-c-after`` seconds later SIGINT goes to its process
group (as a terminal's Ctrl-C does), and the time until it exits is printed, with the
processes of its session still alive after it (0 is the goal). Numbers are printed,
never asserted.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench._procs import TreeSampler, session_members
from bench._util import peak_rss_mb
from research_agent.search.corpus_index import CorpusIndex

PYTHON_DOCS = Path("/usr/share/doc/python3.11-doc/html")
REPO = Path(__file__).resolve().parent.parent
# SIGINT back at its default: a shell that starts a job in the background ignores it for
# the job, and an ignored signal stays ignored across exec.
_DEFAULT_SIGINT = "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])"

DOC_QUERIES = [
    "asyncio event loop run coroutine",
    "sqlite3 connection commit transaction",
    "dataclass frozen field default factory",
    "pathlib resolve symlinks",
    "subprocess run capture output timeout",
    "json dumps ensure_ascii indent",
    "regular expression named group",
    "unicode normalization NFC",
    "thread pool executor submit future",
    "multiprocessing spawn start method",
    "typing protocol runtime_checkable",
    "context manager exit exception",
    "decorator functools wraps",
    "garbage collection reference cycles",
    "socket timeout nonblocking",
    "http client request headers",
    "logging handler formatter level",
    "argparse subcommands",
    "datetime timezone utc offset",
    "decimal rounding precision",
    "hashlib sha256 digest",
    "tempfile named temporary file delete",
    "itertools groupby chain",
    "collections Counter most_common",
    "csv reader dialect quoting",
    "struct pack unpack byte order",
    "signal handler SIGINT KeyboardInterrupt",
    "import system module finder loader",
    "descriptor __get__ __set__",
    "GIL free threading performance",
]

_VOCAB = [
    "vacuum",
    "index",
    "table",
    "tuple",
    "page",
    "buffer",
    "checkpoint",
    "replica",
    "standby",
    "commit",
    "rollback",
    "lock",
    "latch",
    "query",
    "planner",
    "join",
    "hash",
    "merge",
    "sort",
    "scan",
    "sequence",
    "trigger",
    "function",
    "schema",
    "role",
    "grant",
    "backup",
    "restore",
    "archive",
    "segment",
    "log",
    "write",
    "ahead",
    "durability",
    "isolation",
    "snapshot",
    "version",
    "statistics",
    "histogram",
    "sample",
    "vacuuming",
    "bloat",
    "fillfactor",
    "toast",
    "compression",
    "partition",
    "shard",
    "network",
    "socket",
    "timeout",
    "retry",
    "backoff",
    "cache",
    "memory",
    "disk",
    "storage",
    "file",
    "folder",
    "path",
]


def generated_corpus(folder: Path, files: int = 500, seed: int = 7) -> Path:
    """Write ``files`` documents (.md, .txt, .html) of Zipf-distributed words into ``folder``."""
    rng = random.Random(seed)
    weights = [1 / (rank + 1) for rank in range(len(_VOCAB))]
    for i in range(files):
        paras = []
        for _ in range(rng.randint(3, 30)):
            words = rng.choices(_VOCAB, weights, k=rng.randint(20, 120))
            paras.append(" ".join(words).capitalize() + ".")
        kind = i % 3
        sub = folder / f"part{i % 10}"
        sub.mkdir(parents=True, exist_ok=True)
        if kind == 0:
            (sub / f"doc{i}.md").write_text(f"# Document {i}\n\n" + "\n\n".join(paras), encoding="utf-8")
        elif kind == 1:
            (sub / f"doc{i}.txt").write_text("\n\n".join(paras), encoding="utf-8")
        else:
            body = "".join(f"<p>{p}</p>" for p in paras)
            (sub / f"doc{i}.html").write_text(
                f"<html><head><title>Page {i}</title></head><body><article>{body}</article></body></html>",
                encoding="utf-8",
            )
    return folder


def _generated_queries(count: int, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.sample(_VOCAB, rng.randint(1, 4))) for _ in range(count)]


def _percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1))))
    return ordered[k]


def ctrl_c_stop(corpus: Path, cache: Path, after: float) -> str:
    """Start a cold ``corpus index``, press Ctrl-C after ``after`` seconds, say how it stopped."""
    command = [
        sys.executable,
        "-m",
        "research_agent",
        "corpus",
        "index",
        "--cache-dir",
        str(cache),
        str(corpus),
    ]
    with tempfile.TemporaryFile() as stderr:
        proc = subprocess.Popen(
            [sys.executable, "-c", _DEFAULT_SIGINT, *command],
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            start_new_session=True,
        )
        time.sleep(after)
        if proc.poll() is not None:
            return (
                f"the build ended (exit {proc.returncode}) before Ctrl-C at {after:g} s: use a larger corpus"
            )
        members = len(session_members(proc.pid))
        pressed = time.perf_counter()
        os.killpg(proc.pid, signal.SIGINT)
        try:
            code = proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            return "Ctrl-C did not stop it within 120 s (killed)"
        stopped = time.perf_counter() - pressed
        left = _wait_for_empty_session(proc.pid)
        emptied = time.perf_counter() - pressed
        stderr.seek(0)
        said = (stderr.read().decode("utf-8", "replace").strip().splitlines() or [""])[-1]
    return (
        f"Ctrl-C {after:g} s into a cold build ({members} processes): exit {code} in {stopped:.2f} s, "
        f"session empty after {emptied:.2f} s, {len(left)} left; it said {said[:80]!r}"
    )


def _wait_for_empty_session(sid: int, seconds: float = 10.0) -> set[int]:
    """The processes of session ``sid`` still alive after ``seconds`` (killed then)."""
    deadline = time.monotonic() + seconds
    while session_members(sid) and time.monotonic() < deadline:
        time.sleep(0.01)
    left = session_members(sid)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    return left


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--corpus", type=Path, help="corpus folder (default: python3.11-doc HTML or generated)"
    )
    parser.add_argument("--generated", action="store_true", help="use a generated corpus of 500 files")
    parser.add_argument("--queries", type=int, default=30, help="number of queries to time (default 30)")
    parser.add_argument("--token-budget", type=int, default=450)
    parser.add_argument(
        "--ctrl-c-after",
        type=float,
        default=3.0,
        help="seconds into a cold CLI build to press Ctrl-C (0: skip)",
    )
    return parser.parse_args(argv)


def _corpus_and_queries(args: argparse.Namespace, tmp_path: Path) -> tuple[Path, str, list[str]]:
    if args.corpus is not None:
        queries = (DOC_QUERIES * (args.queries // len(DOC_QUERIES) + 1))[: args.queries]
        return args.corpus, str(args.corpus), queries
    if PYTHON_DOCS.exists() and not args.generated:
        queries = (DOC_QUERIES * (args.queries // len(DOC_QUERIES) + 1))[: args.queries]
        return PYTHON_DOCS, f"{PYTHON_DOCS} (Debian python3.11-doc)", queries
    corpus = generated_corpus(tmp_path / "generated")
    return corpus, "generated corpus (500 files)", _generated_queries(args.queries)


def _query_latencies(index: CorpusIndex, queries: list[str], token_budget: int) -> str:
    latencies = []
    hits_per_query = []
    for query in queries:
        started = time.perf_counter()
        hits = index.search(query, limit_files=6, token_budget=token_budget)
        latencies.append((time.perf_counter() - started) * 1000)
        hits_per_query.append(len(hits))
    return (
        f"median {statistics.median(latencies):.1f} ms, "
        f"p95 {_percentile(latencies, 95):.1f} ms over {len(latencies)} queries "
        f"(mean {statistics.mean(hits_per_query):.1f} files per query)"
    )


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    with tempfile.TemporaryDirectory(prefix="bench-corpus-") as tmp:
        tmp_path = Path(tmp)
        corpus, label, queries = _corpus_and_queries(args, tmp_path)
        index = CorpusIndex(corpus, tmp_path / "cache")
        cpu_started = time.process_time()
        with TreeSampler() as tree:
            cold = index.refresh()
        cold_cpu = time.process_time() - cpu_started
        warm_started = time.perf_counter()
        warm = index.refresh()
        warm_wall = time.perf_counter() - warm_started
        latency = _query_latencies(index, queries, args.token_budget)
        index_mb = index.db_path.stat().st_size / 1e6
        ctrl_c = ctrl_c_stop(corpus, tmp_path / "ctrl-c", args.ctrl_c_after) if args.ctrl_c_after > 0 else ""

    skipped = ", ".join(f"{n} {reason}" for reason, n in cold.skipped.items()) or "none"
    print(f"corpus:               {label}")
    print(f"files indexed:        {cold.documents} (skipped: {skipped})")
    print(f"passages:             {cold.passages}")
    print(f"index size:           {index_mb:.1f} MB")
    print(
        f"cold index build:     {cold.seconds:.2f} s wall, {cold_cpu:.2f} s CPU here + "
        f"{tree.children_cpu_s:.2f} s in {tree.children_seen} processes below"
    )
    print(
        f"warm refresh:         {warm.seconds:.3f} s in refresh(), {warm_wall:.3f} s wall "
        f"(indexed {warm.indexed}, unchanged {warm.unchanged})"
    )
    print(f"query latency:        {latency}")
    print(f"peak RSS:             {peak_rss_mb():.0f} MB this process (ru_maxrss)")
    print(f"cold build tree:      {tree.summary()}")
    if ctrl_c:
        print(f"ctrl-c:               {ctrl_c}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
