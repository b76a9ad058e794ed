"""Every function that reads model output, report text or user files takes time linear in its input.

Each function of tests/support/linear_text.py runs in a subprocess of its own on 512 KB of each
piece of its syntax repeated (and each opener followed by a long run), under RLIMIT_CPU of 30 s
per input. A linear function needs well under a second per input; the quadratic patterns this
replaced needed 10 s for 16 KB of ``[a](`` and would need hours for 512 KB (a thousand times 16
KB's work). That margin is what is tested, not a timing: the limit is CPU time, and it is
hundreds of times what a pass needs. (512 KB since 0.5.0: 2 MB took most of the suite's time.)
"""

from __future__ import annotations

import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from research_agent.fetch.processes.pool import cpu_budget
from tests.support.linear_text import FUNCTIONS

ROOT = Path(__file__).resolve().parent.parent


def run(name: str) -> str | None:
    """None when ``name`` handled every input; else what stopped it."""
    proc = subprocess.run([sys.executable, "-m", "tests.support.linear_text", name], capture_output=True,
                          text=True, cwd=ROOT, timeout=1800)
    if proc.returncode == 0:
        return None
    last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
    if proc.returncode in (-signal.SIGXCPU, -signal.SIGKILL):
        return f"{name}: more than 30 s of CPU on {last.strip()}"
    return f"{name}: exit {proc.returncode}: {last}"


def test_every_text_function_is_linear_on_half_a_megabyte_of_its_own_syntax() -> None:
    with ThreadPoolExecutor(max_workers=min(2, cpu_budget())) as pool:
        problems = [p for p in pool.map(run, FUNCTIONS) if p is not None]
    assert problems == [], "\n".join(problems)
