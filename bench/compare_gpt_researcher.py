"""OPTIONAL: research-agent and GPT Researcher side by side on the same question and folder.

Not a test and not a dependency: it runs only where GPT Researcher is installed, in an
interpreter of its own (default ``/opt/gptr/venv/bin/python``; ``--gptr-python``), e.g.::

    python3.11 -m venv /opt/gptr/venv && /opt/gptr/venv/bin/pip install gpt-researcher==0.15.1

Both tools answer the same question over the same local folder (python3.11-doc's HTML by
default; ``--corpus DIR``) against the same OpenAI-compatible server on 127.0.0.1, which
answers every call, chat or embeddings, after a fixed delay (``--latencies``, default
0.5 and 2 s). research-agent runs as its CLI (``python -m research_agent run --corpus``,
standard mode, no critique) with its corpus index built beforehand and kept between runs;
GPT Researcher runs a research_report with ``REPORT_SOURCE=local`` (it reads and embeds the
folder on every run), no retriever that could reach a search engine, and answers from
``bench/_gptr_responder.py``. For each latency it prints the medians over ``--repeat``
runs (default 3): wall time, sequential LLM rounds (chat calls; and counting embedding
calls), chat calls, embedding calls, prompt tokens (``len(json.dumps(messages)) // 4``
summed over chat calls, as issue 13 counts them) and the peak RSS of each tool's
process tree.

GPT Researcher and its dependencies may try to reach the internet, so run this inside a
network namespace with only loopback; it refuses to start GPT Researcher otherwise::

    unshare -n sh -c 'ip link set lo up; .venv/bin/python -m bench.compare_gpt_researcher'

If GPT Researcher cannot be imported (or the network is not isolated) it says so in one
line and exits 2; with ``--ours-anyway`` it first prints research-agent's side.

    python -m bench.compare_gpt_researcher [--latencies 0.5,2] [--repeat 3] [--corpus DIR]
        [--question Q] [--gptr-python PATH] [--cache-dir DIR] [--ours-anyway] [--allow-network]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
from pathlib import Path

from bench._cli_run import run_cli, startup_seconds
from bench._gptr import GptrInstall, ToolRun, find_gptr, gptr_startup, network_isolated, run_gptr
from bench._procs import TreeSampler, descendants
from bench.bench_pipeline import DEFAULT_CACHE, DOCS, QUERY, prepare_corpus
from research_agent.config import MODES
from tests.support.research_responder import ResearchResponder

DEFAULT_GPTR_PYTHON = Path("/opt/gptr/venv/bin/python")
MODE = "standard"
ROWS = (  # (label, field, format)
    ("wall time", "wall", "{:.1f} s"),
    ("sequential LLM rounds (chat)", "rounds", "{:.0f}"),
    ("longest chain of calls, embedding calls too", "chain", "{:.0f}"),
    ("chat calls", "chat_calls", "{:.0f}"),
    ("embedding calls", "embedding_calls", "{:.0f}"),
    ("prompt tokens (chat)", "prompt_tokens", "{:,.0f}"),
    ("embedding input tokens", "embedding_tokens", "{:,.0f}"),
    ("peak RSS (process tree)", "peak_rss_mb", "{:.0f} MB"),
    ("fixed overhead (wall - chain x latency)", "overhead", "{:.1f} s"),
)


def run_ours(question: str, corpus: Path, cache_dir: Path, latency: float) -> ToolRun:
    """One research-agent CLI run; its process tree's peak RSS sampled from /proc."""
    with TreeSampler(exclude=descendants(os.getpid())) as tree:  # not the index build's forkserver
        run = run_cli(question, corpus, cache_dir, ResearchResponder(viability=80), latency=latency, mode=MODE)
    by_stage = tuple((stage, run.calls[stage], run.tokens[stage]) for stage in run.tokens)
    # Its calls in a round all overlap, so its longest chain of calls is its rounds.
    phases = (("start-up to the first call", run.before_first), ("between rounds, in all", run.between),
              ("last answer to exit", run.after_last))  # fmt: skip
    return ToolRun(
        "research-agent", latency, run.wall, run.rounds, run.rounds, run.call_count, 0, 0,
        run.prompt_tokens, tree.peak_children_rss_mb, by_stage, phases,
    )  # fmt: skip


def median_of(runs: list[ToolRun], name: str) -> float:
    return statistics.median(getattr(run, name) for run in runs)


