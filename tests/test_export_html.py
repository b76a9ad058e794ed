"""The HTML export without a browser: links that resolve, previews of the cited passage, outside
text inert, the header, and what ``export`` and ``run --format`` do with their arguments."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from research_agent.errors import InputError
from research_agent.export import export_report, find_report, render_page
from research_agent.ids import make_run_id
from research_agent.mcp_server.resources import report_html_text
from research_agent.memory.lessons.select import LessonSelection
from research_agent.pipeline import research
from research_agent.record.passages import build_passage_store, passages_path
from research_agent.run_refs import UnknownRun
from tests.support.cli import cli
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.html_dom import parse_dom
from tests.support.pipeline import QUERY, DocsProvider, script, settings_for
from tests.support.research_responder import ResearchResponder

ALLOWED_HREF = re.compile(r"^(?:https?://|file://|#)")


async def _report(tmp_path: Path, scripted_model) -> Path:
    script(scripted_model, ResearchResponder())
    result = await research(QUERY, settings=settings_for(tmp_path), model=scripted_model,
                            providers=[DocsProvider(tmp_path)], lessons=LessonSelection.none)  # fmt: skip
    return result.report_path


async def test_every_citation_links_to_its_source_entry_and_previews_its_passage(
    tmp_path: Path, scripted_model
) -> None:
    report = await _report(tmp_path, scripted_model)
    exported = export_report(report, fmt="html", reports_dir=report.parent)
    assert exported.path == report.with_suffix(".html") and exported.note == ""
    dom = parse_dom(exported.path.read_text(encoding="utf-8"))
    cites = [attrs for tag, attrs in dom.elements if tag == "a" and attrs.get("href", "").startswith("#src-")]
    assert cites and len(cites) == exported.citations == exported.previews
    for attrs in cites:
        assert attrs["href"][1:] in dom.ids(), attrs  # every citation resolves to a source entry
        name = dom.text_by_id[attrs["aria-labelledby"]]  # named by its source, as text
        assert name.startswith(f"Source {attrs['href'][5:]}: ")
        tip = dom.text_by_id[attrs["aria-describedby"]]  # the preview is the link's description
        assert len(tip.split()) <= 120 + 12  # the passage, after the source's title
    entries = [
        attrs["id"] for tag, attrs in dom.elements if tag == "li" and attrs.get("id", "").startswith("src-")
    ]
    assert entries and all(f"#{entry}" in {a["href"] for a in cites} for entry in entries)
    files = [href for href in dom.hrefs() if href.startswith("file://")]
    assert len(files) == len(entries)  # each entry links to its file
    assert all(ALLOWED_HREF.match(href) for href in dom.hrefs())
    assert dom.tags().isdisjoint({"script", "img", "iframe", "link", "object", "embed"})
    reusable = next(
        t for i, t in dom.text_by_id.items() if i.startswith("tip-") and "Plain VACUUM marks" in t
    )
    assert "reusable" in reusable


HOSTILE_REPORT = """---
id: {run_id}
query: "<script>document.title='owned'</script> heat"
mode: standard
date: '2026-01-01'
model: m
gate_decision: full_report
review: rejected
---

# A <b>bold</b> claim <img src=x onerror=alert(1)>

## Findings

