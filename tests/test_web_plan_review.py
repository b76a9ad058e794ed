"""The workbench's plan review in a real browser (issue 44, points 3 and 5): Playwright drives Debian's
Chromium (``executable_path``: nothing downloaded) against ``research-agent serve`` in a subprocess and
a model server on 127.0.0.1. "Review the plan first" pauses the run after its plan; the run's page
(opened while the planner still thinks) shows the sub-queries when the pause comes; a refused edit is
said above the person's own text; Continue searches the edit, and the run record says a person gave
the plan; Cancel at the review writes nothing. The form's CSRF and loopback checks, over HTTP.

Skipped only when ``CI`` is unset and no Chromium is installed, as the other browser tests are.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml

pytest.importorskip("playwright", reason="the browser tests need pytest-playwright (the test extra installs it)")

from playwright.sync_api import Page, expect  # noqa: E402

from tests.support.fake_openai_server import FakeOpenAIServer  # noqa: E402
from tests.support.mcp import HoldingResponder  # noqa: E402
from tests.support.pipeline import QUERY, write_docs  # noqa: E402
from tests.support.research_responder import ResearchResponder  # noqa: E402
from tests.support.web import HANG_GUARD, ServedWorkbench, artifacts_dir  # noqa: E402

# The browser fixtures of the workbench's other browser tests (Debian's Chromium, Playwright for this
# module only): imported, so that pytest uses them here too.
from tests.test_web_browser import (  # noqa: E402, F401
    RUN_PAGE,
    browser,
    browser_context_args,
    browser_type,
    browser_type_launch_args,
    launch_browser,
    playwright,
)

TIMEOUT_MS = HANG_GUARD * 1000
MINE = ["postgresql vacuum dead tuples", "autovacuum daemon thresholds"]


class Served:
    def __init__(self, root: Path, responder: HoldingResponder, model: FakeOpenAIServer, url: str) -> None:
        self.root, self.responder, self.model, self.url = root, responder, model, url

    def records(self) -> list[dict]:
        return [yaml.safe_load(p.read_text()) for p in sorted((self.root / "reports" / "meta").glob("run-*.yaml"))]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("plan-review")
    corpus = write_docs(root / "corpus")
    responder = HoldingResponder(ResearchResponder(), stage="decompose")
    with FakeOpenAIServer(responder) as model:
        try:
            with ServedWorkbench(root, "--allow-dir", str(corpus), "--reports-dir", str(root / "reports"),
                                 "--no-critique", "--context", "none", base_url=model.base_url) as workbench:  # fmt: skip
                yield Served(root, responder, model, workbench.url)
        finally:
            responder.release.set()
    assert "Traceback" not in workbench.stderr, workbench.stderr


def _ask_with_review(page: Page, served: Served, question: str) -> None:
    page.goto(served.url + "/")
    page.get_by_label("Question").fill(question)
    expect(page.get_by_label(str(served.root / "corpus"))).to_be_checked()  # the only allowed folder
    page.get_by_label("Review the plan first").check()
    page.get_by_role("button", name="Research").click()
    expect(page).to_have_url(re.compile(RUN_PAGE + "$"))  # the run's own page, by its id


def _shot(page: Page, name: str) -> None:
    with artifacts_dir() as folder:
        page.screenshot(path=str(folder / f"web-{name}.png"), full_page=True)


def test_the_run_pauses_for_its_plan_and_searches_the_person_s_edit(served: Served, page: Page) -> None:
    page.set_default_timeout(TIMEOUT_MS)
    _ask_with_review(page, served, QUERY)
    arrived = threading.Thread(target=served.responder.wait_arrivals, args=(1,))
    arrived.start()
    arrived.join(HANG_GUARD)
    assert not arrived.is_alive(), "the planner was never asked"
    expect(page.locator("#outcome")).to_have_text("running")
    expect(page.locator("#plan-review")).to_have_count(0)  # the planner has not answered yet
    served.responder.release.set()  # it answers: the page hears the pause and shows the plan
    box = page.get_by_label("Sub-queries, one a line (at most 12)")
    expect(box).to_be_visible()
    planned = box.input_value().split("\n")
    assert [line for line in planned if line] and all(len(line) > 3 for line in planned if line)
    _shot(page, "plan-review")

    box.fill(f"{MINE[0]}\nmaxItems: 5\n")
    page.get_by_role("button", name="Continue").click()
    expect(page.locator("#plan-problem")).to_contain_text("sub-query 2 ('maxItems: 5') is no search query")
    assert box.input_value() == f"{MINE[0]}\nmaxItems: 5\n", "the person's own text is kept"
    box.fill("\n".join(MINE))
    page.get_by_role("button", name="Continue").click()
    expect(page.locator("#report-link")).to_be_visible(timeout=TIMEOUT_MS)
    expect(page.locator("#plan-edited")).to_be_visible()
    assert "plan review" in page.locator("#timeline").inner_text()
    (record,) = served.records()
    assert record["plan_by_person"] is True and record["sub_queries"] == MINE
    assert [r.stage for r in served.model.requests].count("decompose") == 1


def test_cancel_at_the_review_writes_nothing(served: Served, page: Page) -> None:
    page.set_default_timeout(TIMEOUT_MS)
    before = len(served.records())
    _ask_with_review(page, served, "How does VACUUM freeze old tuples?")
    expect(page.locator("#plan-review")).to_be_visible()
    page.locator("#plan-cancel").click()
    expect(page.locator("#outcome")).to_have_text("cancelled")
    expect(page.locator("#plan-review")).to_have_count(0)
    assert len(served.records()) == before and not list((served.root / "reports").glob("how-does-vacuum-freeze*"))


def test_the_plan_form_needs_the_csrf_token(served: Served) -> None:
    with httpx.Client(base_url=served.url) as client:
        refused = client.post("/runs/0123456789abcdef/plan", data={"sub_queries": "postgres vacuum"})
    assert refused.status_code == 403 and "CSRF" in refused.text
