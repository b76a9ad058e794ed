"""The export in a real browser: headless Chromium loads the page and prints the PDF.

Three Chromium launches in all (each takes seconds on two cores). Skipped only when ``CI``
is unset and no Chromium is installed; under CI a missing browser fails (``.ci/run``
installs Debian's chromium).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pypdf import PdfReader

from research_agent.export.browser import dump_dom
from tests.support.chromium import chromium_or_skip
from tests.support.cli import cli
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.html_dom import parse_dom
from tests.support.pipeline import QUERY, write_docs
from tests.support.research_responder import ResearchResponder

HOSTILE_TITLE = (
    "<img src=x onerror=\"document.title='owned'\"> <script>document.title='owned'</script> "
    "[click me](javascript:document.title='owned') Freeze notes"
)
FILLER = " ".join(
    f"Background note {word} describes routine PostgreSQL table maintenance in general terms."
    for word in ("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda",
                 "mu", "nu", "xi")
)  # fmt: skip
FACT = (
    "The freeze map lets VACUUM skip pages whose tuples are all frozen, so anti-wraparound scans stay cheap."
)


@pytest.fixture(scope="module")
def browser() -> Path:
    return chromium_or_skip()


def _corpus(folder: Path) -> Path:
    write_docs(folder)
    (folder / "hostile.md").write_text(f"# {HOSTILE_TITLE}\n\n{FILLER}\n\n{FACT}\n", encoding="utf-8")
    return folder


def _run(tmp_path: Path, *args: str) -> list[Path]:
    corpus = _corpus(tmp_path / "corpus")
    with FakeOpenAIServer(ResearchResponder()) as server:
        done = cli(tmp_path, "run", QUERY, "--corpus", str(corpus), "--reports-dir", str(tmp_path / "reports"),
                   "--no-critique", *args, base_url=server.base_url)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return [Path(line) for line in done.stdout.splitlines()]


def test_the_page_loads_in_chromium_with_every_citation_resolving_and_the_hostile_title_inert(
    tmp_path: Path, browser: Path
) -> None:
    report, page = _run(tmp_path, "--format", "html")
    stored = json.loads(next((report.parent / "meta").glob("passages-*.json")).read_text(encoding="utf-8"))
    hostile = next(s for s in stored["sources"] if s["location"].endswith("hostile.md"))
    before = hostile["text"].split(FACT.split()[0] + " freeze map")[0]
    assert len(before.split()) > 120, "the cited text lies past the opening 120 words"

    dom = parse_dom(dump_dom(browser, page))  # the DOM after loading, scripts (if any) run

    expected_title = parse_dom(page.read_text(encoding="utf-8")).title
    assert dom.title == expected_title and "owned" not in dom.title  # no script changed document.title
    assert dom.tags().isdisjoint({"script", "img", "iframe", "object", "embed"})  # nothing made from a title
    assert not [a for _, a in dom.elements if any(name.startswith("on") for name in a)]
    assert not [h for h in dom.hrefs() if not h.startswith(("#", "http://", "https://", "file://"))]
    assert "<img src=x onerror=\"document.title='owned'\">" in dom.text  # shown as text, not made an element
    cites = [a for tag, a in dom.elements if tag == "a" and a.get("href", "").startswith("#src-")]
    assert cites and all(a["href"][1:] in dom.ids() for a in cites)  # every citation resolves
    n = next(
        int(i[4:]) for i, text in dom.text_by_id.items() if i.startswith("src-") and "hostile.md" in text
    )
    tips = [dom.text_by_id[a["aria-describedby"]] for a in cites if a["href"] == f"#src-{n}"]
    assert tips and any(FACT.rstrip(".") in tip for tip in tips)  # the preview is the cited passage
    fact_tip = next(tip for tip in tips if FACT.rstrip(".") in tip)
    assert len(fact_tip.split()) <= 120 + len(dom.text_by_id[f"src-{n}"].split())
    assert fact_tip.startswith(f"[{n}] ") and "Freeze notes" in fact_tip  # the source's title, as text


def test_run_and_export_print_pdf_through_chromium(tmp_path: Path, browser: Path) -> None:
    report, pdf = _run(tmp_path, "--format", "pdf", "--browser", str(browser))
    assert pdf == report.with_suffix(".pdf")
    exported = cli(
        tmp_path, "export", str(report), "--format", "pdf", "--output", str(tmp_path / "again.pdf")
    )
    assert exported.returncode == 0, exported.stderr
    for path in (pdf, tmp_path / "again.pdf"):
        data = path.read_bytes()
        assert data.startswith(b"%PDF")
        pages = PdfReader(path).pages
        assert len(pages) >= 1 and "Executive Summary" in pages[0].extract_text()
