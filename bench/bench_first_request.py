"""How soon the first request leaves: process start to the first call arriving at the endpoint.

Each figure is a fresh process (``python -m research_agent run QUESTION --standard
--no-critique``) against the fake OpenAI-compatible server on 127.0.0.1, which stamps every
request as it arrives (``tests/support/fake_openai_server.py``); the time from spawning the
CLI to the first stamp is the start-up a user waits for before the model is even asked.
Two runs: over an indexed corpus (python3.11-doc's HTML, indexed beforehand, so the run only
checks its index; ``--corpus DIR``) and over the web (a SearXNG-shaped server on 127.0.0.1
answering with pages it serves itself: no internet).

Measured in the same session, interleaved with the runs (so the machine's load falls on all
of them alike): the dependency floor, a fresh ``python -c "import httpx, yaml, jsonschema,
rich, typer"`` (the libraries every run needs, which no change here can make lighter), and the
same with ``openai`` (since issue 43 a run needs it too: every chat request goes through it);
``python -c pass``; and the installed openai's version and ``import openai`` (in-process
seconds, fresh interpreters). Then the overhead (wall - sequential rounds x latency, start-up
and teardown included) of the corpus run at 0 and at 0.5 s per call. On a loaded machine wall
times measure the neighbours too: the CPU seconds of the floors and of the whole corpus run (the
child process's user + system time) are printed as well, what a quiet machine's wall time would be.

Goals (issue 37): the first request at most 0.5 s after the dependency floor (corpus run);
overhead at 0.5 s per call at most 1.2 s. ``--before DIR`` (another checkout, e.g.
``git archive cea5fde | tar -x -C /tmp/before``) is measured in the same rounds, alternating.

    python -m bench.bench_first_request [--repeat 5] [--before DIR] [--corpus DIR] [--no-web]
                                        [--cache-dir DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench._cli_run import CliRun, run_cli
from bench.bench_pipeline import DEFAULT_CACHE, DOCS, QUERY, asyncio_corpus, prepare_corpus
from research_agent.config import MODES
from tests.support.http_server import LocalServer
from tests.support.research_responder import ResearchResponder

FLOOR = "import httpx, yaml, jsonschema, rich, typer"
FLOOR_SDK = FLOOR + ", openai"
FIRST_GOAL = 0.5  # seconds after the floor
OVERHEAD_GOAL = 1.2  # seconds at 0.5 s per call
PAGES = ("/article", "/article2", "/plain", "/latin1")
WEB_QUERY = "How well do heat pumps work in cold climates?"


@dataclass
class Figures:
    """One version's measurements, a list per figure (one entry per round)."""

    label: str
    src: Path | None
    floor: list[float] = field(default_factory=list)
    floor_sdk: list[float] = field(default_factory=list)
    floor_cpu: list[float] = field(default_factory=list)  # CPU seconds: what a quiet machine's wall time would be
    floor_sdk_cpu: list[float] = field(default_factory=list)
    corpus_cpu: list[float] = field(default_factory=list)  # the whole corpus run at 0 s per call
    corpus_first: list[float] = field(default_factory=list)
    corpus_zero: list[float] = field(default_factory=list)
    corpus_half: list[float] = field(default_factory=list)
    web_first: list[float] = field(default_factory=list)


def process_wall(code: str, src: Path | None = None, cpu: list[float] | None = None) -> float:
    """Wall seconds of a fresh ``python -c code`` (from this checkout's interpreter, ``src`` first on the
    path); its CPU seconds appended to ``cpu`` if given."""
    env = {"PATH": os.environ.get("PATH", ""), "HOME": tempfile.gettempdir()}
    if src is not None:
        env["PYTHONPATH"] = str(src)
    start, used = time.perf_counter(), children_cpu()
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=120, capture_output=True)
    if cpu is not None:
        cpu.append(children_cpu() - used)
    return time.perf_counter() - start


def children_cpu() -> float:
    """User + system CPU seconds of this process's waited-for children so far (the CLI runs and the
    floors; the fake endpoint is a thread of this process, not counted)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def openai_import() -> tuple[str, float]:
    """The installed openai's version and the seconds ``import openai`` takes in a fresh interpreter."""
    code = (
        "import time; t = time.perf_counter(); import openai; took = time.perf_counter() - t; "
        "import json; print(json.dumps([openai.__version__, took]))"
    )
    done = subprocess.run([sys.executable, "-c", code], timeout=120, capture_output=True, text=True)
    if done.returncode != 0:  # an old checkout's environment without it
        return "not installed", float("nan")
    version, took = json.loads(done.stdout)
    return version, took


def searxng(server: LocalServer):
    """A SearXNG JSON route on ``server`` whose results are pages the same server serves."""

    def route(handler) -> None:
        q = (handler.query.get("q") or [""])[0]
        results = [{"url": server.url(path), "title": f"{q} {path}", "content": f"Heat pumps {path}.",
                    "engine": "duckduckgo"} for path in PAGES]  # fmt: skip
        handler.send(200, json.dumps({"query": q, "results": results}), "application/json")

    return route


