"""A model server that ignores ``max_tokens``: the writer streams 20,000 (or 50,000) short sections.

Issue 31 point 1's attack, measured: a standard run with ``--timeout 30`` (``--timeout 60`` for
50,000 sections) against the fake OpenAI-compatible server on 127.0.0.1, the writer's answer being
``## Part n`` sections of one sentence each (0.9 MB for 20,000). Each run is a fresh process
running ``research()`` with a watcher task beside it that sleeps 20 ms at a time: the longest it
overslept is the longest the event loop was held, i.e. how long another MCP client's
``initialize`` would have waited; the CPU time the loop's thread used in that longest stretch says
how much of it was work rather than waiting for a CPU on a busy machine. Printed per run: wall
seconds, the longest hold (wall, and CPU), peak RSS, the sections published, and how the run ended.

    python -m bench.bench_hostile_writer [--before DIR] [--sections 20000,50000]

``--before DIR`` runs the same against another checkout (e.g. ``git archive main | tar -x -C DIR``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from bench._cli_run import REPO, cli_env
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.pipeline import DOCS, QUERY
from tests.support.research_responder import ResearchResponder

CHILD = r"""
import asyncio, json, resource, sys, time
from pathlib import Path
from research_agent.config import load_settings
from research_agent.pipeline import research

async def main(corpus, reports, timeout):
    lags, cpu = [0.0], [0.0]
    async def watch():
        while True:
            start, used = time.perf_counter(), time.thread_time()
            await asyncio.sleep(0.02)
            lags.append(time.perf_counter() - start - 0.02)
            cpu.append(time.thread_time() - used)
    watcher = asyncio.create_task(watch())
    settings = load_settings({"corpus_dirs": (Path(corpus),), "reports_dir": Path(reports), "run_timeout": timeout,
                              "critique": False, "context_path": None})
    start, outcome, sections = time.perf_counter(), "", 0
    try:
        result = await research(__import__("sys").argv[4], settings=settings)
        outcome = f"exit 0 (stop: {result.run_record.stop_reason or 'done'}, cut: {result.run_record.draft_cut or '-'})"
        sections = result.report_markdown.count("\n## Part ")
    except Exception as exc:
        outcome = f"{type(exc).__name__}: {' '.join(str(exc).split())[:120]}"
    wall = time.perf_counter() - start
    watcher.cancel()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"wall": wall, "held": max(lags), "held_cpu": max(cpu), "rss_mb": rss, "sections": sections,
                      "outcome": outcome}))

asyncio.run(main(sys.argv[1], sys.argv[2], float(sys.argv[3])))
"""


class Endless(ResearchResponder):
    """The research responder, with a writer that ignores its limits."""

    def __init__(self, sections: int) -> None:
        super().__init__()
        self.sections = sections

    def _draft(self, system: str, user: str) -> str:
        return "".join(f"## Part {n}\n\nPlain VACUUM marks space in part {n} as reusable [1].\n\n"
                       for n in range(self.sections))  # fmt: skip

    def _revise(self, system: str, user: str) -> str:
        return self._draft(system, user)


def measure(src: Path, sections: int, timeout: float) -> dict:
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer(Endless(sections)) as server:
        home = Path(tmp)
        corpus = home / "corpus"
        corpus.mkdir()
        for name, (title, text) in DOCS.items():
            (corpus / name).write_text(f"# {title}\n\n{text}\n", encoding="utf-8")
        env = {**cli_env(home, home / "cache", server.base_url), "PYTHONPATH": str(src)}
        done = subprocess.run([sys.executable, "-c", CHILD, str(corpus), str(home / "reports"), str(timeout), QUERY],
                              cwd=src, env=env, capture_output=True, text=True, timeout=1800)  # fmt: skip
    if done.returncode != 0:
        return {"wall": 0, "held": 0, "held_cpu": 0, "rss_mb": 0, "sections": 0, "outcome": done.stderr.strip()[-200:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, help="another checkout to measure the same way")
    parser.add_argument("--sections", default="20000,50000", help="comma-separated section counts")
    args = parser.parse_args()
    versions = [("this", REPO)] + ([("before", args.before)] if args.before else [])
    print(f"{'version':<8} {'sections':>8} {'timeout':>7} {'wall':>8} {'held':>8} {'(cpu)':>8} {'RSS':>8} {'kept':>5}  outcome")
    for count in (int(n) for n in args.sections.split(",")):
        timeout = 30.0 if count <= 20_000 else 60.0
        for label, src in versions:
            row = measure(src, count, timeout)
            print(f"{label:<8} {count:>8} {timeout:>6.0f}s {row['wall']:>7.1f}s {row['held']:>7.2f}s {row['held_cpu']:>7.2f}s "
                  f"{row['rss_mb']:>6.0f}MB {row['sections']:>5}  {row['outcome']}", flush=True)  # fmt: skip
    print("goal: --timeout holds within a few seconds; no hold of the event loop near 1 s")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
