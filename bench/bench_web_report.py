"""How long the workbench takes to answer a report's page (``GET /reports/<id>``) with 70 citations.

It makes a real report first: the CLI (``research-agent run --deep --corpus DIR --no-critique``)
against the fake OpenAI-compatible server on 127.0.0.1, over the tests' prose notes, then adds
paragraphs that cite the report's own sources until the body holds ``--citations`` citations
(its run record and stored passages are the run's own). Then it asks the workbench in-process
(the real app behind httpx's ASGI transport: guard, headers, templates, the export's rendering in
a CPU worker process, the run record read) for the page: once cold (the worker starts), then
``--repeat`` times warm, and prints the median and the slowest, beside the export's rendering
alone in this process. Goal: the page in under 300 ms.

    python -m bench.bench_web_report [--citations 70] [--repeat 20]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import tempfile
import time
from pathlib import Path

import httpx

from research_agent.service.reports import report_html_text
from research_agent.web import WebBind, Workbench, build_app
from tests.support.cli import cli
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.prose_corpus import PROSE_QUESTION, write_prose_corpus
from tests.support.research_responder import ResearchResponder
from tests.support.web import options_for

GOAL_MS = 300.0
_CITE = re.compile(r"\[(\d+(?:,\s*\d+)*)\]")


def make_report(work: Path, citations: int) -> Path:
    """A real run's report, padded with cited paragraphs to ``citations`` citations in all."""
    corpus = write_prose_corpus(work / "corpus")
    with FakeOpenAIServer(ResearchResponder()) as server:
        done = cli(work, "run", PROSE_QUESTION, "--deep", "--corpus", str(corpus), "--reports-dir",
                   str(work / "reports"), "--no-critique", base_url=server.base_url)  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"the run failed: {done.stderr.strip().splitlines()[-1:]}")
    report = Path(done.stdout.splitlines()[0])
    text = report.read_text(encoding="utf-8")
    body, sources = text.split("\n## Sources", 1)
    numbers = sorted({int(n) for n in re.findall(r"^(\d+)\. ", sources, re.M)})
    sentences = [s.strip() for s in re.findall(r"([A-Z][^.\[\]\n]{30,200}) \[\d+\]\.", body)]
    body, have = _at_most(body, citations)
    extra = [f"{sentences[i % len(sentences)]} [{numbers[i % len(numbers)]}]." for i in range(citations - have)]
    more = "\n\n## More of the same\n\n" + " ".join(extra) if extra else ""
    report.write_text(body.rstrip() + more + "\n\n## Sources" + sources, encoding="utf-8")
    return report


def _at_most(body: str, limit: int) -> tuple[str, int]:
    """``body`` with the citations after the first ``limit`` taken out (their sentences kept)."""
    kept = 0

    def one(match: re.Match[str]) -> str:
        nonlocal kept
        count = len(match.group(1).split(","))
        if kept + count > limit:
            return ""
        kept += count
        return match.group(0)

    return _CITE.sub(one, body), kept


async def measure(work: Path, report: Path, repeat: int) -> tuple[float, list[float], int]:
    options = options_for(work, reports_dir=report.parent)
    bench = Workbench(options)
    app = build_app(options, WebBind("127.0.0.1", 8600), bench=bench)
    transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 50000))
    times = []
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8600", timeout=120) as client:
            for _ in range(repeat + 1):
                start = time.perf_counter()
                page = await client.get(f"/reports/{report.stem}")
                times.append((time.perf_counter() - start) * 1000)
                if page.status_code != 200:
                    raise SystemExit(f"the page failed: {page.status_code} {page.text[:200]}")
    finally:
        await bench.close()
    return times[0], times[1:], page.text.count('<span class="cite">') or page.text.count("href=\"#src-")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--citations", type=int, default=70)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ra-bench-web-") as folder:
        work = Path(folder)
        report = make_report(work, args.citations)
        start = time.perf_counter()
        html = report_html_text(report.parent, report.stem)
        alone = (time.perf_counter() - start) * 1000
        cold, warm, links = asyncio.run(measure(work, report, args.repeat))
    median, slowest = statistics.median(warm), max(warm)
    print(f"report: {links} citation links, page {len(html) // 1024} KiB (the export's HTML)")
    print(f"the export's rendering alone, in this process: {alone:.0f} ms (first call)")
    print(f"GET /reports/<id>: cold {cold:.0f} ms (starts the CPU worker); warm median {median:.0f} ms, "
          f"slowest {slowest:.0f} ms of {len(warm)}")
    print(f"goal: the page in under {GOAL_MS:.0f} ms warm: {'met' if median < GOAL_MS else 'NOT met'}")


if __name__ == "__main__":
    main()