def web_run(figures: Figures, cache_dir: Path) -> CliRun:
    server = LocalServer()
    server.extra_routes[("GET", "/search")] = searxng(server)
    with server:
        sources = ["--search", "searxng", "--searxng-url", server.url("/"), "--allow-private", "--ignore-robots"]
        return run_cli(WEB_QUERY, Path("."), cache_dir, ResearchResponder(viability=80), latency=0.0,
                       mode="standard", src=figures.src, sources=sources)  # fmt: skip


def one_round(figures: Figures, corpus: Path, cache_dir: Path, web: bool) -> None:
    """One of each measurement for one version, appended to ``figures``."""

    def corpus_run(latency: float) -> CliRun:
        return run_cli(QUERY, corpus, cache_dir, ResearchResponder(viability=80), latency=latency,
                       mode="standard", src=figures.src)  # fmt: skip

    figures.floor.append(process_wall(FLOOR, figures.src, figures.floor_cpu))
    figures.floor_sdk.append(process_wall(FLOOR_SDK, figures.src, figures.floor_sdk_cpu))
    used = children_cpu()
    zero = corpus_run(0.0)
    figures.corpus_cpu.append(children_cpu() - used)
    figures.corpus_first.append(zero.before_first)
    figures.corpus_zero.append(zero.overhead)
    figures.corpus_half.append(corpus_run(0.5).overhead)
    if web:
        figures.web_first.append(web_run(figures, cache_dir).before_first)


def med(values: list[float]) -> str:
    return f"{statistics.median(values):.2f}" if values else "-"


def spread(values: list[float]) -> str:
    return f"{min(values):.2f}-{max(values):.2f}" if values else ""


def print_figures(versions: list[Figures], passes: list[float], imports: list[float], version: str) -> None:
    print(f"\nopenai {version}: import openai {med(imports)} s in a fresh interpreter ({spread(imports)}); "
          f"python -c pass {med(passes)} s")
    rows = (("dependency floor (fresh process)", "floor"), ("floor with openai", "floor_sdk"),
            ("first request, corpus run", "corpus_first"),
            ("first request, web run", "web_first"), ("overhead at 0 s per call", "corpus_zero"),
            ("overhead at 0.5 s per call", "corpus_half"), ("CPU: dependency floor", "floor_cpu"),
            ("CPU: floor with openai", "floor_sdk_cpu"), ("CPU: corpus run at 0 s per call", "corpus_cpu"))  # fmt: skip
    print(f"{'medians, seconds (range)':<36}" + "".join(f"{f.label:>22}" for f in versions))
    for title, name in rows:
        cells = "".join(f"{med(getattr(f, name)) + ' (' + spread(getattr(f, name)) + ')':>22}" for f in versions)
        print(f"{title:<36}{cells}")
    for f in versions:
        after_floor = statistics.median(f.corpus_first) - statistics.median(f.floor)
        half = statistics.median(f.corpus_half)
        after_sdk = statistics.median(f.corpus_first) - statistics.median(f.floor_sdk)
        print(f"[{f.label}] first request {after_floor:.2f} s after the floor (goal: at most {FIRST_GOAL} s: "
              f"{'met' if after_floor <= FIRST_GOAL else 'NOT met'}), {after_sdk:.2f} s after the floor with openai; "
              f"overhead at 0.5 s per call {half:.2f} s "
              f"(goal: at most {OVERHEAD_GOAL} s: {'met' if half <= OVERHEAD_GOAL else 'NOT met'})")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="rounds (each: every figure once per version)")
    parser.add_argument("--before", type=Path, help="another checkout, measured in the same rounds")
    parser.add_argument("--corpus", type=Path)
    parser.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE, help="kept between bench runs")
    parser.add_argument("--no-web", action="store_true", help="skip the web run")
    return parser.parse_args()


async def main() -> None:
    args = parse_args()
    corpus = args.corpus or (DOCS if DOCS.exists() else asyncio_corpus(args.cache_dir / "corpus"))
    versions = [Figures("this checkout", None)]
    if args.before is not None:
        versions.append(Figures(f"before ({args.before.name})", args.before.resolve()))
    caches = {id(f): args.cache_dir / f"first-request-{i}" for i, f in enumerate(versions)}
    for f in versions:  # each version's own index (their formats may differ), built or checked now
        await prepare_corpus(corpus, caches[id(f)] / "cache", MODES["standard"].source_tokens)
        run_cli(QUERY, corpus, caches[id(f)] / "cache", ResearchResponder(viability=80), latency=0.0,
                mode="standard", src=f.src)  # fmt: skip  # a warm-up: the index as the version itself keeps it
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {os.cpu_count()} CPUs")
    passes, imports, version = [], [], ""
    for _ in range(args.repeat):
        passes.append(process_wall("pass"))
        version, took = openai_import()
        imports.append(took)
        for f in versions if _ % 2 == 0 else reversed(versions):
            one_round(f, corpus, caches[id(f)] / "cache", not args.no_web)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print_figures(versions, passes, imports, version)


if __name__ == "__main__":
    asyncio.run(main())