Raw <script>alert(1)</script> and <img src=x onerror=alert(2)> stay text [1].
A [javascript link](javascript:alert(3)), a [data link](data:text/html,<b>x</b>), a [mail](mailto:a@b.c),
an image ![pic](https://evil.example/x.png) and a [fine link](https://example.org/a?b="c") [2].
An escaped \\[1\\] is no citation, and [7] cites no source.

## Sources

1. Title with <iframe src=x></iframe> \u2014 <https://example.org/one>
2. Second \u2014 /tmp/some folder/note.md
"""


def test_outside_text_is_inert_and_only_http_and_file_links_are_made(tmp_path: Path) -> None:
    run_id = make_run_id("hostile", None)
    markdown = HOSTILE_REPORT.format(run_id=run_id)
    store = build_passage_store(run_id, [
        ("t", "https://example.org/one", "Raw words about <script>alert(4)</script> stay text in the passage too."),
        ("s", "/tmp/some folder/note.md", "A fine link is found in the second source."),
    ])  # fmt: skip
    page = render_page(markdown, store, local_files=True)  # as for a report this tool wrote
    dom = parse_dom(page.html)
    assert dom.tags().isdisjoint({"script", "img", "iframe", "b", "object", "embed"})
    assert not [a for _, a in dom.elements if any(name.startswith("on") for name in a)]
    assert all(ALLOWED_HREF.match(href) for href in dom.hrefs()), dom.hrefs()
    assert "file:///tmp/some%20folder/note.md" in dom.hrefs() and "https://example.org/one" in dom.hrefs()
    assert dom.title == "A <b>bold</b> claim <img src=x onerror=alert(1)>"  # shown as text, made of nothing
    assert "<script>alert(4)</script>" in " ".join(dom.text_by_id.values())  # the passage, as text
    assert page.citations == 2 and page.previews == 2 and page.unresolved == (7,)
    review = dom.by_class("status-rejected")
    assert review and "rejected" in page.html.split('class="status status-rejected">', 1)[1][:20]
    assert "&lt;script&gt;document.title=&#x27;owned&#x27;&lt;/script&gt; heat" in page.html  # the question
    stranger = parse_dom(render_page(markdown, store).html)  # someone else's report: no file: link at all
    assert not [h for h in stranger.hrefs() if h.lower().startswith("file:")] and "/tmp/some folder" in stranger.text


async def test_a_report_without_its_passages_still_exports_and_says_so_in_one_line(
    tmp_path: Path, scripted_model
) -> None:
    report = await _report(tmp_path, scripted_model)
    for stored in (report.parent / "meta").glob("passages-*.json"):
        stored.unlink()
    done = cli(tmp_path, "export", str(report), "--format", "html", "--output", str(tmp_path / "old.html"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(tmp_path / "old.html")
    (note,) = done.stderr.strip().splitlines()
    assert note.startswith("note: Citation previews are not available") and "are not there" in note
    page = (tmp_path / "old.html").read_text(encoding="utf-8")
    dom = parse_dom(page)
    assert not dom.by_class("tip") and any(h.startswith("#src-") for h in dom.hrefs())
    assert dom.by_class("note") and '<p class="note">Citation previews are not available' in page


async def test_a_copied_report_finds_its_passages_by_its_id(tmp_path: Path, scripted_model) -> None:
    report = await _report(tmp_path, scripted_model)
    copy = tmp_path / "elsewhere" / "renamed.md"
    copy.parent.mkdir()
    shutil.copy(report, copy)
    exported = export_report(copy, fmt="html", reports_dir=report.parent)
    assert exported.path == copy.with_suffix(".html") and exported.previews == exported.citations > 0


async def test_export_finds_a_report_by_id_and_refuses_bad_arguments_in_one_line(
    tmp_path: Path, scripted_model
) -> None:
    report = await _report(tmp_path, scripted_model)
    run_id = report.stem
    assert find_report(report.parent, run_id) == report
    with pytest.raises(InputError, match="no report"):
        find_report(report.parent, make_run_id("missing", None))
    by_id = cli(tmp_path, "export", run_id, "--reports-dir", str(report.parent))
    assert by_id.returncode == 0 and Path(by_id.stdout.strip()) == report.with_suffix(".html")
    (tmp_path / "folder.html").mkdir()
    cases = {
        "not-a-report": ["export", "not-a-report"],
        "output file": ["export", str(report), "--output", str(tmp_path / "folder.html")],
        "is the report itself": ["export", str(report), "--output", str(report)],
        "unknown export format": ["export", str(report), "--format", "docx"],
    }
    for message, args in cases.items():
        done = cli(tmp_path, *args)
        assert done.returncode == 2 and message in done.stderr, (args, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


async def test_the_mcp_page_is_a_plain_function_of_the_folder_and_the_id(
    tmp_path: Path, scripted_model
) -> None:
    report = await _report(tmp_path, scripted_model)
    page = report_html_text(report.parent, report.stem)
    assert page.startswith("<!DOCTYPE html>") and 'role="tooltip"' in page
    with pytest.raises(UnknownRun):
        report_html_text(report.parent, make_run_id("missing", None))
    with pytest.raises(UnknownRun, match="no report matches '../../etc/passwd'"):  # never read as a path
        report_html_text(report.parent, "../../etc/passwd")
    assert report_html_text(report.parent, "latest") == page, "any run reference"


def test_run_format_writes_html_beside_the_markdown_or_to_output_and_checks_pdf_first(
    tmp_path: Path, corpus: Path
) -> None:
    reports = tmp_path / "reports"
    common = ["run", QUERY, "--corpus", str(corpus), "--reports-dir", str(reports), "--no-critique"]
    with FakeOpenAIServer(ResearchResponder()) as server:
        beside = cli(tmp_path, *common, "--format", "html", base_url=server.base_url)
        chosen = cli(tmp_path, *common, "--format", "html", "--output", str(tmp_path / "out.html"),
                     base_url=server.base_url)  # fmt: skip
        asked = len(server.requests)
        no_browser = cli(tmp_path, *common, "--format", "pdf", "--browser", str(tmp_path / "no-chromium"),
                         base_url=server.base_url)  # fmt: skip
        assert len(server.requests) == asked, "no model call before the browser is found"
    assert beside.returncode == 0, beside.stderr
    markdown, html = (Path(line) for line in beside.stdout.splitlines())
    assert markdown.suffix == ".md" and html == markdown.with_suffix(".html") and html.is_file()
    assert chosen.returncode == 0, chosen.stderr
    md2, out = (Path(line) for line in chosen.stdout.splitlines())
    assert out == tmp_path / "out.html" and out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert md2.is_file() and not md2.with_suffix(".html").exists()
    assert no_browser.returncode == 2 and len(list(reports.glob("*.md"))) == 2
    (line,) = no_browser.stderr.strip().splitlines()
    assert "apt install chromium" in line and "--browser PATH" in line


def test_a_stored_passage_file_beside_the_report_wins(tmp_path: Path) -> None:
    run_id = make_run_id("beside", None)
    reports = tmp_path / "reports"
    (reports / "meta").mkdir(parents=True)
    report = reports / f"{run_id}.md"
    report.write_text(HOSTILE_REPORT.format(run_id=run_id), encoding="utf-8")
    passages_path(reports / "meta", run_id).write_bytes(
        build_passage_store(run_id, [("t", "u", "x")]).to_json()
    )
    exported = export_report(report, fmt="html", reports_dir=tmp_path / "other")
    assert exported.previews == 1 and exported.note == ""  # source 2 has no stored passage
