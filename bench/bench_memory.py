"""Benchmark the memory: lesson selection with effects over 50 and 10,000 critique files.

Goals (issues 4, 12 and 20): selection, with every candidate lesson's effect measured and the
per-lesson trial draw, under 20 ms with 50 files and under 200 ms with 10,000 (retention off),
once the summary index (``meta/index.sqlite``, its rows signed with the user's key and, once
checked, sealed in the user's state folder) exists; the figure issue 20 holds to 200 ms is
*a run's selection*: the offer over every domain with lessons, then the named domain. The first call builds the index from the YAML (the cold
figure); a hand edit re-reads only the edited file. A run names its domain only in its
first plan, so it selects for every domain with enough critiques until its planning prompt
is full (issue 13); that figure is printed beside the one-domain selection (the generated
critiques spread over all domains: the worst case, most users research in a few). Also reports how long starting a
detached critique takes (the time the user's command pays for it) and the size of the
critique prompt for a standard-length report, and computing the citation-support facts
for a 3,000-word report with 15 sources (goal under 50 ms).

    /work/venv/bin/python -m bench.bench_memory [--repeat 7]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from research_agent.domains import DOMAINS
from research_agent.ids import make_run_id
from research_agent.measures import (
    CitationFacts,
    CritiqueFacts,
    RecencyFacts,
    SiteCounts,
    SiteFacts,
    SourceCounts,
    SubQueryFacts,
)
from research_agent.memory.critique.citation_support import citation_support
from research_agent.memory.critique.judgement import build_request, compute_facts
from research_agent.memory.critique.spawn import spawn_critique
from research_agent.memory.lessons.effects_view import lesson_effects
from research_agent.memory.lessons.run import MemoryLessons
from research_agent.memory.lessons.select import select_lessons
from research_agent.memory.store import files as store
from research_agent.memory.store.critique_types import Critique, LessonUse, Scores, WithheldLesson
from research_agent.memory.store.person.file import PersonLesson
from research_agent.memory.store.person.lessons import add_lesson
from research_agent.memory.store.schema import DIMENSIONS, TAGS
from research_agent.record import read_run_record
from research_agent.text.passages import estimate_tokens

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


SITES = ("docs.python.org", "example.com", "guides/vacuum", "news.example.org", "wiki.example.net")
KEYS = (
    "coverage:unanswered",
    "counterarguments:missing",
    "site:kept:docs.python.org",
    "source-kind:snippet-only",
)


def make_facts(rng: random.Random) -> CritiqueFacts:
    per_site = tuple(
        SiteCounts(site, rng.randint(0, 4), rng.randint(0, 4), rng.randint(0, 2)) for site in SITES
    )
    kept = sum(p.kept for p in per_site)
    top = max(per_site, key=lambda p: p.kept)
    subs = tuple(
        SubQueryFacts(i, f"sub-query {i}", 5, rng.randint(0, 3), rng.randint(0, 2)) for i in range(1, 5)
    )
    weak = rng.randint(0, 4)
    return CritiqueFacts(
        sources=SourceCounts(20, 18, kept, rng.randint(0, 9), 1, rng.randint(0, kept), rng.random() < 0.1),
        sites=SiteFacts(
            sum(1 for p in per_site if p.kept), top.site, round(top.kept / max(kept, 1), 2), per_site
        ),
        sub_queries=subs,
        unanswered=sum(1 for q in subs if q.kept == 0),
        citations=CitationFacts(12, weak, round(weak / 12, 2)),
        recency=RecencyFacts(4, rng.randint(30, 1500), 2015, 2026),
    )


def make_critiques(meta: Path, count: int, *, rng: random.Random, span: timedelta) -> None:
    """Write ``count`` valid critiques with facts spread over ``span`` before NOW, all domains
    mixed; half adaptive (lessons applied), half baseline (lessons withheld)."""
    step = span / count
    for i in range(count):
        when = NOW - step * i - timedelta(seconds=1)
        scores = Scores(**{d: rng.randint(2, 5) for d in DIMENSIONS})
        keys = tuple(rng.sample(KEYS, 3))
        trial = keys[-1] if rng.random() < 0.25 else None  # adaptive runs withhold a lesson for its trial
        applied = tuple(
            LessonUse(
                f"Lesson text for {k}.",
                key=k,
                stage="relevance" if k.startswith(("site", "source")) else "decompose",
            )
            for k in keys
            if k != trial
        )
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
            lessons_applied=applied if i % 2 else (),
            lessons_withheld=(
                ((WithheldLesson(trial, "trial"),) if trial else ())
                if i % 2
                else tuple(WithheldLesson(k, "control") for k in keys)
            ),
            facts=make_facts(rng),
        )
        if i < 50:
            store.write_critique(meta, critique)  # the real, fsynced path
        else:  # the same bytes without an fsync per file, to keep generation quick
            store.critique_path(meta, critique.id).write_text(
                store.dump_yaml(critique.as_dict()), encoding="utf-8"
            )


def select(meta: Path):
    return select_lessons(
        meta, "technology", now=NOW, rng=random.Random(1), control_fraction=0.0, state_dir=state_dir(meta)
    )


def state_dir(meta: Path) -> Path:
    """The user state folder of the benchmark (beside ``meta``): the key that signs the index,
    its seal, the trust of a ``lessons.yaml``. One per user, as in real use."""
    return meta.parent / f"{meta.name}-state"


def time_selection(meta: Path, repeat: int) -> tuple[float, float, float, float, str]:
    """(cold ms: the index built from the YAML, warm median ms, warm median CPU ms, ms after
    one hand edit, lessons given). CPU time is printed too: on a busy machine the wall time
    mostly measures waiting for a CPU."""
    start = time.perf_counter()
    select(meta)
    cold = (time.perf_counter() - start) * 1000
    times, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        selection = select(meta)
        times.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)
    edited = max(meta.glob("critique-*.yaml"))
    edited.write_text(
        edited.read_text(encoding="utf-8").replace("weaknesses:", "weaknesses:\n- Edited by hand.", 1)
    )
    start = time.perf_counter()
    select(meta)
    after_edit = (time.perf_counter() - start) * 1000
    return cold, statistics.median(times), statistics.median(cpu), after_edit, selection.reason


PERSON_LESSONS = (  # a person's own: one planning lesson for every domain, so every domain is offered
    PersonLesson("user:release-notes", "decompose", "any", "Include the release notes of the version asked about."),
    PersonLesson("user:manuals", "decompose", "technology", "Prefer the project's own manual to blog posts."),
    PersonLesson("user:vendors", "relevance", "any", "Score vendor benchmark pages no higher than 2."),
)


def trust_person_lessons(meta: Path, state: Path) -> None:
    """A trusted ``lessons.yaml`` in ``meta`` (the person's own lessons, written as the CLI does)."""
    for lesson in PERSON_LESSONS:
        add_lesson(meta, state, lesson)


def time_run_selection(meta: Path, repeat: int, state: Path | None = None) -> tuple[float, float, int, str]:
    """(median ms, median CPU ms, domains offered, what was given) of what a run selects: the offer
    before its first plan, then the lessons of the domain that plan names, with the production
    trial draw (default probability) and every candidate lesson's effect. ``state``: the state
    folder of a trusted ``lessons.yaml`` (the person's lessons read, checked and offered too)."""
    times, cpu, offered, given = [], [], 0, ""
    for seed in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        lessons = MemoryLessons(
            meta, now=NOW, rng=random.Random(seed), control_fraction=0.0, state_dir=state or state_dir(meta)
        )
        offer = lessons.offer()
        offered = len({*offer.by_domain, *(["any"] if offer.everywhere else [])})
        given = lessons.given("technology").reason
        times.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)
    return statistics.median(times), statistics.median(cpu), offered, given


