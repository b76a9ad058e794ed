"""Benchmark memory at scale: 5,000 critique files (issue 26, point 11).

Goals: ``memory list`` over 5,000 critiques answers in under 2 s once the index is warm, and
the first run after 5,000 new critique files appear spends under 5 s in memory (its lesson
selection: the offer before its first plan, then the named domain). Both are printed, never
asserted. Every figure comes from a fresh process (as a user meets it), with its wall time
and the CPU time it and its workers used: on a busy machine the wall time mostly measures
waiting for a CPU.

``--code DIR`` measures another checkout of research-agent (e.g. ``git worktree add /tmp/base
main``) with this environment's packages, for before/after figures.

    .venv/bin/python -m bench.bench_memory_scale [--files 5000] [--repeat 3] [--code DIR]
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

from bench.bench_memory import NOW, make_critiques

# Run the code under test, not the installed one: the editable install's finder is dropped.
_PRELUDE = """
import sys
sys.meta_path[:] = [f for f in sys.meta_path if "__editable__" not in getattr(f, "__module__", "")]
sys.path.insert(0, {code!r})
"""
_CLI = _PRELUDE + """
from research_agent.cli import main
sys.argv = ["research-agent", *sys.argv[1:]]
main()
"""
_RUN_SELECTION = _PRELUDE + """
import inspect, random
from datetime import datetime
from pathlib import Path
from research_agent.memory.lessons.run import MemoryLessons
meta, state = Path(sys.argv[1]), Path(sys.argv[2])
kwargs = {{"state_dir": state}} if "state_dir" in inspect.signature(MemoryLessons).parameters else {{}}
lessons = MemoryLessons(meta, now=datetime.fromisoformat({now!r}), rng=random.Random(1), control_fraction=0.0, **kwargs)
offered = lessons.offer()
given = lessons.given("technology")
print(len(offered.by_domain), len(given.considered), given.available if hasattr(given, "available") else True)
"""


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """(wall s, CPU s of the process and everything it waited for, stdout) of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{argv[3:]} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--code", type=Path, default=Path(__file__).resolve().parent.parent)
    args = parser.parse_args()
    code = str(args.code.resolve())
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPU(s); code under test: {code}")
    with tempfile.TemporaryDirectory() as tmp:
        template = Path(tmp) / "template"
        start = time.perf_counter()
        make_critiques(template, args.files, rng=random.Random(42), span=timedelta(days=20))
        print(f"{args.files:,} critique files generated in {time.perf_counter() - start:.1f} s")
        reports = Path(tmp) / "reports"
        shutil.copytree(template, reports / "meta")  # new files: new inodes, no index
        env = {**os.environ, "RESEARCH_AGENT_STATE_DIR": str(Path(tmp) / "state"), "NO_COLOR": "1", "COLUMNS": "160"}
        python = sys.executable

        run = [python, "-c", _RUN_SELECTION.format(code=code, now=NOW.isoformat()), str(reports / "meta"),
               env["RESEARCH_AGENT_STATE_DIR"]]  # fmt: skip
        wall, cpu, out = timed(run, env)
        goal = "ok" if wall < 5 else "OVER GOAL"
        print(f"first run after {args.files:,} new files appear (memory only): {wall:6.2f} s wall, "
              f"{cpu:6.2f} s CPU (goal < 5 s: {goal}) [domains offered, considered, available: {out.strip()}]")  # fmt: skip
        wall, cpu, _ = timed(run, env)
        print(f"the next run (index warm):                         {wall:6.2f} s wall, {cpu:6.2f} s CPU")

        cli = [python, "-c", _CLI.format(code=code), "memory", "--reports-dir", str(reports), "list"]
        for label, extra in (("table", []), ("--json", ["--json"])):
            times = [timed(cli + extra, env) for _ in range(args.repeat)]
            wall = statistics.median(t[0] for t in times)
            cpu = statistics.median(t[1] for t in times)
            goal = "ok" if wall < 2 else "OVER GOAL"
            print(f"memory list {label:<7} over {args.files:,} critiques, warm: median {wall:6.2f} s wall, "
                  f"{cpu:6.2f} s CPU (goal < 2 s: {goal}); {len(times[0][2].splitlines()):,} lines out")  # fmt: skip


if __name__ == "__main__":
    main()
