"""Benchmark the local corpus index: build time, refresh time, query latency, memory.

    python bench/bench_corpus.py [--corpus DIR | --generated] [--queries N]

Without --corpus it uses Debian's python3.11-doc HTML when installed, else a generated
corpus of about 500 files. The index goes to a temporary cache folder, deleted after.
Numbers are printed, never asserted.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _util import peak_rss_mb  # noqa: E402

from research_agent.search.corpus_index import CorpusIndex  # noqa: E402

PYTHON_DOCS = Path("/usr/share/doc/python3.11-doc/html")

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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--corpus", type=Path, help="corpus folder (default: python3.11-doc HTML or generated)"
    )
    parser.add_argument("--generated", action="store_true", help="use a generated corpus of 500 files")
    parser.add_argument("--queries", type=int, default=30, help="number of queries to time (default 30)")
    parser.add_argument("--token-budget", type=int, default=450)
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="bench-corpus-") as tmp:
        tmp_path = Path(tmp)
        if args.corpus is not None:
            corpus, label = args.corpus, str(args.corpus)
            queries = (DOC_QUERIES * (args.queries // len(DOC_QUERIES) + 1))[: args.queries]
        elif PYTHON_DOCS.exists() and not args.generated:
            corpus, label = PYTHON_DOCS, f"{PYTHON_DOCS} (Debian python3.11-doc)"
            queries = (DOC_QUERIES * (args.queries // len(DOC_QUERIES) + 1))[: args.queries]
        else:
            corpus = generated_corpus(tmp_path / "generated")
            label = "generated corpus (500 files)"
            queries = _generated_queries(args.queries)

        index = CorpusIndex(corpus, tmp_path / "cache")
        cpu_started = time.process_time()
        cold = index.refresh()
        cold_cpu = time.process_time() - cpu_started
        warm = index.refresh()

        latencies = []
        hits_per_query = []
        for query in queries:
            started = time.perf_counter()
            hits = index.search(query, limit_files=6, token_budget=args.token_budget)
            latencies.append((time.perf_counter() - started) * 1000)
            hits_per_query.append(len(hits))
        index_mb = index.db_path.stat().st_size / 1e6

    skipped = ", ".join(f"{n} {reason}" for reason, n in cold.skipped.items()) or "none"
    print(f"corpus:               {label}")
    print(f"files indexed:        {cold.documents} (skipped: {skipped})")
    print(f"passages:             {cold.passages}")
    print(f"index size:           {index_mb:.1f} MB")
    print(f"cold index build:     {cold.seconds:.2f} s wall, {cold_cpu:.2f} s CPU")
    print(f"warm refresh:         {warm.seconds:.3f} s (indexed {warm.indexed}, unchanged {warm.unchanged})")
    print(
        f"query latency:        median {statistics.median(latencies):.1f} ms, "
        f"p95 {_percentile(latencies, 95):.1f} ms over {len(latencies)} queries "
        f"(mean {statistics.mean(hits_per_query):.1f} files per query)"
    )
    print(f"peak RSS:             {peak_rss_mb():.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
