"""Benchmark: standard researches with and without faults from the endpoint.

Runs N standard researches (in-process ``research()`` with the real
``OpenAIChatModel`` and its real backoff) against ``FakeOpenAIServer`` with the
deterministic ``ResearchResponder`` over a small generated corpus, first with no faults,
then once per transient fault mix with a fraction of calls failing transiently. By
default two mixes: 429/503 only (they carry a small Retry-After, which the client
honours) and 500/503/429 (a 500 has no Retry-After, so the client's exponential backoff
with jitter applies: 0.125-0.25 s, then 0.25-0.5 s, ...). Goal: 100% success and p95 at
most 1.5x fault-free.

Then the *broken answers* series: a fraction of all answers (default 30%) is truncated
JSON, cut at the token limit, or valid JSON of the wrong shape, as small local models
write. Every structured call has three attempts, after which every stage but the draft
degrades. Goal: at least 19 of 20 runs write a report, and any failure is the draft after
its attempts. Each run's record must also count exactly the tokens the server reported.
Runs are sequential.

    python -m bench.bench_faults [--runs 20] [--rate 0.1] [--delay 0.5] [--retry-after 0.1]
                                 [--mixes "503,429;500,503,429"] [--seed 1]
                                 [--broken-rate 0.3] [--broken-mix truncate,length,badschema]
                                 [--series transient,broken]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench._util import generated_corpus, peak_rss_mb
from research_agent.config import MODES, Settings
from research_agent.errors import ResearchError
from research_agent.llm import OpenAIChatModel
from research_agent.llm.prices import PriceTable
from research_agent.memory.lessons.select import LessonSelection
from research_agent.pipeline import research
from research_agent.search.local import LocalSearchProvider
from tests.support.fake_openai_server import CONTENT_KINDS, STATUS_KINDS, FakeOpenAIServer, Faults
from tests.support.research_responder import ResearchResponder

QUERY = "How does PostgreSQL VACUUM reclaim space from dead tuples and prevent table bloat?"
TOPICS = ["vacuum", "autovacuum", "dead tuples", "table bloat", "visibility map", "freezing", "indexes", "WAL"]


def topic_corpus(folder: Path) -> Path:
    """A small corpus on the query's topic, with enough distinct files to fill a standard run."""
    return generated_corpus(
        folder,
        topics=TOPICS,
        sentence="PostgreSQL {topic} note {i}.{j} explains how VACUUM reclaims space from dead tuples, "
        "how {topic} interacts with table bloat, and what autovacuum settings prevent it.",
        files=40,
        paragraphs=12,
    )


