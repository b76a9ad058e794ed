"""Export a report to HTML and PDF and save a PNG screenshot of the page, for a person to look at.

Without ``--report``, it first makes one: the real CLI (``research-agent run QUESTION --corpus DIR
--format html --no-critique``) against the fake OpenAI-compatible server on 127.0.0.1, over the
prose notes the tests use (or ``--corpus DIR --question Q``, e.g. the asyncio pages of Debian's
python3.11-doc: its writer copies sentences from the sources, tables included). Then it prints
how long the export and the PDF took and what the page holds (citations linked, previews, bytes),
and takes the screenshot through ``chromium --screenshot``. A screenshot cannot hover, so the
copy it photographs holds one citation's preview open: the first in the body, after the Key
Findings (``--open N``: the Nth citation; 0: none).

    python -m bench.screenshot_report [--report REPORT.md | --corpus DIR --question Q]
                                      [--out report.png] [--open N] [--width 1100] [--height 1500]

Nothing leaves 127.0.0.1: the corpus is local, the model is the fake server, and Chromium
runs with the flags of research_agent/export/browser.py.
"""

from __future__ import annotations

import argparse
import re
import tempfile
import time
from pathlib import Path

from research_agent.export import export_report, find_browser, report_page
from research_agent.export.browser import screenshot
from research_agent.review.report_file import read_report
from tests.support.cli import cli
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.prose_corpus import PROSE_QUESTION, write_prose_corpus
from tests.support.research_responder import ResearchResponder


def make_report(work: Path, corpus: Path | None, question: str) -> Path:
    """One report from the real CLI over a local corpus and the fake server; its markdown path."""
    if corpus is None:
        corpus = write_prose_corpus(work / "corpus")
    with FakeOpenAIServer(ResearchResponder()) as server:
        done = cli(work, "run", question, "--corpus", str(corpus), "--reports-dir", str(work / "reports"),
                   "--no-critique", "--format", "html", base_url=server.base_url)  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"the run failed: {done.stderr.strip().splitlines()[-1:]}")
    return Path(done.stdout.splitlines()[0])


def held_open(html: str, n: int | None) -> str:
    """The page with the preview of its ``n``-th citation's source shown, as hovering would show it
    (None: the first citation after the third heading, i.e. in the body after the Key Findings)."""
    if n is None:
        third = html.find("<h2>", html.find("<h2>", html.find("<h2>") + 1) + 1)
        found = re.search(r'aria-describedby="tip-(\d+)"', html[third:]) if third >= 0 else None
        n = int(found.group(1)) if found else 0
    elif n > 0:
        cited = re.findall(r'aria-describedby="tip-(\d+)"', html)
        n = int(cited[n - 1]) if n <= len(cited) else 0
    if n <= 0:
        return html
    rule = f"#tip-{n} {{ display: block; }}"
    return html.replace("</style>", f"{rule}\n</style>", 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--report", type=Path, help="an existing report (default: make one)")
    parser.add_argument(
        "--corpus", type=Path, help="the folder to research (default: the tests' prose notes)"
    )
    parser.add_argument("--question", default=PROSE_QUESTION)
    parser.add_argument("--out", type=Path, default=Path("report.png"))
    parser.add_argument("--open", type=int, help="hold this citation's preview open (0: none)")
    parser.add_argument("--width", type=int, default=1100)
    parser.add_argument("--height", type=int, default=1500)
    args = parser.parse_args()
    browser = find_browser()
    with tempfile.TemporaryDirectory(prefix="ra-screenshot-") as folder:
        work = Path(folder)
        report = args.report or make_report(work, args.corpus, args.question)
        reports_dir = report.parent
        started = time.perf_counter()
        page, note = report_page(report, read_report(report), reports_dir)
        render_s = time.perf_counter() - started
        html = work / "page.html"
        export_report(report, fmt="html", reports_dir=reports_dir, output=html)
        started = time.perf_counter()
        pdf = export_report(report, fmt="pdf", reports_dir=reports_dir, output=work / "page.pdf")
        pdf_s = time.perf_counter() - started
        shown = work / "shown.html"
        shown.write_text(held_open(page.html, args.open), encoding="utf-8")
        started = time.perf_counter()
        png = screenshot(browser, shown, args.out, width=args.width, height=args.height)
        shot_s = time.perf_counter() - started
        print(f"report      {report}")
        print(f"page        {len(page.html.encode('utf-8')):,} bytes, {page.citations} citation links, "
              f"{page.previews} with a preview, {len(page.unresolved)} unresolved{'; ' + note if note else ''}")  # fmt: skip
        print(f"render      {render_s * 1000:.1f} ms (markdown to HTML, passages matched)")
        print(
            f"pdf         {pdf.path.stat().st_size:,} bytes in {pdf_s:.2f} s (one headless Chromium launch)"
        )
        print(f"screenshot  {png} ({args.width}x{args.height}) in {shot_s:.2f} s")


if __name__ == "__main__":
    main()
