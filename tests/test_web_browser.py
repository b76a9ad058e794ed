"""The workbench in a real browser (issue 35 point 7): Playwright drives Debian's Chromium (through
``executable_path``: no browser is downloaded) against ``research-agent serve`` in a subprocess and a
scripted model server on 127.0.0.1. Ask, watch the progress reach the end, read the report with its
previews on hover and on keyboard focus, cancel a second run, approve a proposal; a hostile title
stays inert. A screenshot of each page goes to ``tests/artifacts/`` (git-ignored).

Skipped only when ``CI`` is unset and no Chromium is installed, as the export's browser tests are.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("playwright", reason="the browser tests need pytest-playwright (the test extra installs it)")

from playwright.sync_api import Browser, BrowserType, Page, Playwright, expect, sync_playwright  # noqa: E402

from research_agent.memory.store.person.lessons import read_lessons_file  # noqa: E402
from tests.support.chromium import chromium_or_skip, playwright_flags  # noqa: E402
from tests.support.fake_openai_server import FakeOpenAIServer  # noqa: E402
from tests.support.mcp import HoldingResponder  # noqa: E402
from tests.support.pipeline import DOCS  # noqa: E402
from tests.support.research_responder import ResearchResponder  # noqa: E402
from tests.support.web import HANG_GUARD, IDEA, ServedWorkbench, artifacts_dir, seed_memory  # noqa: E402

HOSTILE_TITLE = "<img src=x onerror=\"document.title='owned'\"> <script>document.title='owned'</script> Freeze notes"
FACT = "The freeze map lets VACUUM skip pages whose tuples are all frozen, so anti-wraparound scans stay cheap."
QUESTION = "How does PostgreSQL VACUUM reclaim space from dead tuples?"
TIMEOUT_MS = HANG_GUARD * 1000


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    """Debian's Chromium with the export's own launch flags (off the network, no sandbox as root)."""
    chromium = chromium_or_skip()
    return {**browser_type_launch_args, "executable_path": str(chromium), "args": playwright_flags(chromium)}


# Playwright for this module only (pytest-playwright keeps it for the session): its sync API runs an
# event loop in the main thread, which must be gone before the async tests of later modules run.
@pytest.fixture(scope="module")
def playwright() -> Iterator[Playwright]:
    driver = sync_playwright().start()
    yield driver
    driver.stop()


@pytest.fixture(scope="module")
def browser_type(playwright: Playwright, browser_name: str) -> BrowserType:
    return getattr(playwright, browser_name)


@pytest.fixture(scope="module")
def launch_browser(browser_type_launch_args: dict[str, Any], browser_type: BrowserType) -> Callable[..., Browser]:
    return lambda **more: browser_type.launch(**{**browser_type_launch_args, **more})


@pytest.fixture(scope="module")
def browser_context_args() -> dict[str, Any]:
    return {"viewport": {"width": 1280, "height": 900}}


@pytest.fixture(scope="module")
def browser(launch_browser: Callable[..., Browser]) -> Iterator[Browser]:
    opened = launch_browser()
    yield opened
    opened.close()


class Served:
    """The scripted model, the workbench, and what the tests share."""

    def __init__(self, root: Path, responder: HoldingResponder, workbench: ServedWorkbench) -> None:
        self.root = root
        self.responder = responder
        self.workbench = workbench
        self.url = workbench.url

    def files(self) -> set[str]:
        """What runs have written under reports/: the memory's index (``meta/index.sqlite``, a cache
        any run rebuilds from the critiques when it reads its lessons) is not among them."""
        reports = self.root / "reports"
        return {
            p.relative_to(reports).as_posix()
            for p in reports.rglob("*")
            if p.is_file() and not p.name.startswith("index.sqlite")
        }


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("workbench")
    corpus = root / "corpus"
    corpus.mkdir()
    for name, (title, text) in DOCS.items():
        (corpus / name).write_text(f"# {title}\n\n{text}\n", encoding="utf-8")
    (corpus / "hostile.md").write_text(f"# {HOSTILE_TITLE}\n\nPostgreSQL VACUUM notes. {FACT}\n", encoding="utf-8")
    seed_memory(root / "reports" / "meta")
    responder = HoldingResponder(ResearchResponder(), stage="(none held yet)")
    with FakeOpenAIServer(responder) as model:
        try:
            with ServedWorkbench(root, "--allow-dir", str(corpus), "--reports-dir", str(root / "reports"),
                                 "--no-critique", "--context", "none", base_url=model.base_url) as workbench:  # fmt: skip
                yield Served(root, responder, workbench)
        finally:
            responder.release.set()
    assert "Traceback" not in workbench.stderr, workbench.stderr


@pytest.fixture
def watched(page: Page) -> Iterator[list[str]]:
    """What the page said on its console and in dialogs (a script that ran would show here)."""
    said: list[str] = []
    page.on("console", lambda message: said.append(f"console: {message.text}"))
    page.on("dialog", lambda dialog: (said.append(f"dialog: {dialog.message}"), dialog.dismiss()))
    page.set_default_timeout(TIMEOUT_MS)
    yield said
    assert not [line for line in said if "Content Security Policy" in line or "dialog" in line], said


def shot(page: Page, name: str) -> None:
    with artifacts_dir() as folder:
        page.screenshot(path=str(folder / f"web-{name}.png"), full_page=True)


def test_ask_watch_the_run_end_and_read_its_report_with_previews_on_hover_and_focus(
    served: Served, page: Page, watched: list[str]
) -> None:
    page.goto(served.url + "/")
    page.get_by_label("Question").fill(QUESTION)
    page.get_by_label(str(served.root / "corpus")).check()
    shot(page, "ask")
    page.get_by_role("button", name="Research").click()
    expect(page).to_have_url(re.compile(r"/runs/[0-9a-f]{16}$"))
    expect(page.locator("#report-link")).to_be_visible(timeout=TIMEOUT_MS)  # the page followed the run to its end
    expect(page.locator("#outcome")).to_have_text("done")
    assert page.locator("#place").evaluate("p => p.value === p.max")
    timeline = page.locator("#timeline").inner_text()
    for stage in ("decompose", "relevance", "draft", "skeptic", "write", "done"):
        assert stage in timeline, stage
    assert page.locator("[data-count='claims_checked']").inner_text() not in ("", "–")
    shot(page, "run")

    page.get_by_role("link", name="Open the report").click()
    citation = page.locator(".cites a[aria-describedby]").first
    tip = page.locator("#" + citation.get_attribute("aria-describedby"))
    page.mouse.move(0, 0)
    expect(tip).to_be_hidden()
    citation.hover()
    expect(tip).to_be_visible()
    assert len(tip.inner_text().split()) > 5, "the cited passage"
    shot(page, "report")
    page.mouse.move(0, 0)
    expect(tip).to_be_hidden()
    for _ in range(200):  # the keyboard alone reaches a citation
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.matches('.cites a[aria-describedby]')"):
            break
    focused = page.evaluate("document.activeElement.getAttribute('aria-describedby')")
    expect(page.locator(f"#{focused}")).to_be_visible()

    assert page.title() != "owned" and "owned" not in page.title()
    assert page.locator("img").count() == 0 and page.locator("script").count() == 0
    assert HOSTILE_TITLE.split(" <script>")[0] in page.locator(".run-details").inner_text()  # shown as text

    page.goto(served.url + "/reports")
    expect(page.get_by_role("link", name=QUESTION)).to_be_visible()
    shot(page, "reports")


def test_cancel_a_second_run_and_nothing_of_it_is_written(served: Served, page: Page, watched: list[str]) -> None:
    before = served.files()
    served.responder.stage = "draft"  # the next draft waits for the test
    page.goto(served.url + "/")
    page.get_by_label("Question").fill("How does VACUUM freeze old tuples?")
    page.get_by_label(str(served.root / "corpus")).check()
    page.get_by_role("button", name="Research").click()
    arrived = threading.Thread(target=served.responder.wait_arrivals, args=(1,))
    arrived.start()
    arrived.join(HANG_GUARD)
    assert not arrived.is_alive(), "the run never reached its draft"
    expect(page.locator("#outcome")).to_have_text("running")
    page.get_by_role("button", name="Cancel").click()
    expect(page.locator("#outcome")).to_have_text("cancelled")
    expect(page.get_by_role("button", name="Cancel")).to_have_count(0)
    shot(page, "cancelled")
    served.responder.stage = "(none held)"
    served.responder.release.set()
    assert served.files() == before, "a cancelled run writes nothing"


def test_approve_a_proposal_after_seeing_the_text_prompts_will_carry(
    served: Served, page: Page, watched: list[str]
) -> None:
    page.goto(served.url + "/memory")
    expect(page.get_by_text(IDEA).first).to_be_visible()
    shot(page, "memory")
    page.get_by_role("button", name="Approve…").click()
    expect(page.get_by_role("heading", name="Approve this proposal?")).to_be_visible()
    expect(page.locator("#carried")).to_have_text(IDEA)
    assert not read_lessons_file(served.root / "reports" / "meta", served.root / "state").exists
    shot(page, "approve")
    page.get_by_role("button", name="Approve", exact=True).click()
    expect(page.get_by_role("heading", name="Approved")).to_be_visible()
    (lesson,) = read_lessons_file(served.root / "reports" / "meta", served.root / "state").usable
    assert lesson.text == IDEA and lesson.key.startswith("approved:")
    page.goto(served.url + "/memory")
    expect(page.get_by_text("No undecided proposal.")).to_be_visible()
