"""What an HTML export of a citation-dense report costs: page size, render time, peak memory.

Run: ``python -m bench.bench_export [--citations 78000] [--sources 20] [--words 2000] [--pdf CHROMIUM]``

It writes a report with ``--citations`` cited sentences spread over ``--sources`` sources, and a
passage store with ``--words`` words of text per source (the shape of issue 31's attack: a 977 KB
report with 78,000 citations), renders the page the way ``export`` does, and prints the report's
size, the page's size, its bytes per citation, the render time and the process's peak RSS. Run
it against another checkout with ``PYTHONPATH=DIR`` (e.g. ``git archive main research_agent | tar
-x -C /tmp/base``) for before and after. Nothing is fetched. ``--pdf`` prints it to PDF too, through
the Chromium given, within the budget of the report's size (time, the PDF's size and pages, the
children's peak RSS; or the refusal, and how long it took to say it). ``--per-line N`` writes N
citations a line, a line a paragraph (issue 45's shape: 13,000 lines of 6).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from bench._util import peak_rss_mb
from research_agent.export import export_report
from research_agent.ids import make_run_id
from research_agent.record.passages import build_passage_store, passages_path

TOPICS = ("heat", "pump", "ground", "loop", "defrost", "winter", "cost", "noise", "grid", "tariff")


def _report(run_id: str, citations: int, sources: int, per_line: int = 20) -> str:
    sentences = [f"{TOPICS[i % len(TOPICS)].title()} [{i % sources + 1}]." for i in range(citations)]
    paragraphs = "\n\n".join(" ".join(sentences[i : i + per_line]) for i in range(0, citations, per_line))
    entries = "\n".join(f"{n}. Source {n} \u2014 <https://example.org/{n}>" for n in range(1, sources + 1))
    return f"---\nid: {run_id}\nquery: heat pumps\n---\n\n# Heat pumps\n\n## Findings\n\n{paragraphs}\n\n## Sources\n\n{entries}\n"


def _text(n: int, words: int) -> str:
    return " ".join(f"{TOPICS[(n + i) % len(TOPICS)]} word{i % 97}." if i % 12 == 11 else f"w{n}x{i}" for i in range(words))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--citations", type=int, default=78_000)
    parser.add_argument("--sources", type=int, default=20)
    parser.add_argument("--words", type=int, default=2000)
    parser.add_argument("--per-line", type=int, default=20)
    parser.add_argument("--pdf", type=Path, metavar="CHROMIUM", help="print the PDF too, through this Chromium")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ra-bench-export-") as folder:
        reports = Path(folder)
        (reports / "meta").mkdir()
        run_id = make_run_id("bench", None)
        report = reports / f"{run_id}.md"
        report.write_text(_report(run_id, args.citations, args.sources, args.per_line), encoding="utf-8")
        store = build_passage_store(
            run_id, [(f"Source {n}", f"https://example.org/{n}", _text(n, args.words)) for n in range(1, args.sources + 1)]
        )
        passages_path(reports / "meta", run_id).write_bytes(store.to_json())
        started = time.perf_counter()
        exported = export_report(report, fmt="html", reports_dir=reports, output=reports / "page.html")
        took = time.perf_counter() - started
        size = exported.path.stat().st_size
        peak = peak_rss_mb()
        print(f"report {report.stat().st_size / 1024:.0f} KB, {exported.citations} citations "
              f"({exported.previews} with a preview), {args.sources} sources")  # fmt: skip
        print(f"page {size / 1e6:.1f} MB, {size / max(1, exported.citations):.0f} bytes per citation, "
              f"rendered in {took:.1f} s, peak RSS {peak:.0f} MB")  # fmt: skip
        if args.pdf is not None:
            _pdf(report, reports, args.pdf)


def _pdf(report: Path, reports: Path, browser: Path) -> None:
    """Print ``report`` to PDF within its budget, and say what it cost (or how fast it was refused)."""
    from research_agent.errors import ResearchError

    started = time.perf_counter()
    try:
        exported = export_report(report, fmt="pdf", reports_dir=reports, output=reports / "page.pdf", browser=browser)
    except ResearchError as exc:
        print(f"pdf refused in {time.perf_counter() - started:.2f} s: {exc}")
        return
    took = time.perf_counter() - started
    children = peak_rss_mb(children=True)
    data = exported.path.read_bytes()
    print(f"pdf {len(data) / 1e6:.1f} MB, {data.count(b'/Type /Page') - data.count(b'/Type /Pages')} pages, "
          f"printed in {took:.1f} s, the browser's largest process {children:.0f} MB")


if __name__ == "__main__":
    main()