def print_table(latency: float, columns: dict[str, list[ToolRun]]) -> None:
    """A markdown table: one row per measure, one column per tool (medians)."""
    count = max(len(runs) for runs in columns.values())
    print(f"\n| at {latency * 1000:.0f} ms per call (median of {count}) | " + " | ".join(columns) + " |")
    print("|---|" + "---|" * len(columns))
    for label, name, form in ROWS:
        cells = [form.format(median_of(runs, name)) for runs in columns.values()]
        print(f"| {label} | " + " | ".join(cells) + " |")


def print_calls(runs: list[ToolRun]) -> None:
    """Calls and prompt tokens per stage (research-agent) or per call kind (GPT Researcher)."""
    for run in runs:
        parts = ", ".join(f"{name or '?'} {calls}x {tokens:,}" for name, calls, tokens in run.tokens_by_call)
        print(f"  {run.tool} at {run.latency:g} s: prompt tokens by call: {parts}")
        if run.phases:
            print(f"  {run.tool} at {run.latency:g} s, where the wall time went: "
                  + "; ".join(f"{what} {seconds:.1f} s" for what, seconds in run.phases))  # fmt: skip


def print_startups(cache_dir: Path, gptr: GptrInstall | str) -> None:
    """Each tool's start-up (interpreter and imports), which every wall time includes."""
    ours = statistics.median(startup_seconds(cache_dir, times=3))
    line = f"start-up (median of 3, in every wall time): research-agent {ours:.2f} s"
    if isinstance(gptr, GptrInstall):
        theirs = statistics.median(gptr_startup(gptr))
        line += f"; GPT Researcher {gptr.version} ({gptr.python}) {theirs:.2f} s"
    print(line)


def parse_latencies(text: str) -> list[float]:
    try:
        values = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        values = []
    if not values or any(v < 0 for v in values):
        sys.exit(f"--latencies wants seconds per call, comma-separated (e.g. 0.5,2), not {text!r}")
    return values


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latencies", default="0.5,2", help="seconds per call, comma-separated")
    parser.add_argument("--repeat", type=int, default=3, help="runs per tool and latency (medians are shown)")
    parser.add_argument("--corpus", type=Path, default=DOCS, help="a local folder both tools read")
    parser.add_argument("--question", default=QUERY)
    parser.add_argument("--gptr-python", type=Path, default=DEFAULT_GPTR_PYTHON,
                        help="an interpreter that can import gpt_researcher (default: %(default)s)")  # fmt: skip
    parser.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE, help="research-agent's index, kept")
    parser.add_argument("--ours-anyway", action="store_true", help="without GPT Researcher, still run ours")
    parser.add_argument("--allow-network", action="store_true", help="run GPT Researcher without unshare -n")
    args = parser.parse_args()
    if not args.corpus.is_dir():
        sys.exit(f"--corpus {args.corpus} is not a folder")
    if args.repeat < 1:
        sys.exit("--repeat must be at least 1")
    return args


def gptr_or_reason(args: argparse.Namespace) -> GptrInstall | str:
    """The GPT Researcher install to run, or one line saying why it cannot run here."""
    found = find_gptr(args.gptr_python)
    if found is None:
        return f"gpt-researcher is not importable with {args.gptr_python} (install it in a venv of its own; see --help)"
    if isinstance(found, str):
        return found
    if not (args.allow_network or network_isolated()):
        return ("GPT Researcher may reach the internet: run this inside "
                "unshare -n sh -c 'ip link set lo up; ...' (or pass --allow-network)")  # fmt: skip
    return found


def main() -> int:
    args = parse_args()
    latencies = parse_latencies(args.latencies)
    gptr = gptr_or_reason(args)
    if isinstance(gptr, str) and not args.ours_anyway:
        print(gptr, file=sys.stderr)
        return 2
    cache_dir = args.cache_dir / "cache"
    asyncio.run(prepare_corpus(args.corpus, cache_dir, MODES[MODE].source_tokens))
    print(f"question: {args.question}\nresearch-agent: {MODE} mode, no critique")
    print_startups(cache_dir, gptr)
    for latency in latencies:
        columns: dict[str, list[ToolRun]] = {"research-agent": [], "GPT Researcher": []}
        for _ in range(args.repeat):  # alternate, so both tools see the same machine load
            columns["research-agent"].append(run_ours(args.question, args.corpus, cache_dir, latency))
            if isinstance(gptr, GptrInstall):
                try:
                    columns["GPT Researcher"].append(run_gptr(gptr, args.question, args.corpus, latency))
                except RuntimeError as exc:
                    print(f"GPT Researcher run failed: {exc}", file=sys.stderr)
                    return 1
        print_table(latency, {tool: runs for tool, runs in columns.items() if runs})
        print_calls([sorted(runs, key=lambda r: r.wall)[(len(runs) - 1) // 2] for runs in columns.values() if runs])
    if isinstance(gptr, str):
        print(gptr, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
