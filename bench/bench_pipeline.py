"""Benchmark whole CLI runs against a slow OpenAI-compatible server on 127.0.0.1.

Every model call is answered after a fixed latency. Each run is the real command,
``python -m research_agent run QUESTION --corpus DIR --no-critique`` in a subprocess, so
its wall time includes the CLI's start-up (interpreter, imports), the corpus index
check, the run and writing the report. For each latency (0.1, 0.5, 1 and 2 s per call
by default) it prints the median wall time, the sequential LLM rounds, and the fixed
overhead = wall - rounds x latency. Then, for a standard run, the chat calls and prompt
tokens per stage (``len(json.dumps(messages)) // 4`` per call, as issue 13 counts them)
and the source tokens the writer received; what one replan and one revision cost; and
what the claim check costs (issue 22): the same run with it off and on, at concurrency 4
and 1, rounds and prompt tokens before and after (goal: no extra sequential round).

Goals (standard mode, 12 sources scored, no replan, no critique; issue 46): at most 3 sequential
rounds, 10 chat calls and 11,000 prompt tokens; overhead at most 1.2 s, so that at 1 s per call
wall <= 1.3 x rounds x latency. It also prints the prompt tokens that start as an earlier call's
prompt did (what a server's prompt cache can reuse), for the run and for one with a revision.

The one-slot case (``--one-slot``; alone with ``--only-one-slot``): a server that answers one
call at a time (``RESEARCH_AGENT_LLM_CONCURRENCY=1``), 2 s per call plus 5 ms per completion
token (the draft streams as it is written): rounds, calls, wall time and the writer's
tokens/s as the progress line printed them, for this version and (``--before DIR``, another
checkout such as /work/main) the version before (``--before`` also runs that checkout beside this
one at each latency, alternating, and prints its rounds, calls and tokens); then relevance alone for 12 sources at
concurrency 1, 4 and 16, one source per call against batched, the numbers behind batching.

    python -m bench.bench_pipeline [--latencies 0.1,0.5,1,2] [--repeat 3] [--corpus DIR]
                                   [--cache-dir DIR] [--no-loops] [--mode standard]
                                   [--one-slot | --only-one-slot] [--before DIR] [--claims-only]

The corpus index lives in ``--cache-dir`` (default: a folder in the temp dir that later
runs reuse), so only the first run pays for a cold index of python3.11-doc.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from bench._cli_run import CliRun, run_cli, startup_seconds
from bench._one_slot import print_batching, print_one_slot
from bench._util import generated_corpus, peak_rss_mb
from research_agent.config import MODES
from research_agent.search.local import LocalSearchProvider
from tests.support.research_responder import ResearchResponder

DOCS = Path("/usr/share/doc/python3.11-doc/html")
QUERY = "How does the asyncio event loop schedule coroutines and tasks?"
DEFAULT_CACHE = Path(tempfile.gettempdir()) / "research-agent-bench"
# A critical finding on a claim the draft does not make: the review asks for exactly one revision.
REVISE_FINDING = {
    "lens": "evidence", "severity": "critical", "claim": "asyncio runs every coroutine in its own thread",
    "reason": "no source says so", "fix": "remove the claim", "confidence": 0.9,
}  # fmt: skip
# A finding about what the sources cover: a low viability with it behind it asks for a replan.
REPLAN_FINDING = {
    "lens": "scope", "severity": "concern", "claim": "", "reason": "the sources leave out task groups",
    "fix": "search for task groups", "confidence": 0.8,
}  # fmt: skip


def asyncio_corpus(folder: Path) -> Path:
    """Stand-in for the python3.11-doc corpus on machines without it."""
    return generated_corpus(
        folder,
        topics=["event loop", "coroutines", "tasks", "futures", "threads", "sockets", "files", "strings"],
        sentence="The asyncio {topic} section {i}.{j} explains how the event loop schedules coroutines, "
        "how tasks wrap coroutines, and how {topic} interact with callbacks and futures.",
        files=400,
        paragraphs=30,
    )


async def prepare_corpus(corpus: Path, cache_dir: Path, token_budget: int) -> None:
    """Build (or refresh) the index the CLI runs will use, and time a few queries on it."""
    provider = LocalSearchProvider([corpus], cache_dir, token_budget=token_budget)
    start = time.perf_counter()
    stats = provider.prepare()
    build = time.perf_counter() - start
    latencies = []
    for q in ("event loop", "coroutine tasks", "socket timeout", "string formatting", "dataclass fields"):
        t = time.perf_counter()
        await provider.search(q, max_results=6)
        latencies.append(time.perf_counter() - t)
    documents, indexed = sum(s.documents for s in stats), sum(s.indexed for s in stats)
    print(f"corpus: {corpus} ({documents} documents; {indexed} (re)indexed now)")
    print(f"index {'build' if indexed else 'check'}: {build:.2f} s; "
          f"query latency median {statistics.median(latencies) * 1000:.1f} ms")


def median_run(runs: list[CliRun]) -> CliRun:
    """The run with the median wall time (an odd count gives a real run)."""
    return sorted(runs, key=lambda r: r.wall)[(len(runs) - 1) // 2]


def print_latencies(by_latency: dict[float, list[CliRun]], startup: float, floor: float) -> None:
    from bench.bench_first_request import FLOOR_SDK

    print(f"\nCLI start-up (python -m research_agent --version, median): {startup:.2f} s, included in every wall below")
    print(f"dependency floor (a fresh python -c \"{FLOOR_SDK}\", median, measured before each run): {floor:.2f} s")
    print(f"{'latency':>8} {'runs':>5} {'wall':>7} {'rounds':>7} {'calls':>6} {'overhead':>9} {'wall/(rounds x lat)':>20} "
          f"{'wall/(rounds x lat + floor)':>28}")  # fmt: skip
    for latency, runs in by_latency.items():
        mid = median_run(runs)
        overhead = statistics.median(r.overhead for r in runs)
        print(f"{latency:>7.1f}s {len(runs):>5} {mid.wall:>6.2f}s {mid.rounds:>7} {mid.call_count:>6} "
              f"{overhead:>8.2f}s {mid.wall / (mid.rounds * latency):>20.2f} "
              f"{mid.wall / (mid.rounds * latency + floor):>28.2f}")  # fmt: skip
    print("goal (issue 46): at 1 s per call, wall <= 1.15 x (rounds x 1 s + the dependency floor)")
    every = [r for runs in by_latency.values() for r in runs]
    print("where the overhead goes (medians): "
          f"before the first call {statistics.median(r.before_first for r in every):.2f} s, "
          f"between rounds {statistics.median(r.between for r in every):.2f} s, "
          f"after the last answer {statistics.median(r.after_last for r in every):.2f} s")
    overheads = [r.overhead for r in every]
    print(f"overhead over all runs: median {statistics.median(overheads):.2f} s, max {max(overheads):.2f} s "
          "(goal: at most 1.2 s)")


def print_tokens(label: str, run: CliRun) -> None:
    print(f"\n[{label}] {run.call_count} chat calls, {run.rounds} sequential rounds, "
          f"prompt tokens {run.prompt_tokens:,}")
    for stage in run.tokens:
        print(f"    {stage:<10} calls {run.calls[stage]:>3}  prompt tokens {run.tokens[stage]:>7,}")
    sources = ", ".join(f"{n:,}" for n in run.writer_sources)
    print(f"    source tokens the writer received (per draft call): {sources}")
    print(f"    prompt tokens that start as an earlier call's prompt did (a prompt cache reuses them): "
          f"{run.reusable_tokens:,} of {run.prompt_tokens:,}")


def print_loop_cost(label: str, loop: CliRun, base: CliRun) -> None:
    print_tokens(label, loop)
    print(f"    cost of the loop at {loop.latency:g} s per call: +{loop.rounds - base.rounds} rounds, "
          f"+{loop.call_count - base.call_count} calls, +{loop.prompt_tokens - base.prompt_tokens:,} prompt tokens, "
          f"+{loop.wall - base.wall:.2f} s")


def by_version(
    once, latencies: list[float], repeat: int, before: Path | None, floors: list[float] | None = None
) -> dict[str, dict[float, list[CliRun]]]:
    """Runs at each latency, ``repeat`` of each version, alternating (so both see the same load):
    this checkout ("after") and, with ``before``, that one. ``floors`` gets the dependency floor
    measured before each run, so that the floor a ratio divides by saw the load its runs saw
    (measured apart, before the runs, it drifted by a fifth between two sessions)."""
    from bench.bench_first_request import FLOOR_SDK, process_wall  # it imports this module

    versions = ([("before", before)] if before is not None else []) + [("after", None)]
    runs: dict[str, dict[float, list[CliRun]]] = {label: {lat: [] for lat in latencies} for label, _ in versions}
    for latency in latencies:
        for _ in range(repeat):
            for label, src in versions:
                if floors is not None:
                    floors.append(process_wall(FLOOR_SDK))
                runs[label][latency].append(once(latency, ResearchResponder(viability=80), src=src))
    return runs


def print_claim_check(once) -> None:
    """The run without and with the claim check, at 4 model slots and at 1: rounds and tokens."""
    print("\nclaim check (issue 22): the same run without it (before) and with it (after)")
    for slots in (4, 1):
        before = once({"RESEARCH_AGENT_CHECK_CLAIMS": "0", "RESEARCH_AGENT_LLM_CONCURRENCY": str(slots)})
        after = once({"RESEARCH_AGENT_CHECK_CLAIMS": "1", "RESEARCH_AGENT_LLM_CONCURRENCY": str(slots)})
        for label, run in (("before", before), ("after", after)):
            stages = ", ".join(f"{stage} {run.tokens[stage]:,}" for stage in ("skeptic", "claims") if stage in run.calls)
            print(f"    concurrency {slots}, {label:<6}: {run.rounds:>2} sequential rounds, {run.call_count:>2} calls, "
                  f"prompt tokens {run.prompt_tokens:>6,} ({stages})")
        extra = after.rounds - before.rounds
        verdict = "met" if extra <= 0 else "NOT met"
        print(f"    concurrency {slots}: +{extra} rounds, +{after.call_count - before.call_count} calls, "
              f"+{after.prompt_tokens - before.prompt_tokens:,} prompt tokens (goal: no extra round: {verdict})")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", default="standard", choices=sorted(MODES))
    parser.add_argument("--latencies", default="0.1,0.5,1,2", help="seconds per call, comma-separated")
    parser.add_argument("--repeat", type=int, default=3, help="runs per latency (the median is shown)")
    parser.add_argument("--corpus", type=Path)
    parser.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE, help="kept between bench runs")
    parser.add_argument("--no-loops", action="store_true", help="skip the replan and revision runs")
    parser.add_argument("--claims-only", action="store_true", help="only the claim check's before and after")
    parser.add_argument("--one-slot", action="store_true", help="also run the one-slot case and the batching table")
    parser.add_argument("--only-one-slot", action="store_true", help="run only the one-slot case and the batching table")
    parser.add_argument("--before", type=Path, help="another checkout to measure beside this one, runs alternating "
                        "(at each latency and in the one-slot case; e.g. a worktree of main)")
    parser.add_argument("--slot-latency", type=float, default=2.0, help="seconds per call in the one-slot case")
    parser.add_argument("--token-delay", type=float, default=0.005, help="seconds per completion token (one-slot case)")
    return parser.parse_args()


async def main() -> None:
    args = parse_args()
    mode = MODES[args.mode]
    cache_dir = args.cache_dir / "cache"
    corpus = args.corpus or (DOCS if DOCS.exists() else asyncio_corpus(args.cache_dir / "corpus"))
    await prepare_corpus(corpus, cache_dir, mode.source_tokens)
    if args.one_slot or args.only_one_slot:
        print_one_slot(QUERY, corpus, cache_dir, mode=args.mode, latency=args.slot_latency,
                       token_delay=args.token_delay, before=args.before)  # fmt: skip
        await print_batching(latency=0.5, token_delay=args.token_delay * 4)
        if args.only_one_slot:
            return
    startup = statistics.median(startup_seconds(cache_dir))

    def once(latency: float, responder: ResearchResponder, env: dict[str, str] | None = None, src=None) -> CliRun:
        return run_cli(QUERY, corpus, cache_dir, responder, latency=latency, mode=args.mode, extra=env, src=src)

    if args.claims_only:
        print_claim_check(lambda env: once(0.5, ResearchResponder(viability=80), env))
        return
    latencies = [float(x) for x in args.latencies.split(",") if x.strip()]
    floors: list[float] = []
    runs = by_version(once, latencies, args.repeat, args.before, floors)
    floor = statistics.median(floors)
    by_latency = runs["after"]
    if "before" in runs:
        print(f"\n[before: {args.before}]")
        print_latencies(runs["before"], startup, floor)
        print_tokens(f"before, {latencies[0]:g} s per call", median_run(runs["before"][latencies[0]]))
        print("\n[after: this checkout]")
    print_latencies(by_latency, startup, floor)
    loop_latency = 0.5 if 0.5 in by_latency else latencies[0]
    base = median_run(by_latency[loop_latency])
    print_tokens(f"{args.mode}, {loop_latency:g} s per call", base)
    met = base.prompt_tokens <= 11_000 and base.call_count <= 10 and base.rounds <= 3
    print(f"    goal: at most 3 rounds, 10 chat calls and 11,000 prompt tokens ({'met' if met else 'NOT met'})")
    if not args.no_loops:
        replan = ResearchResponder(viability=[30, 80], findings=[REPLAN_FINDING])
        print_loop_cost("replan once", once(loop_latency, replan), base)
        print_loop_cost("revise once", once(loop_latency, ResearchResponder(findings=[REVISE_FINDING])), base)
    print_claim_check(lambda env: once(loop_latency, ResearchResponder(viability=80), env))
    print(f"\npeak RSS: bench {peak_rss_mb():.0f} MB, largest CLI run {peak_rss_mb(children=True):.0f} MB")


if __name__ == "__main__":
    asyncio.run(main())
