"""Screenshots of every page of the web workbench, for the documentation (``docs/images/web-*.png``).

It starts the fake OpenAI-compatible server and ``research-agent serve`` on 127.0.0.1 over a local
corpus (the tests' prose notes, or ``--corpus DIR --question Q``) with a memory to show (the tests'
seeded critiques and a proposal), asks the question in Chromium through Playwright, watches the
run end, and photographs: the form, the finished run, the reports list, the report with one
citation's preview open (hovered), a report's deletion asked, the memory page, the approval's
confirmation, a batch of three questions started from the form and followed to its end, the batches
list, and the settings page with doctor's checks run.

    python -m bench.screenshot_web [--corpus DIR --question Q] [--out docs/images] [--width 1280]

Nothing leaves 127.0.0.1; Chromium is Debian's, launched with the export's flags.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

from playwright.sync_api import Page, sync_playwright

from research_agent.export import find_browser
from tests.support.chromium import playwright_flags
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.prose_corpus import PROSE_QUESTION, write_prose_corpus
from tests.support.research_responder import ResearchResponder
from tests.support.web import ServedWorkbench, seed_memory

WAIT_MS = 120_000
BATCH = (
    "What happens when an asyncio task is cancelled while it awaits a future?",
    "Why should blocking calls run in an executor thread under asyncio?",
    "How do asyncio task groups stop their other members once one fails?",
)


def photograph(page: Page, url: str, corpus: Path, question: str, out: Path) -> None:
    def shot(name: str, *, full: bool = False) -> None:
        page.screenshot(path=str(out / f"web-{name}.png"), full_page=full)
        print(out / f"web-{name}.png")

    page.set_default_timeout(WAIT_MS)
    page.goto(url + "/")
    page.get_by_label("Question").fill(question)
    page.get_by_label(str(corpus)).check()
    shot("ask")
    page.get_by_role("button", name="Research").click()
    page.locator("#report-link").wait_for()
    shot("run")
    page.goto(url + "/reports")
    shot("reports")
    page.goto(url + "/reports/latest")
    citations = page.locator("main .cites a[aria-describedby]")
    citations.nth(min(4, citations.count() - 1)).hover()
    shot("report")
    page.goto(url + "/reports/latest")
    page.get_by_role("link", name="Delete…").click()
    shot("delete")
    page.goto(url + "/memory")
    shot("memory", full=True)
    page.get_by_role("button", name="Approve…").click()
    shot("approve")
    page.goto(url + "/batches")
    page.get_by_label("Questions, one a line").fill("\n".join(BATCH))
    shot("batches-form", full=True)
    page.get_by_role("button", name="Start the batch").click()
    page.locator("#outcome", has_text="finished").wait_for()
    shot("batch", full=True)
    page.goto(url + "/batches")
    shot("batches")
    page.goto(url + "/settings")
    page.get_by_label("Do not ask the scholarly search providers a test query").check()
    page.get_by_role("button", name="Run the checks").click()
    page.locator("#doctor-verdict").wait_for()
    shot("settings", full=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, help="the folder to research (default: the tests' prose notes)")
    parser.add_argument("--question", default=PROSE_QUESTION)
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "docs" / "images")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=860)
    args = parser.parse_args()
    chromium = find_browser()
    flags = playwright_flags(chromium)
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ra-web-shots-") as folder:
        root = Path(folder)
        corpus = root / "corpus"
        if args.corpus is not None:
            shutil.copytree(args.corpus, corpus)
        else:
            write_prose_corpus(corpus)
        seed_memory(root / "reports" / "meta")
        with FakeOpenAIServer(ResearchResponder(), token_delay=0.002) as model, \
                ServedWorkbench(root, "--allow-dir", str(corpus), "--reports-dir", str(root / "reports"),
                                "--no-critique", "--context", "none", base_url=model.base_url) as served, \
                sync_playwright() as driver:  # fmt: skip
            browser = driver.chromium.launch(executable_path=str(chromium), args=flags)
            page = browser.new_page(viewport={"width": args.width, "height": args.height})
            photograph(page, served.url, corpus, args.question, args.out)
            browser.close()


if __name__ == "__main__":
    main()
