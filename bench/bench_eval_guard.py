"""Ground truth as the guard of a speed change: the built-in eval world, before and after, paired.

``research-agent eval run`` (the real CLI, standard mode, no critique) of the built-in world of
each ``--seeds`` against the fake endpoint on 127.0.0.1 whose writer copies its sources' sentences
(``tests/support/eval_writers.CopyingResponder``): a fair guard for "does the pipeline still give
the writer the right sources and keep the citations right". With ``--before DIR`` (another
checkout, e.g. ``git worktree add --detach /tmp/before main``) the same evals run from that
checkout first, and ``research-agent eval compare`` prints the paired difference of each seed
(fact recall, cited precision, unsupported names and numbers, with 90% intervals).

Per eval it prints fact recall, cited precision, and the chat calls, prompt tokens
(``len(json.dumps(messages)) // 4``) and sequential rounds a run took (medians over the runs,
from the server's records), and how many runs drafted twice in one plan (a relevance that
disagreed with the draft written beside it).

    python -m bench.bench_eval_guard [--seeds 42,7] [--before DIR] [--slots 4] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

from bench._cli_run import REPO, cli_env, message_tokens
from tests.support.eval_writers import CopyingResponder
from tests.support.fake_openai_server import FakeOpenAIServer, sequential_rounds


class _Tagged(CopyingResponder):
    """The copying writer; each call's stage, prompt tokens and question kept, to group calls by run."""

    def __init__(self) -> None:
        super().__init__(viability=80)
        self.calls: list[tuple[str, str, int]] = []

    def __call__(self, body: dict, stage: str) -> str:
        user = "\n".join(m["content"] for m in body.get("messages", []) if m.get("role") == "user")
        question = next((line for line in user.splitlines() if line.startswith(("Question:", "Question the"))), "")
        self.calls.append((stage, question.split(":", 1)[-1].strip(), message_tokens(body.get("messages", []))))
        return super().__call__(body, stage)


def run_eval(code: Path, work: Path, name: str, seed: int, slots: int) -> dict:
    """One eval of the built-in world of ``seed`` from the checkout ``code``: its JSON, calls and tokens."""
    responder = _Tagged()
    reports = work / f"reports-{name}"
    with FakeOpenAIServer(responder, delay=0.2) as server:  # calls of a round overlap
        env = {**cli_env(work / "home", work / "cache", server.base_url),
               "RESEARCH_AGENT_LLM_CONCURRENCY": str(slots), "PYTHONPATH": str(code)}  # fmt: skip
        argv = [sys.executable, "-m", "research_agent", "eval", "run", "--seed", str(seed), "--no-critique",
                "--json", "--parallel", "1", "--reports-dir", str(reports)]  # fmt: skip
        proc = subprocess.run(argv, env=env, cwd=code, capture_output=True, text=True, timeout=3600)
        if proc.returncode != 0:
            raise SystemExit(f"eval failed (exit {proc.returncode}): {proc.stderr[-2000:]}")
        records = list(server.requests)
    data = json.loads(proc.stdout)
    per_run: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for stage, question, tokens in responder.calls:
        per_run[question].append((stage, tokens))
    drafts = [sum(1 for stage, _ in calls if stage == "draft") for calls in per_run.values()]
    return {
        "data": data, "path": next(reports.glob("eval-*.json")),
        "calls": statistics.median(len(calls) for calls in per_run.values()),
        "tokens": statistics.median(sum(t for _, t in calls) for calls in per_run.values()),
        "redrafts": sum(1 for n in drafts if n > 1), "runs": len(per_run),
        "rounds": sequential_rounds(records) / max(1, len(per_run)),
    }  # fmt: skip


def _line(label: str, run: dict) -> str:
    s = run["data"]["summary"]
    return (f"{label:<16} fact recall {s['fact_recall']:.3f}  cited precision {s['cited_precision']:.3f}  "
            f"unsupported/report {s['unsupported_per_report']:.2f}  runs {run['runs']}  "
            f"calls/run {run['calls']:.0f}  prompt tokens/run {run['tokens']:,.0f}  "
            f"runs drafted twice {run['redrafts']}")  # fmt: skip


def compare(a: Path, b: Path, work: Path) -> str:
    argv = [sys.executable, "-m", "research_agent", "eval", "compare", str(a), str(b), "--reports-dir", str(work)]
    env = {**cli_env(work / "home", work / "cache", None)}
    proc = subprocess.run(argv, env=env, cwd=REPO, capture_output=True, text=True, timeout=600)
    return (proc.stdout or proc.stderr).strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", default="42,7", help="built-in worlds, comma-separated")
    parser.add_argument("--before", type=Path, help="another checkout to measure first")
    parser.add_argument("--slots", type=int, default=4, help="calls the client sends at once")
    parser.add_argument("--out", type=Path, help="keep the evals here (default: a temporary folder)")
    parser.add_argument("--label", default="after", help="what to call this checkout's evals")
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    with tempfile.TemporaryDirectory(prefix="bench-guard-") as tmp:
        work = args.out or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        print(f"built-in worlds {seeds}; copying writer; {args.slots} slots; load {os.getloadavg()[0]:.1f}")
        for seed in seeds:
            runs = {}
            for label, code in ([("before", args.before)] if args.before else []) + [(args.label, REPO)]:
                runs[label] = run_eval(code.resolve(), work, f"{label}-{seed}", seed, args.slots)
                print(_line(f"seed {seed} {label}", runs[label]), flush=True)
            if "before" in runs:
                print(compare(runs["before"]["path"], runs[args.label]["path"], work), flush=True)


if __name__ == "__main__":
    main()
