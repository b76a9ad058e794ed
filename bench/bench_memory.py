"""Benchmark the memory: lesson selection over 50 and 10,000 critique files.

Goals (issue 4): selection under 20 ms with 50 files and under 200 ms with 10,000
(retention off); files that cannot be selected are not parsed. Also reports how long
starting a detached critique takes (the time the user's command pays for it), the
size of the critique prompt for a standard-length report, and (issue 12) computing the
citation-support facts for a 3,000-word report with 15 sources (goal under 50 ms).

    /work/venv/bin/python bench/bench_memory.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from research_agent.domains import DOMAINS  # noqa: E402
from research_agent.ids import make_run_id  # noqa: E402
from research_agent.measures import (  # noqa: E402
    CitationFacts,
    CritiqueFacts,
    RecencyFacts,
    SiteCounts,
    SiteFacts,
    SourceCounts,
)
from research_agent.memory import store  # noqa: E402
from research_agent.memory.citation_support import citation_support  # noqa: E402
from research_agent.memory.critique import build_request, compute_facts  # noqa: E402
from research_agent.memory.critique_types import Critique, Scores  # noqa: E402
from research_agent.memory.lessons import select_lessons  # noqa: E402
from research_agent.memory.schema import DIMENSIONS, TAGS  # noqa: E402
from research_agent.memory.spawn import spawn_critique  # noqa: E402
from research_agent.record import read_run_record  # noqa: E402
from research_agent.text.passages import estimate_tokens  # noqa: E402

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
FACTS = CritiqueFacts(
    sources=SourceCounts(found=14, fetched=11, kept=7, dropped=4, unscored=0, cited=6),
    sites=SiteFacts(distinct=2, top="docs.example.org", top_share=0.71,
                    per_site=(SiteCounts("docs.example.org", 5, 1, 4), SiteCounts("news.example.com", 2, 3, 2))),
    sub_queries=(),
    unanswered=0,
    citations=CitationFacts(sentences=20, weakly_supported=2, weakly_supported_share=0.1),
    recency=RecencyFacts(),
)  # fmt: skip


def make_critiques(meta: Path, count: int, *, rng: random.Random, span: timedelta) -> None:
    """Write ``count`` valid critiques spread over ``span`` before NOW, all domains mixed."""
    step = span / count
    for i in range(count):
        when = NOW - step * i - timedelta(seconds=1)
        scores = Scores(**{d: rng.randint(2, 5) for d in DIMENSIONS})
        critique = Critique(
            id=make_run_id(f"benchmark question number {i}", when),
            query=f"benchmark question number {i}",
            query_domain="technology" if i % 3 == 0 else rng.choice(DOMAINS),
            mode="standard",
            timestamp=when.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            model_version="gpt-4o-mini",
            report_path=f"reports/bench-{i}.md",
            scores=scores,
            mean_score=scores.mean,
            overall_pass=scores.passed,
            weaknesses=("Sources lean on one vendor's documentation.", "Two figures have no citation."),
            suggestions=("Add an independent benchmark.",),
            tags=tuple(rng.sample(TAGS, 2)),
            gate_decision="full_report",
            source_count=7,
            dropped_count=4,
            adaptive=bool(i % 2),
            facts=FACTS,
        )
        if i < 50:
            store.write_critique(meta, critique)  # the real, fsynced path
        else:  # the same bytes without an fsync per file, to keep generation quick
            store.critique_path(meta, critique.id).write_text(
                store.dump_yaml(critique.as_dict()), encoding="utf-8"
            )


UNREAD = ("expired", "beyond the newest", "dated in the future", "invalid: file name")
SCANNED = "other domain"  # read, recognised by one line, not parsed


def time_selection(meta: Path, repeat: int) -> tuple[float, float, int, int]:
    """(first call ms, median ms, files read, files parsed in full) per selection."""
    times = []
    parsed = read = 0
    for _ in range(repeat):
        start = time.perf_counter()
        selection = select_lessons(meta, "technology", now=NOW, rng=random.Random(1), control_fraction=0.0)
        times.append((time.perf_counter() - start) * 1000)
        read = len(selection.considered) + sum(
            1 for _, why in selection.excluded if not why.startswith(UNREAD)
        )
        parsed = read - sum(1 for _, why in selection.excluded if why.startswith(SCANNED))
    return times[0], statistics.median(times), read, parsed


def standard_report() -> tuple[dict, str]:
    sources = [
        {
            "n": i,
            "title": f"Source {i}",
            "location": f"https://site{i % 5}.example.org/page/{i}",
            "site": f"site{i % 5}.example.org",
            "provider": "ddgs",
            "score": 4,
            "reason": "on topic",
            "status": "kept" if i <= 8 else "dropped",
            "snippet_only": False,
        }
        for i in range(1, 13)
    ]
    record = {
        "id": make_run_id("how do heat pumps perform in cold climates", NOW),
        "query": "how do heat pumps perform in cold climates",
        "mode": "standard",
        "domain": "technology",
        "model": "gpt-4o-mini",
        "report_path": "reports/x.md",
        "gate_decision": "full_report",
        "sub_queries": [
            "heat pump efficiency below freezing",
            "cold climate heat pump field trials",
            "heat pump defrost cycle losses",
            "heat pump cost comparison gas furnace",
        ],
        "sources": sources,
        "skeptic": {"viability": 70, "findings": []},
    }
    paragraph = (
        "Cold-climate heat pumps keep a coefficient of performance above 2 at -15 C in field trials [1, 3]. "
        "Defrost cycles cost between 5 and 10 percent of output [2]. "
    ) * 2
    body = "\n\n".join(paragraph for _ in range(24))
    report = f"# Heat pumps in cold climates\n\n## Executive Summary\n\n{body}\n\n## Sources\n\n" + "\n".join(
        f"{s['n']}. {s['title']} — {s['location']}" for s in sources if s["status"] == "kept"
    )
    return record, report


_WORDS = (
    "autovacuum threshold storage reclaim tuples bloat visibility checkpoint replication partition index "
    "transaction snapshot isolation planner statistics histogram sequential bitmap parallel worker memory "
    "buffer eviction latency throughput benchmark PostgreSQL Oracle Linux Kubernetes Norway Canada"
).split()
_ELSEWHERE = "glacier volcano monsoon harvest cathedral symphony Zanzibar Patagonia Mongolia 1848 1912".split()


def citation_case(rng: random.Random, *, words: int = 3000, sources: int = 15) -> tuple[str, dict[int, str]]:
    """A ``words``-word report citing ``sources`` sources whose texts are about 2,400 characters
    each (a deep run's passage budget): half the sentences restate their source, half do not."""
    texts = {}
    for n in range(1, sources + 1):
        sentences = [
            f"The {rng.choice(_WORDS)} of {rng.choice(_WORDS)} reached {rng.randint(2, 990)} in {rng.randint(1995, 2026)}."
            for _ in range(40)
        ]
        texts[n] = " ".join(sentences)[:2400]
    body: list[str] = []
    count = 0
    while count < words:
        n = rng.randint(1, sources)
        if rng.random() < 0.5:
            sentence = rng.choice(texts[n].split(". ")).rstrip(".") + f" [{n}]."
        else:
            sentence = " ".join(rng.choice(_ELSEWHERE) for _ in range(14)).capitalize() + f" [{n}]."
        body.append(sentence)
        count += len(sentence.split())
    paragraphs = [" ".join(body[i : i + 6]) for i in range(0, len(body), 6)]
    report = "# Report\n\n## Findings\n\n" + "\n\n".join(paragraphs) + "\n\n## Sources\n\n1. x\n"
    return report, texts


def time_citation_support(repeat: int) -> tuple[float, float, int, CitationFacts]:
    """(first call ms, median ms, report words, the facts) for the citation-support measure."""
    report, texts = citation_case(random.Random(7))
    times = []
    for _ in range(max(repeat, 5)):
        start = time.perf_counter()
        facts = citation_support(report, texts)
        times.append((time.perf_counter() - start) * 1000)
    return times[0], statistics.median(times), len(report.split()), facts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(42)
    with tempfile.TemporaryDirectory() as tmp:
        for count, goal in ((50, 20.0), (10_000, 200.0)):
            meta = Path(tmp) / f"meta-{count}"
            start = time.perf_counter()
            make_critiques(meta, count, rng=rng, span=timedelta(days=60 if count > 50 else 20))
            made = time.perf_counter() - start
            first, median, read, parsed = time_selection(meta, args.repeat)
            verdict = "ok" if median < goal else "OVER GOAL"
            print(
                f"selection over {count:>6} critique files: first {first:7.2f} ms, median {median:7.2f} ms "
                f"(goal < {goal:.0f} ms: {verdict}); files read: {read}, parsed in full: {parsed} "
                f"[generated in {made:.1f} s]"
            )
        meta = Path(tmp) / "spawn" / "meta"
        meta.mkdir(parents=True)
        spawn_times = []
        for _ in range(5):
            start = time.perf_counter()
            pid = spawn_critique(meta / "run-missing_20261122T120000000000Z.yaml", reports_dir=meta.parent)
            spawn_times.append((time.perf_counter() - start) * 1000)
            os.waitpid(pid, 0)  # let the child log its failure before the folder goes away
        print(
            f"starting a detached critique: median {statistics.median(spawn_times):.2f} ms (the user's wait)"
        )
    first, median, words, facts = time_citation_support(args.repeat)
    verdict = "ok" if median < 50.0 else "OVER GOAL"
    print(
        f"citation support for a {words}-word report with 15 sources: first {first:.2f} ms, median {median:.2f} ms "
        f"(goal < 50 ms: {verdict}); {facts.sentences} cited sentences, {facts.weakly_supported} weakly supported"
    )
    record, report = standard_report()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"run-{record['id']}.yaml"
        path.write_text(store.dump_yaml(record), encoding="utf-8")
        facts_of_run = compute_facts(read_run_record(path), report, now=NOW)
    request = build_request(facts_of_run, report)
    words = len(report.split())
    tokens = estimate_tokens(request.system) + estimate_tokens(request.user)
    print(
        f"critique prompt for a {words}-word standard report: about {tokens} tokens (+ at most 900 completion)"
    )


if __name__ == "__main__":
    main()
