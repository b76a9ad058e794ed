"""The workbench in a real browser (issue 35 point 7, issue 44 points 4-5): Playwright drives Debian's
Chromium (through ``executable_path``: no browser is downloaded) against ``research-agent serve`` in a
subprocess and a scripted model server on 127.0.0.1. Ask, watch the progress reach the end, read the
report with its previews on hover and on keyboard focus, cancel a second run, approve a proposal on a
390 px screen and go Back; a hostile title stays inert. A batch of pasted questions is followed live,
cancelled and resumed; a run's page says when its connection is lost, reattaches, and says when the
server is gone. A screenshot of each page goes to ``tests/artifacts/`` (git-ignored).

Skipped only when ``CI`` is unset and no Chromium is installed, as the export's browser tests are.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("playwright", reason="the browser tests need pytest-playwright (the test extra installs it)")

from playwright.sync_api import Browser, BrowserType, Page, Playwright, Route, expect, sync_playwright  # noqa: E402

from research_agent.memory.store.person.lessons import read_lessons_file  # noqa: E402
from tests.support.batch import QUESTIONS  # noqa: E402
from tests.support.chromium import chromium_or_skip, playwright_flags  # noqa: E402
from tests.support.fake_openai_server import FakeOpenAIServer  # noqa: E402
from tests.support.mcp import HoldingResponder  # noqa: E402
from tests.support.pipeline import write_docs  # noqa: E402
from tests.support.research_responder import ResearchResponder  # noqa: E402
from tests.support.web import HANG_GUARD, IDEA, ServedWorkbench, artifacts_dir, seed_memory  # noqa: E402

HOSTILE_TITLE = "<img src=x onerror=\"document.title='owned'\"> <script>document.title='owned'</script> Freeze notes"
FACT = "The freeze map lets VACUUM skip pages whose tuples are all frozen, so anti-wraparound scans stay cheap."
QUESTION = "How does PostgreSQL VACUUM reclaim space from dead tuples?"
RUN_PAGE = r"/runs/[a-z0-9][a-z0-9-]*_[0-9]{8}T[0-9]{12}Z"  # a run's page is named by its run id
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
        any run rebuilds from the critiques when it reads its lessons) is not among them, nor the run
        journal (every run's entry from its start, and its checkpoints: see test_web_journal)."""
        reports = self.root / "reports"
        return {
            p.relative_to(reports).as_posix()
            for p in reports.rglob("*")
            if p.is_file() and not p.name.startswith(("index.sqlite", "journal-")) and "checkpoints" not in p.parts
        }


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("workbench")
    corpus = write_docs(root / "corpus")
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
    expect(page).to_have_url(re.compile(RUN_PAGE + "$"))
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


def test_cancel_a_second_run_and_no_report_of_it_is_written(served: Served, page: Page, watched: list[str]) -> None:
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
    assert served.files() == before, "a cancelled run writes no report, no record"


def test_approve_a_proposal_on_a_phone_sized_screen_and_go_back(served: Served, page: Page, watched: list[str]) -> None:
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(served.url + "/memory")
    expect(page.get_by_text(IDEA).first).to_be_visible()
    approve = page.get_by_role("button", name="Approve…")
    approve.scroll_into_view_if_needed()
    box = approve.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, box  # on the screen
    assert page.evaluate("document.documentElement.scrollWidth") <= 390, "nothing wider than the screen"
    shot(page, "memory-390")
    approve.click()
    expect(page.get_by_role("heading", name="Approve this proposal?")).to_be_visible()
    expect(page.locator("#carried")).to_have_text(IDEA)
    assert not read_lessons_file(served.root / "reports" / "meta", served.root / "state").exists
    shot(page, "approve")
    page.get_by_role("button", name="Approve", exact=True).click()
    expect(page).to_have_url(re.compile(r"/memory\?approved=approved%3A"))  # redirected after the POST
    expect(page.get_by_role("heading", name="Approved")).to_be_visible()
    (lesson,) = read_lessons_file(served.root / "reports" / "meta", served.root / "state").usable
    assert lesson.text == IDEA and lesson.key.startswith("approved:")
    page.go_back()  # the confirmation again (a GET), never the form sent a second time
    expect(page).to_have_url(re.compile(r"/memory/proposals/[0-9a-f]{10}/approve\?"))
    expect(page.get_by_role("alert")).to_contain_text("no undecided proposal")
    page.go_back()
    expect(page).to_have_url(served.url + "/memory")
    page.goto(served.url + "/memory")
    expect(page.get_by_text("No undecided proposal.")).to_be_visible()
    assert len(read_lessons_file(served.root / "reports" / "meta", served.root / "state").usable) == 1


