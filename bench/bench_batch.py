"""``research-agent batch`` against the delayed local endpoint: parallelism, memory, and --rpm.

The real CLI (``python -m research_agent batch``) in a subprocess, a corpus of local notes, the
fake OpenAI-compatible server in this process answering every call after ``--latency`` seconds
(default 0.5), the client allowed 8 calls at once (``RESEARCH_AGENT_LLM_CONCURRENCY=8``: an
endpoint with 8 slots). Each batch critiques its reports inside the batch, as it does for a user.

* **Parallel 1, 4, 8** over ``--questions`` questions (default 50): wall time against the ideal,
  sequential rounds x latency / parallel, where the sequential rounds are those of the parallel-1
  batch (every question's calls that had to wait for each other, critiques included). Efficiency
  is ideal / wall: the goal is at least 80% at parallel 8. A question makes more calls than it
  has rounds (relevance and the claim check ask several at once), so with ``--slots`` slots the
  endpoint itself needs calls x latency / slots at least: that bound is printed beside it, and so
  is the machine's load average (other work on the machine slows every figure here).
* **Memory**: the peak RSS of the CLI's process tree (the CLI and every process below it,
  sampled from /proc) at parallel 8, for 10 questions and for all of them: it must not grow
  with the number of questions.
* **--rpm**: a batch at parallel 8 with ``--rpm`` set; the request rate the server measured
  (requests after the first over the time from first to last, and the most requests in any
  60-second window) must stay at or under it.

    python -m bench.bench_batch [--questions 50] [--latency 0.5] [--rpm 240] [--rpm-questions 20]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench._cli_run import REPO, cli_env
from bench._procs import TreeSampler
from tests.support.fake_openai_server import FakeOpenAIServer, RequestRecord, sequential_rounds
from tests.support.pipeline import DOCS
from tests.support.research_responder import ResearchResponder

ASPECTS = ("reclaim space", "handle dead tuples", "interact with autovacuum", "use the visibility map",
           "affect table bloat", "treat index entries", "decide what to freeze", "lock a table")  # fmt: skip


def questions(count: int) -> list[str]:
    """``count`` distinct questions about the notes."""
    return [f"How does PostgreSQL VACUUM {ASPECTS[n % len(ASPECTS)]} (case {n + 1})?" for n in range(count)]


def write_inputs(folder: Path, count: int) -> tuple[Path, Path]:
    corpus = folder / "corpus"
    corpus.mkdir(parents=True, exist_ok=True)
    for name, (title, text) in DOCS.items():
        (corpus / name).write_text(f"# {title}\n\n{text}\n", encoding="utf-8")
    asked = folder / f"questions-{count}.txt"
    asked.write_text("\n".join(questions(count)) + "\n", encoding="utf-8")
    return corpus, asked


def run_batch(work: Path, count: int, parallel: int, latency: float, *extra: str, slots: int = 8) -> dict:
    """One batch in a fresh reports folder: wall seconds, the server's requests, the tree's peak RSS."""
    corpus, asked = write_inputs(work, count)
    reports = work / f"reports-{count}-{parallel}-{'-'.join(extra) or 'plain'}"
    # The server's threads print a traceback for each keep-alive connection the CLI drops as it exits.
    with FakeOpenAIServer(ResearchResponder(), delay=latency) as server, contextlib.redirect_stderr(io.StringIO()):
        env = {**cli_env(work / "home", work / "cache", server.base_url), "RESEARCH_AGENT_LLM_CONCURRENCY": str(slots)}
        argv = [sys.executable, "-m", "research_agent", "batch", str(asked), "--corpus", str(corpus),
                "--parallel", str(parallel), "--reports-dir", str(reports), *extra]  # fmt: skip
        with TreeSampler(interval=0.1) as sampler:
            started = time.monotonic()
            proc = subprocess.run(argv, env=env, cwd=REPO, capture_output=True, text=True, timeout=3600)
            wall = time.monotonic() - started
        if proc.returncode != 0:
            raise SystemExit(f"batch failed (exit {proc.returncode}): {proc.stderr[-2000:]}")
        requests = [r for r in server.requests if r.route == "chat"]
    return {"wall": wall, "requests": requests, "peak_mb": sampler.peak_children_rss_mb}


def rate(requests: list[RequestRecord]) -> tuple[float, int]:
    """Requests a minute from the first to the last (n - 1 intervals), and the most in any 60 s window."""
    starts = sorted(r.start for r in requests)
    steady = (len(starts) - 1) / (starts[-1] - starts[0]) * 60 if len(starts) > 1 else 0.0
    busiest = max(sum(1 for t in starts if first <= t < first + 60) for first in starts)
    return steady, busiest


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=50)
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--rpm", type=int, default=240)
    parser.add_argument("--rpm-questions", type=int, default=20)
    parser.add_argument("--slots", type=int, default=8, help="calls the endpoint takes at once")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-batch-") as tmp:
        work = Path(tmp)
        print(f"{args.questions} questions, {args.latency:g} s per call, {args.slots} endpoint slots; "
              f"load average {os.getloadavg()[0]:.1f}")  # fmt: skip
        runs = {p: run_batch(work, args.questions, p, args.latency, slots=args.slots) for p in (1, 4, 8)}
        rounds, calls = sequential_rounds(runs[1]["requests"]), len(runs[1]["requests"])
        print(f"sequential rounds at parallel 1: {rounds} ({rounds / args.questions:.1f} a question), {calls} calls "
              f"({calls / args.questions:.1f} a question)")  # fmt: skip
        print("parallel   wall s   ideal s   efficiency   slot-bound s   efficiency   peak RSS MB (CLI tree)")
        for parallel, run in runs.items():
            ideal = rounds * args.latency / parallel
            bound = max(ideal, calls * args.latency / args.slots)
            print(f"{parallel:>8}   {run['wall']:>6.1f}   {ideal:>7.1f}   {ideal / run['wall']:>9.0%}   "
                  f"{bound:>12.1f}   {bound / run['wall']:>9.0%}   {run['peak_mb']:>8.0f}")  # fmt: skip
        small = run_batch(work, 10, 8, args.latency, slots=args.slots)
        print(f"memory: peak RSS of the CLI tree at parallel 8: {small['peak_mb']:.0f} MB for 10 questions, "
              f"{runs[8]['peak_mb']:.0f} MB for {args.questions}")  # fmt: skip
        limited = run_batch(work, args.rpm_questions, 8, args.latency, "--rpm", str(args.rpm), slots=args.slots)
        steady, busiest = rate(limited["requests"])
        verdict = "at or under" if steady <= args.rpm and busiest <= args.rpm else "OVER"
        print(f"--rpm {args.rpm} ({args.rpm_questions} questions, parallel 8): {len(limited['requests'])} requests in "
              f"{limited['wall']:.1f} s; {steady:.1f} a minute first to last, at most {busiest} in any 60 s: {verdict}")
        print(f"load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