@dataclass(frozen=True)
class Outcome:
    ok: bool  # a complete full report
    wall: float
    retries: int
    faults: int
    error: str = ""
    report: bool = False  # a complete report of any kind was written
    degraded: int = 0  # stages that went on without the model's answer
    tokens_match: bool = True  # the run record counts exactly the tokens the server reported


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100)."""
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


async def one_run(server: FakeOpenAIServer, provider, settings: Settings, index: int) -> Outcome:
    model = OpenAIChatModel(
        model="gpt-4o-mini", api_key="bench", base_url=server.base_url, timeout=30,
        max_retries=settings.llm_max_retries, concurrency=settings.llm_concurrency, prices=PriceTable(),
    )
    before = len(server.requests)
    start = time.perf_counter()
    try:
        result = await research(f"{QUERY} (run {index})", settings=settings, model=model, providers=[provider],
                                lessons=lambda d: LessonSelection.none(d))
    except ResearchError as exc:
        return Outcome(False, time.perf_counter() - start, 0, 0, str(exc))
    finally:
        await model.aclose()
    wall = time.perf_counter() - start
    seen = server.requests[before:]
    faults = sum(1 for r in seen if r.fault in STATUS_KINDS | CONTENT_KINDS)
    retries = sum(u.retries for u in result.usage.values())
    complete = result.report_path.is_file() and "## Sources" in result.report_path.read_text(encoding="utf-8")
    answered = [r for r in seen if r.ok]
    total = result.total_usage
    match = (total.prompt_tokens, total.completion_tokens, total.calls) == (
        sum(r.prompt_tokens for r in answered), sum(r.completion_tokens for r in answered), len(answered))
    degraded = sum(1 for w in result.warnings if "got invalid output" in w)
    return Outcome(complete and result.gate_decision == "full_report", wall, retries, faults,
                   report=complete, degraded=degraded, tokens_match=match)


async def series(label: str, faults: Faults, args, provider, settings: Settings) -> list[Outcome]:
    outcomes = []
    with FakeOpenAIServer(ResearchResponder(), delay=args.delay, faults=faults) as server:
        for i in range(args.runs):
            outcomes.append(await one_run(server, provider, settings, i))
    ok = [o for o in outcomes if o.ok]
    walls = [o.wall for o in outcomes]
    print(f"[{label}] success {len(ok)}/{len(outcomes)} ({100 * len(ok) / len(outcomes):.0f}%); "
          f"injected faults {sum(o.faults for o in outcomes)}; retries per run mean "
          f"{statistics.mean(o.retries for o in outcomes):.2f}, max {max(o.retries for o in outcomes)}")
    print(f"[{label}] wall p50 {statistics.median(walls):.2f} s, p95 {percentile(walls, 95):.2f} s, "
          f"max {max(walls):.2f} s")
    for o in outcomes:
        if not o.ok:
            what = "no full report" if o.report else "failed run"
            print(f"[{label}] {what}: {o.error or ('a short report' if o.report else 'incomplete report')}")
    return outcomes


async def broken_series(args, provider, settings: Settings) -> str:
    """The broken-answers series; returns its verdict line."""
    mix = tuple(k.strip() for k in args.broken_mix.split(",") if k.strip())
    label = f"broken {args.broken_rate:.0%} {'/'.join(mix)}"
    faults = Faults(rate=args.broken_rate, mix=mix, seed=args.seed)
    outcomes = await series(label, faults, args, provider, settings)
    reports = sum(1 for o in outcomes if o.report)
    failures = [o.error for o in outcomes if not o.report]
    only_draft = all(e.startswith("the draft stage got invalid output") and "after 3 attempts" in e for e in failures)
    degraded = [o.degraded for o in outcomes if o.report]
    mismatched = sum(1 for o in outcomes if o.report and not o.tokens_match)
    print(f"[{label}] reports {reports}/{len(outcomes)}; full reports {sum(1 for o in outcomes if o.ok)}; "
          f"degraded stages per run mean {statistics.mean(degraded or [0]):.2f}, max {max(degraded or [0])}; "
          f"runs whose record did not match the server's tokens: {mismatched}")
    goal = reports >= len(outcomes) - len(outcomes) // 20 and only_draft and not mismatched
    return (f"[{label}] reports {reports}/{len(outcomes)} (goal >= {len(outcomes) - len(outcomes) // 20}); "
            f"every failure is the draft after its attempts: {'yes' if only_draft else 'NO'}; "
            f"tokens match: {'yes' if not mismatched else 'NO'}; goal {'met' if goal else 'NOT met'}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--rate", type=float, default=0.1, help="fraction of calls that fail transiently")
    parser.add_argument("--mixes", default="503,429;500,503,429", help="fault mixes, ';'-separated")
    parser.add_argument("--retry-after", default="0.1", help="Retry-After seconds on 429/503 answers")
    parser.add_argument("--delay", type=float, default=0.5, help="seconds before every answer")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--broken-rate", type=float, default=0.3, help="fraction of answers that are broken")
    parser.add_argument("--broken-mix", default="truncate,length,badschema", help="kinds of broken answers")
    parser.add_argument("--series", default="transient,broken", help="which series to run, comma-separated")
    args = parser.parse_args()
    wanted = {s.strip() for s in args.series.split(",")}

    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        corpus = topic_corpus(tmp_path / "corpus")
        mode = MODES["standard"]
        provider = LocalSearchProvider([corpus], tmp_path / "cache", token_budget=mode.source_tokens)
        provider.prepare()
        settings = Settings(
            mode=mode, reports_dir=tmp_path / "reports", cache_dir=tmp_path / "cache", context_path=None,
            corpus_dirs=(corpus,), model="gpt-4o-mini",
        )
        print(f"{args.runs} standard runs per series; server delay {args.delay:g} s; transient faults: "
              f"{args.rate:.0%} of calls, Retry-After {args.retry_after} s on 429/503; broken answers: "
              f"{args.broken_rate:.0%}; llm_max_retries {settings.llm_max_retries}; seed {args.seed}")
        clean = await series("no faults", Faults(), args, provider, settings)
        clean_p95 = percentile([o.wall for o in clean], 95)
        verdicts = []
        for text in args.mixes.split(";") if "transient" in wanted else ():
            mix = tuple(k.strip() for k in text.split(",") if k.strip())
            label = f"faults {'/'.join(mix)}"
            faulty = await series(
                label, Faults(rate=args.rate, mix=mix, seed=args.seed, retry_after=args.retry_after),
                args, provider, settings,
            )
            ratio = percentile([o.wall for o in faulty], 95) / clean_p95
            success = all(o.ok for o in faulty) and all(o.ok for o in clean)
            verdicts.append(f"[{label}] p95 ratio {ratio:.2f} (goal <= 1.5); success 100%: "
                            f"{'yes' if success else 'NO'}; goal {'met' if success and ratio <= 1.5 else 'NOT met'}")
        if "broken" in wanted:
            verdicts.append(await broken_series(args, provider, settings))
    for line in verdicts:
        print(line)
    print(f"peak RSS: {peak_rss_mb():.0f} MB")


if __name__ == "__main__":
    asyncio.run(main())