def test_a_refused_lesson_keeps_what_was_typed(served: Served, page: Page, watched: list[str]) -> None:
    page.goto(served.url + "/memory")
    page.get_by_text("Add a lesson of your own").click()
    typed = "First line of a lesson\nand a second line, which one line cannot hold"
    page.get_by_label("Text (one line, at most 300 characters)").fill(typed)
    page.get_by_role("button", name="Add…").click()
    expect(page.locator("#refused-add")).to_be_visible()
    expect(page.get_by_label("Text (one line, at most 300 characters)")).to_have_value(typed)


class QuestionGate:
    """Answers as ``inner``, but the writer's call for a question in :attr:`held` waits until the
    question is let through; :attr:`arrived` tells which held questions reached their draft."""

    def __init__(self, inner: ResearchResponder) -> None:
        self.inner = inner
        self.held: dict[str, threading.Event] = {}
        self.arrived: dict[str, threading.Event] = {}

    def hold(self, question: str) -> None:
        self.held[question] = threading.Event()
        self.arrived[question] = threading.Event()

    def let_through(self, question: str) -> None:
        self.held[question].set()

    def open_all(self) -> None:
        for gate in self.held.values():
            gate.set()

    def __call__(self, body: dict, stage: str) -> str:
        if stage == "draft":
            text = json.dumps(body)
            for question, gate in self.held.items():
                if question in text:
                    self.arrived[question].set()
                    gate.wait(HANG_GUARD)
        return self.inner(body, stage)


@contextmanager
def own_workbench(root: Path, responder: Callable[[dict, str], str]) -> Iterator[ServedWorkbench]:
    """A workbench of the test's own (it is stopped, or killed, by the test) over one allowed folder."""
    corpus = write_docs(root / "corpus")
    with FakeOpenAIServer(responder) as model, ServedWorkbench(
        root, "--allow-dir", str(corpus), "--reports-dir", str(root / "reports"), "--no-critique", "--context",
        "none", "--max-runs", "1", base_url=model.base_url,
    ) as workbench:  # fmt: skip
        yield workbench


def test_a_batch_is_followed_live_cancelled_and_resumed(tmp_path: Path, page: Page, watched: list[str]) -> None:
    first, second = QUESTIONS[0], QUESTIONS[1]
    gate = QuestionGate(ResearchResponder())
    gate.hold(first)
    try:
        with own_workbench(tmp_path, gate) as workbench:
            page.goto(workbench.url + "/batches")
            page.get_by_label("Questions, one a line").fill(f"{first}\n{second}\n")
            page.get_by_role("button", name="Start the batch").click()
            expect(page).to_have_url(re.compile(r"/batches/batch-[0-9]{8}T[0-9]{12}Z$"))
            expect(page.locator("#q-1 [data-cell='stage']")).to_contain_text("draft")  # held in its draft
            expect(page.locator("#outcome")).to_have_text("running")
            shot(page, "batch-running")
            page.get_by_role("button", name="Cancel").click()
            expect(page.locator("#outcome")).to_have_text("stopped")
            expect(page.locator("#q-1 [data-cell='state']")).to_have_text("pending")
            gate.let_through(first)  # the cancelled call may go: nobody waits for it now
            gate.hold(second)
            page.get_by_role("button", name="Resume").click()
            # followed live: the first question ends done while the second waits in its draft
            expect(page.locator("#q-1 [data-cell='state']")).to_have_text("done")
            expect(page.locator("#q-1 [data-cell='report'] a")).to_have_text("report")
            expect(page.locator("[data-count='done']")).to_have_text("1")
            expect(page.locator("#q-2 [data-cell='stage']")).to_contain_text("draft")
            assert gate.arrived[second].wait(HANG_GUARD)
            expect(page.locator("#outcome")).to_have_text("running")
            shot(page, "batch-live")
            gate.let_through(second)
            expect(page.locator("#outcome")).to_have_text("finished")
            expect(page.locator("[data-cell='report'] a")).to_have_count(2)
            expect(page.get_by_role("button", name="Resume")).to_have_count(0)
            page.goto(workbench.url + "/batches")
            expect(page.locator("table.batches .status-finished")).to_have_count(1)
        reports = sorted(p.name for p in (tmp_path / "reports").glob("*.md") if not p.name.startswith("batch-"))
        assert len(reports) == 2, "one report a question: the cancelled attempt wrote nothing"
    finally:
        gate.open_all()


