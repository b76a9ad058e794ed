"""The one-slot case of bench_pipeline.py: a server that answers one call at a time, slowly.

* :func:`print_one_slot` runs the CLI with ``RESEARCH_AGENT_LLM_CONCURRENCY=1`` against a
  server that takes ``latency`` seconds per call plus ``token_delay`` per completion token
  (a streamed answer sends each piece as it is written), and prints rounds, calls, plans,
  drafts, revisions, wall time and the writer's tokens/s as the progress line printed them,
  for a sound writer and for a debris writer (issue 32: a writer that loops one paragraph,
  whose runs must take one draft plus the revisions, never a replan's draft); with ``before``
  (the path of another checkout, e.g. ``/work/main``) the same runs of that version too.
* :func:`print_batching` measures relevance alone, in process, for 12 sources at
  concurrency 1, 4 and 16: one source per call, spread over the slots, and as many per call
  as the token budget allows (what a run sends: it scores beside the writer's draft).
  Each call costs ``latency`` plus ``token_delay`` per completion token, so a batch's
  longer answer takes longer: the numbers behind the choice.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

from bench._cli_run import CliRun, run_cli
from research_agent.config import MODES, Settings
from research_agent.llm import OpenAIChatModel
from research_agent.sources import Source
from research_agent.stages.relevance import score_sources
from tests.support.debris import ISSUE_DEBRIS, DebrisResponder
from tests.support.fake_openai_server import FakeOpenAIServer, sequential_rounds
from tests.support.research_responder import ResearchResponder

__all__ = ["print_one_slot", "print_batching"]

BATCH_QUERY = "How does the asyncio event loop schedule coroutines and tasks?"


def _row(label: str, run: CliRun) -> str:
    rates = "; ".join(run.writer_rates) or "not streamed"
    calls = run.calls
    return (f"{label:<30} {run.rounds:>6} {run.call_count:>6} {calls.get('decompose', 0):>6} {calls.get('draft', 0):>7} "
            f"{calls.get('revise', 0):>8} {calls.get('relevance', 0):>10} {run.wall:>8.1f}s   {rates}")


def _scenarios() -> list[tuple[str, ResearchResponder]]:
    """A sound writer, and issue 32's debris writer: it loops one paragraph under numbered
    headings every time it writes, and the skeptic rates the answer 10/100 (once with a
    finding about the writing, once with none behind the score)."""
    debris = replace(ISSUE_DEBRIS, viability=10)
    return [
        ("standard", ResearchResponder(viability=80)),
        ("debris writer", DebrisResponder(debris)),
        ("debris, silent skeptic", DebrisResponder(replace(debris, skeptic_repeats=0))),
    ]


def print_one_slot(
    query: str, corpus: Path, cache_dir: Path, *, mode: str, latency: float, token_delay: float, before: Path | None
) -> None:
    """The one-slot case: this version (and ``before``), concurrency 1, ``latency`` s per call,
    for each scenario: rounds, calls, plans, drafts, revisions, relevance calls and wall time."""
    print(f"\n[one slot] concurrency 1, {latency:g} s per call + {token_delay * 1000:g} ms per completion token, "
          f"{mode} mode")
    print(f"{'scenario, version':<30} {'rounds':>6} {'calls':>6} {'plans':>6} {'drafts':>7} {'revisions':>8} "
          f"{'relevance':>10} {'wall':>9}   writer tokens/s (progress line)")
    versions = ([("before", before)] if before is not None else []) + [("after", None)]
    for name, responder in _scenarios():
        for label, src in versions:
            run = run_cli(query, corpus, cache_dir, responder, latency=latency, mode=mode, token_delay=token_delay,
                          concurrency=1, src=src)  # fmt: skip
            print(_row(f"{name}, {label}", run))


def _sources(count: int) -> list[Source]:
    text = " ".join(f"The event loop runs task {i} when its future is done; coroutines yield to it." for i in range(80))
    return [Source(f"/docs/{n}.html", f"asyncio page {n}", f"/docs/{n}.html", f"/docs/{n}.html", text, "local")
            for n in range(count)]  # fmt: skip


async def _relevance_once(base_url: str, concurrency: int, slots: int, budget: int) -> float:
    model = OpenAIChatModel(model="bench", base_url=base_url, concurrency=concurrency, form_cache={}, max_retries=0)
    start = time.perf_counter()
    try:
        await score_sources(model, BATCH_QUERY, _sources(12), token_budget=MODES["standard"].relevance_tokens,
                            batch_tokens=budget, slots=slots)  # fmt: skip
    finally:
        await model.aclose()
    return time.perf_counter() - start


async def print_batching(*, latency: float, token_delay: float) -> None:
    """Relevance for 12 sources: one per call, packed by budget, and the chosen plan, per concurrency."""
    budget = Settings().relevance_batch_tokens
    print(f"\n[relevance batching] 12 sources, {latency:g} s per call + {token_delay * 1000:g} ms per completion "
          f"token, budget {budget} source tokens a call")
    print(f"{'concurrency':>11} {'plan':<14} {'calls':>6} {'rounds':>7} {'prompt tok':>11} {'answer tok':>11} {'wall':>7}")
    for concurrency in (1, 4, 16):
        plans = {"one per call": 12, "spread": concurrency, "packed": 1}  # a run packs (beside the draft)
        for name, slots in plans.items():
            with FakeOpenAIServer(ResearchResponder(), delay=latency, token_delay=token_delay) as server:
                wall = await _relevance_once(server.base_url, concurrency, slots, budget)
                records = [r for r in server.requests if r.stage == "relevance"]
            prompt = sum(r.prompt_tokens for r in records)
            answer = sum(r.completion_tokens for r in records)
            print(f"{concurrency:>11} {name:<14} {len(records):>6} {sequential_rounds(records):>7} {prompt:>11,} "
                  f"{answer:>11,} {wall:>6.2f}s")
