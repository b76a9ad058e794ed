"""CPU milliseconds of the command line answering at once: ``--version``, ``--help``, a command's help.

Each figure is one fresh process (``research-agent ARGS``, the installed console script; or
``--code DIR`` for another checkout, e.g. ``git worktree add /tmp/base main``), its user + system
CPU time as the kernel counts it for a waited-for child. CPU, not wall time: on a machine shared
with other work the wall time measures the neighbours. Prints every run, the median and the
lowest, and the goal (issue 33: ``--version`` and ``--help`` under 150 ms of CPU, without
importing the pipeline); ``python -c pass`` is the floor no command goes under.

    python -m bench.bench_startup [--times 9] [--code DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

GOAL_MS = 150
CASES = (("python -c pass", None), ("--version", ["--version"]), ("--help", ["--help"]),
         ("review --help", ["review", "--help"]), ("memory list --help", ["memory", "list", "--help"]))  # fmt: skip


def cpu_ms(command: list[str], env: dict[str, str], cwd: str) -> float:
    """User + system CPU of one run of ``command`` (a waited-for child), in milliseconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True,
                   timeout=120)  # fmt: skip
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--times", type=int, default=9, help="fresh processes per case")
    parser.add_argument("--code", type=Path, help="measure this checkout (PYTHONPATH) instead of the installed one")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        env = {"PATH": os.environ.get("PATH", ""), "HOME": home, "XDG_CONFIG_HOME": home, "NO_COLOR": "1"}
        cwd = home
        if args.code is not None:
            env["PYTHONPATH"] = str(args.code.resolve())
        cli = [sys.executable, "-m", "research_agent"]
        print(f"CPU ms per fresh process ({args.times} each; {args.code or 'installed package'}):")
        for name, cli_args in CASES:
            command = [sys.executable, "-c", "pass"] if cli_args is None else [*cli, *cli_args]
            runs = [cpu_ms(command, env, cwd) for _ in range(args.times)]
            goal = f"  goal < {GOAL_MS}: {'met' if statistics.median(runs) < GOAL_MS else 'NOT met'}" if name in (
                "--version", "--help") else ""
            shown = " ".join(f"{ms:.0f}" for ms in runs)
            print(f"  {name:<20} median {statistics.median(runs):6.0f}  lowest {min(runs):6.0f}  [{shown}]{goal}")


if __name__ == "__main__":
    main()