def test_a_run_page_says_its_connection_is_lost_reattaches_and_says_when_the_server_is_gone(
    tmp_path: Path, page: Page, watched: list[str]
) -> None:
    responder = HoldingResponder(ResearchResponder(), stage="draft")
    broken: list[str] = []
    asked: list[Route] = []

    def events(route: Route) -> None:
        if not broken:  # the first stream opens, then breaks at once
            broken.append(route.request.url)
            route.fulfill(status=200, headers={"content-type": "text/event-stream"}, body=": hello\n\n")
        else:
            route.continue_()

    def probes(route: Route) -> None:
        if route.request.resource_type == "fetch" and not asked:
            asked.append(route)  # the page asks whether the server is there: held until the test looks
        else:
            route.continue_()

    try:
        with own_workbench(tmp_path, responder) as workbench:
            page.route(re.compile(RUN_PAGE + "/events$"), events)
            page.route(re.compile(RUN_PAGE + "$"), probes)
            page.goto(workbench.url + "/")
            page.get_by_label("Question").fill(QUESTION)
            page.get_by_role("button", name="Research").click()
            expect(page.locator("#connection")).to_have_text("Connection lost: reattaching…")
            expect(page.locator("#outcome")).to_have_text("connection lost")
            expect(page.get_by_role("button", name="Cancel")).to_be_disabled()
            shot(page, "connection-lost")
            assert len(asked) == 1
            asked[0].continue_()  # the server answers: the page reattaches and the run's story is replayed
            expect(page.locator("#connection")).to_be_hidden()
            expect(page.locator("#outcome")).to_have_text("running")
            expect(page.get_by_role("button", name="Cancel")).to_be_enabled()
            expect(page.locator("#timeline")).to_contain_text("decompose")
            workbench.kill()
            expect(page.locator("#connection")).to_contain_text("the server is gone")
            expect(page.locator("#outcome")).to_have_text("server gone")
            expect(page.get_by_role("button", name="Cancel")).to_be_disabled()
            shot(page, "server-gone")
    finally:
        responder.release.set()


def test_a_run_cut_by_a_crash_shows_interrupted_after_the_restart_and_resumes_to_its_report(
    tmp_path: Path, page: Page, watched: list[str]
) -> None:
    held = HoldingResponder(ResearchResponder(), stage="draft")
    try:
        with own_workbench(tmp_path, held) as workbench:
            page.goto(workbench.url + "/")
            page.get_by_label("Question").fill(QUESTION)
            page.get_by_role("button", name="Research").click()
            expect(page).to_have_url(re.compile(RUN_PAGE + "$"))
            where = page.url.removeprefix(workbench.url)
            arrived = threading.Thread(target=held.wait_arrivals, args=(1,))
            arrived.start()
            arrived.join(HANG_GUARD)
            assert not arrived.is_alive(), "the run never reached its draft"
            workbench.kill()  # a crash: nobody writes how the run ended
    finally:
        held.release.set()
    (tmp_path / "corpus").rename(tmp_path / "corpus-before")  # own_workbench makes its folder anew
    with own_workbench(tmp_path, ResearchResponder()) as workbench:
        page.goto(workbench.url + "/runs")
        row = page.get_by_role("row").filter(has_text=QUESTION)
        expect(row).to_contain_text("interrupted")
        shot(page, "runs")
        row.get_by_role("link").click()
        expect(page).to_have_url(workbench.url + where)
        expect(page.locator("#outcome")).to_have_text("interrupted")
        shot(page, "run-interrupted")
        page.get_by_role("button", name="Resume").click()
        expect(page).to_have_url(workbench.url + where)
        expect(page.locator("#report-link")).to_be_visible(timeout=TIMEOUT_MS)
        expect(page.locator("#outcome")).to_have_text("done")
        page.get_by_role("link", name="Open the report").click()
        expect(page.get_by_role("heading", name="Sources", exact=True)).to_be_visible()
