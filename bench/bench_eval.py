"""``research-agent eval run`` of the built-in world against the local fake endpoint: time and memory.

The real CLI (``python -m research_agent eval run``) in a subprocess, the fake OpenAI-compatible
server in this process answering every call after ``--latency`` seconds (default 0.1) with the
research responder (an endpoint that ignores lessons), the client allowed ``--slots`` calls at once.
Each eval critiques its reports inside the eval, as it does for a user.

* **Time**: the wall time of the eval of the built-in world's first 5 questions, of all of them,
  and of all of them over 3 rounds, with the runs and model calls each made, and the seconds a run.
* **Memory**: the peak RSS of the CLI's process tree (sampled from /proc) for each: it must stay
  flat as the number of runs grows (grades are small; reports are read one at a time). A first
  eval of one question, not shown, builds the world's corpus index, so that each measured eval
  finds it built (building it starts extraction workers, which would weigh on the first only).
* **Grades**: the fact recall, cited precision, unsupported names and numbers a report, and the
  rounds' verdict the scorecard printed, so a change to the grader shows here too.

    python -m bench.bench_eval [--latency 0.1] [--slots 4] [--seed 42]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench._cli_run import REPO, cli_env
from bench._procs import TreeSampler
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.research_responder import ResearchResponder


def run_eval(work: Path, name: str, latency: float, slots: int, *extra: str) -> dict:
    """One eval in a fresh reports folder: wall seconds, chat requests, the tree's peak RSS, its JSON."""
    reports = work / f"reports-{name}"
    with FakeOpenAIServer(ResearchResponder(), delay=latency) as server, contextlib.redirect_stderr(io.StringIO()):
        env = {**cli_env(work / "home", work / "cache", server.base_url), "RESEARCH_AGENT_LLM_CONCURRENCY": str(slots)}
        argv = [sys.executable, "-m", "research_agent", "eval", "run", "--json", "--reports-dir", str(reports), *extra]
        with TreeSampler(interval=0.1) as sampler:
            started = time.monotonic()
            proc = subprocess.run(argv, env=env, cwd=REPO, capture_output=True, text=True, timeout=3600)
            wall = time.monotonic() - started
        if proc.returncode != 0:
            raise SystemExit(f"eval failed (exit {proc.returncode}): {proc.stderr[-2000:]}")
        calls = sum(1 for r in server.requests if r.route == "chat")
    return {"wall": wall, "calls": calls, "peak_mb": sampler.peak_children_rss_mb, "data": json.loads(proc.stdout)}


def _line(name: str, run: dict) -> str:
    s = run["data"]["summary"]
    runs = s["reports"] + s["failed"]
    return (f"{name:<22} {runs:>5} {run['calls']:>6} {run['wall']:>8.1f} {run['wall'] / max(1, runs):>8.2f} "
            f"{run['peak_mb']:>9.0f}   recall {s['fact_recall']}, cited {s['cited_precision']}, "
            f"unsupported {s['unsupported_per_report']}/report")  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=0.1, help="seconds the fake endpoint takes a call")
    parser.add_argument("--slots", type=int, default=4, help="calls the endpoint takes at once")
    parser.add_argument("--seed", type=int, default=42, help="the built-in world")
    args = parser.parse_args(argv)
    seed = ("--seed", str(args.seed))
    with tempfile.TemporaryDirectory(prefix="bench-eval-") as tmp:
        work = Path(tmp)
        print(f"built-in world of seed {args.seed}; {args.latency:g} s a call, {args.slots} endpoint slots; "
              f"load average {os.getloadavg()[0]:.1f}")  # fmt: skip
        run_eval(work, "warm", args.latency, args.slots, *seed, "--limit", "1", "--no-critique")  # builds the index
        runs = {
            "first 5 questions": run_eval(work, "five", args.latency, args.slots, *seed, "--limit", "5"),
            "every question": run_eval(work, "all", args.latency, args.slots, *seed),
            "every question x 3": run_eval(work, "rounds", args.latency, args.slots, *seed, "--rounds", "3"),
        }
        print(f"{'eval':<22} {'runs':>5} {'calls':>6} {'wall s':>8} {'s/run':>8} {'peak MB':>9}   grades")
        for name, run in runs.items():
            print(_line(name, run))
        for row in runs["every question x 3"]["data"]["rounds"][1:]:
            print(f"round {row['round']}: {row['vs_round_1']['words']}")
        small, large = runs["first 5 questions"]["peak_mb"], runs["every question x 3"]["peak_mb"]
        print(f"memory: peak RSS of the CLI tree {small:.0f} MB for the first 5 questions, {large:.0f} MB for "
              f"{runs['every question x 3']['data']['summary']['reports']} runs ({large / max(small, 1):.2f}x)")
        print(f"load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