def time_effects(meta: Path, repeat: int) -> tuple[float, int]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        effects = lesson_effects(meta, now=NOW, state_dir=state_dir(meta))
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), len(effects)


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
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPU(s)")
    rng = random.Random(42)
    with tempfile.TemporaryDirectory() as tmp:
        for count, goal in ((50, 20.0), (10_000, 200.0)):
            meta = Path(tmp) / f"meta-{count}"
            start = time.perf_counter()
            make_critiques(meta, count, rng=rng, span=timedelta(days=60 if count > 50 else 20))
            made = time.perf_counter() - start
            cold, median, cpu, edit, outcome = time_selection(meta, args.repeat)
            verdict = "ok" if cpu < goal else "OVER GOAL"  # CPU: on a shared machine wall time measures waiting
            print(
                f"selection with effects over {count:>6} critique files: warm median {median:7.2f} ms, "
                f"CPU {cpu:7.2f} ms (goal < {goal:.0f} ms: {verdict}); cold (index built from the YAML) "
                f"{cold:8.1f} ms; after a hand edit {edit:7.2f} ms [generated in {made:.1f} s]\n  ({outcome})"
            )
            run_ms, run_cpu, offered, given = time_run_selection(meta, args.repeat)
            verdict = "ok" if run_cpu < goal else "OVER GOAL"
            print(
                f"  a run's selection (offer over {offered} domains, then the named one, trials and effects): "
                f"median {run_ms:7.2f} ms, CPU {run_cpu:7.2f} ms (goal < {goal:.0f} ms: {verdict})\n  ({given})"
            )
            state = state_dir(meta)
            trust_person_lessons(meta, state)
            run_ms, run_cpu, offered, given = time_run_selection(meta, args.repeat, state)
            verdict = "ok" if run_cpu < goal else "OVER GOAL"
            print(
                f"  with a trusted lessons.yaml of {len(PERSON_LESSONS)} lessons (one for every domain: all "
                f"domains selected): median {run_ms:7.2f} ms, CPU {run_cpu:7.2f} ms (goal < {goal:.0f} ms: "
                f"{verdict})\n  ({given})"
            )
            effects_ms, keys = time_effects(meta, args.repeat)
            print(
                f"memory effects over {count:>6} critique files (all domains): median {effects_ms:7.2f} ms, {keys} rows"
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
