"""Benchmark one research run against a slow OpenAI-compatible server on 127.0.0.1.

Every model call is answered after a fixed delay (default 500 ms), so wall time is
dominated by how many calls have to wait for each other. Prints wall time, LLM calls,
sequential rounds, wall / (rounds x delay), tokens per stage, peak RSS, and the corpus
index build time and query latency. Goals (standard mode, 12 scored sources): at most 6
rounds, wall/(rounds x delay) <= 1.25, <= 30,000 prompt tokens, peak RSS < 300 MB.

    python bench/bench_pipeline.py [--mode standard] [--delay 0.5] [--corpus DIR] [--no-replan]

A second run, whose skeptic rates the first plan 30/100 and the second 80/100, shows
what one replan costs in sequential rounds, calls and tokens.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._util import generated_corpus, peak_rss_mb  # noqa: E402
from research_agent.config import MODES, Settings  # noqa: E402
from research_agent.llm import OpenAIChatModel  # noqa: E402
from research_agent.llm.prices import PriceTable  # noqa: E402
from research_agent.memory.lessons import LessonSelection  # noqa: E402
from research_agent.pipeline import research  # noqa: E402
from research_agent.search.local import LocalSearchProvider  # noqa: E402
from tests.support.fake_openai_server import FakeOpenAIServer, sequential_rounds  # noqa: E402
from tests.support.research_responder import ResearchResponder  # noqa: E402

DOCS = Path("/usr/share/doc/python3.11-doc/html")
QUERY = "How does the asyncio event loop schedule coroutines and tasks?"


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


async def run_once(provider, settings, responder, delay: float):
    """One research run against a fresh slow server; returns (result, wall seconds, server requests)."""
    with FakeOpenAIServer(responder, delay=delay) as server:
        model = OpenAIChatModel(
            model="gpt-4o-mini", fast_model="gpt-4o-mini", api_key="bench", base_url=server.base_url,
            timeout=60, max_retries=2, concurrency=settings.llm_concurrency, prices=PriceTable(),
        )
        start = time.perf_counter()
        result = await research(QUERY, settings=settings, model=model, providers=[provider],
                                lessons=lambda d: LessonSelection.none(d))
        wall = time.perf_counter() - start
        await model.aclose()
        return result, wall, list(server.requests)


async def critique_share(result, settings, delay: float) -> None:
    """Critique the run as the detached process would, and print its share of the tokens."""
    from research_agent.memory.critique import critique_run

    with FakeOpenAIServer(ResearchResponder(), delay=delay) as server:
        model = OpenAIChatModel(model="gpt-4o-mini", fast_model="gpt-4o-mini", api_key="bench",
                                base_url=server.base_url, prices=PriceTable())
        await critique_run(result.run_record_path, model, settings=settings)
        await model.aclose()
        used = sum(r.prompt_tokens + r.completion_tokens for r in server.requests)
    run_tokens = sum(u.prompt_tokens + u.completion_tokens for u in result.usage.values())
    print(f"[critique] {used:,} tokens = {100 * used / (used + run_tokens):.1f}% of run + critique "
          "(it runs detached, after the report path is printed)")


def report(label: str, result, wall: float, requests, delay: float) -> None:
    rounds = sequential_rounds(requests)
    print(f"[{label}] gate: {result.gate_decision}; plans: {max(i.plan for i in result.iterations)}; "
          f"sources scored: {len(result.sources)}, cited: {sum(1 for s in result.sources if s.n)}")
    print(f"[{label}] wall time: {wall:.2f} s; LLM calls: {len(requests)}; sequential rounds: {rounds}; "
          f"wall/(rounds x delay): {wall / (rounds * delay):.2f}")
    total_prompt = sum(u.prompt_tokens for u in result.usage.values())
    print(f"[{label}] prompt tokens: {total_prompt:,}; completion tokens: "
          f"{sum(u.completion_tokens for u in result.usage.values()):,}")
    for stage, usage in result.usage.items():
        print(f"    {stage:<10} calls {usage.calls:>3}  prompt {usage.prompt_tokens:>7,}  "
              f"completion {usage.completion_tokens:>6,}")
    print(f"[{label}] stage wall times: " + ", ".join(f"{k} {v:.2f}s" for k, v in result.timings.items()))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", default="standard", choices=sorted(MODES))
    parser.add_argument("--delay", type=float, default=0.5)
    parser.add_argument("--corpus", type=Path)
    parser.add_argument("--no-replan", action="store_true", help="skip the run that replans once")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        corpus = args.corpus or (DOCS if DOCS.exists() else asyncio_corpus(tmp_path / "corpus"))
        mode = MODES[args.mode]
        provider = LocalSearchProvider([corpus], tmp_path / "cache", token_budget=mode.source_tokens)
        start = time.perf_counter()
        stats = provider.prepare()
        build = time.perf_counter() - start
        latencies = []
        for q in ("event loop", "coroutine tasks", "socket timeout", "string formatting", "dataclass fields"):
            t = time.perf_counter()
            await provider.search(q, max_results=mode.results_per_query)
            latencies.append(time.perf_counter() - t)
        print(f"corpus: {corpus} ({sum(s.indexed for s in stats)} files indexed)")
        print(f"index build: {build:.2f} s; query latency median {statistics.median(latencies) * 1000:.1f} ms, "
              f"max {max(latencies) * 1000:.1f} ms")

        settings = Settings(
            mode=mode, reports_dir=tmp_path / "reports", cache_dir=tmp_path / "cache", context_path=None,
            corpus_dirs=(corpus,), model="gpt-4o-mini",
        )
        base, wall, requests = await run_once(provider, settings, ResearchResponder(viability=80), args.delay)
        report(mode.name, base, wall, requests, args.delay)
        await critique_share(base, settings, args.delay)
        if not args.no_replan:
            again, wall2, requests2 = await run_once(
                provider, settings, ResearchResponder(viability=[30, 80]), args.delay
            )
            report("replan once", again, wall2, requests2, args.delay)
            tokens = lambda r: sum(u.prompt_tokens + u.completion_tokens for u in r.usage.values())  # noqa: E731
            print(f"[replan once] cost of the loop: +{sequential_rounds(requests2) - sequential_rounds(requests)} "
                  f"sequential rounds, +{len(requests2) - len(requests)} LLM calls, "
                  f"+{tokens(again) - tokens(base):,} tokens, +{wall2 - wall:.2f} s")
    print(f"peak RSS: {peak_rss_mb():.0f} MB")


if __name__ == "__main__":
    asyncio.run(main())
