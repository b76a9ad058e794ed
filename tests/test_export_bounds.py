"""Exports of reports someone else wrote (issue 31, points 2 and 8-9): bounded, text only, local links
only for the tool's own reports, and only markdown reports exported.

Sizes are counted in characters, never timed: a source's passage is on the page once however many
citations refer to it; no address or unbroken run of text passes its cap; a report holding NUL,
escape sequences, C1 controls or bidi overrides is read (with one warning) and exported without
them. The PDF's time limit is met by a stand-in browser that never finishes.
"""

from __future__ import annotations

import re
import stat
import time
from pathlib import Path

import pytest

from research_agent.errors import InputError, StorageError
from research_agent.export import export_report, render_page
from research_agent.export.browser import print_pdf
from research_agent.export.budget import MAX_PDF_PAGES, pdf_budget
from research_agent.export.markup import MAX_LINK_CHARS, MAX_SHOWN_CHARS
from research_agent.ids import make_run_id
from research_agent.record.passages import build_passage_store
from tests.support.cli import cli
from tests.support.html_dom import parse_dom

CONTROLS = "\x00\x07\x1b[31m\x1b]0;owned\x07\x9b2J\x85\u202e\u2066"
WORD = "zyzzyva"  # once in source 1's passage


def _report(run_id: str, body: str, sources: str) -> str:
    return f"---\nid: {run_id}\nquery: heat pumps\nmode: standard\n---\n\n# Heat pumps\n\n## Findings\n\n{body}\n\n## Sources\n\n{sources}"


def _store(run_id: str):
    return build_passage_store(run_id, [
        ("One", "https://example.org/one", f"Heat pumps move heat. The {WORD} figure is in the first source."),
        ("Two", "https://example.org/two", "Ground loops are costly to dig. Air units are cheap."),
        ("Three", "https://example.org/three", "Defrost cycles cut winter output."),
    ])  # fmt: skip


SOURCES = "\n".join(f"{n}. {t} \u2014 <https://example.org/{t.lower()}>" for n, t in enumerate(("One", "Two", "Three"), 1))


def _page(citations: int) -> str:
    run_id = make_run_id("sized", None)
    body = " ".join(f"Heat pumps move heat in case {i} [{i % 3 + 1}]." for i in range(citations))
    return render_page(_report(run_id, body, SOURCES), _store(run_id)).html


def test_a_passage_is_on_the_page_once_however_many_citations_refer_to_it() -> None:
    """0.3.0 repeated the passage in every citation: 78,000 citations made 76.6 MB."""
    small, large = _page(30), _page(3000)
    assert small.count(WORD) == large.count(WORD) == 1
    assert large.count('role="tooltip"') == 3  # one preview per source
    dom = parse_dom(large)
    described = {a["aria-describedby"] for a in dom.with_attr("aria-describedby")}
    assert described == {"tip-1", "tip-2", "tip-3"} and all(d in dom.ids() for d in described)
    per_citation = (len(large) - len(small)) / (3000 - 30)
    assert per_citation < 160, per_citation  # the link and its sentence's words; no passage, no title


def test_long_addresses_titles_and_runs_are_cut() -> None:
    run_id = make_run_id("long", None)
    url = "https://example.org/" + "a" * 100_000
    sources = f"1. {'T' * 50_000} \u2014 <{url}>\n2. Short \u2014 <https://example.org/{'b' * 1000}>"
    body = f"A claim [1] and [another]({url}) and a run {'c' * 20_000} [2]."
    page = render_page(_report(run_id, body, sources), None)
    dom = parse_dom(page.html)
    assert max(map(len, dom.hrefs())) <= MAX_LINK_CHARS and f"https://example.org/{'b' * 1000}" in dom.hrefs()
    assert max(map(len, re.findall(r"\S+", dom.text))) <= MAX_SHOWN_CHARS + 1
    assert all(len(text) <= MAX_SHOWN_CHARS + 20 for key, text in dom.text_by_id.items() if key.startswith("name-"))
    assert len(page.html) < 20_000  # 0.3.0: every one of those characters, twice for the address


def test_file_links_only_to_local_paths_of_the_tool_s_own_reports(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    (reports / "meta").mkdir(parents=True)
    run_id = make_run_id("files", None)
    sources = "1. Notes \u2014 <file:///home/me/notes.md>\n2. Share \u2014 <file://evil.example/share/x>"
    body = "A claim [1], another [2], a [path](file:///etc/passwd) and a [share](file://evil.example/s)."
    report = reports / f"{run_id}.md"
    report.write_text(_report(run_id, body, sources), encoding="utf-8")
    stranger = export_report(report, fmt="html", reports_dir=reports, output=tmp_path / "stranger.html")
    (reports / "meta" / f"run-{run_id}.yaml").write_text("id: x\n", encoding="utf-8")  # now the tool's run
    own = export_report(report, fmt="html", reports_dir=reports, output=tmp_path / "own.html")
    stranger_links = [h for h in parse_dom(stranger.path.read_text(encoding="utf-8")).hrefs() if h.startswith("file")]
    own_links = [h for h in parse_dom(own.path.read_text(encoding="utf-8")).hrefs() if h.startswith("file")]
    assert stranger_links == []
    assert own_links == ["file:///etc/passwd", "file:///home/me/notes.md"]  # never a host: no network login


def test_export_refuses_what_is_not_a_markdown_report_and_writes_nothing(tmp_path: Path) -> None:
    """0.3.0: ``export /etc/passwd`` wrote /etc/passwd.html."""
    passwd = tmp_path / "passwd"
    passwd.write_text("root:x:0:0:root:/root:/bin/bash\n", encoding="utf-8")
    notes = tmp_path / "notes.md"
    notes.write_text("# My notes\n\nNo front matter here [1].\n", encoding="utf-8")
    for path, says in ((passwd, "not a markdown report"), (notes, "it has no front matter")):
        done = cli(tmp_path, "export", str(path))
        assert done.returncode == 2 and says in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix in (".html", ".pdf")) == []


def test_a_report_with_control_characters_is_reviewed_and_exported_without_them(tmp_path: Path) -> None:
    """0.3.0: review and export exited 2 ("a binary file") on a report holding a NUL."""
    reports = tmp_path / "reports"
    (reports / "meta").mkdir(parents=True)
    run_id = make_run_id("controls", None)
    body = f"Heat pumps{CONTROLS} move heat [1]. Entities too: &#x202e;&#27;&#x85; [2]."
    report = reports / f"{run_id}.md"
    report.write_text(_report(run_id, body, SOURCES), encoding="utf-8")
    store = _store(run_id)
    hostile = build_passage_store(run_id, [(f"One{CONTROLS}", "https://example.org/one", f"Heat{CONTROLS} pumps."),
                                           *[(s.title, s.location, s.text) for s in store.sources[1:]]])  # fmt: skip
    (reports / "meta" / f"passages-{run_id}.json").write_bytes(hostile.to_json())
    reviewed = cli(tmp_path, "review", str(report))
    exported = cli(tmp_path, "export", str(report), "--reports-dir", str(reports))
    assert reviewed.returncode in (0, 1) and exported.returncode == 0, reviewed.stderr + exported.stderr
    for done in (reviewed, exported):
        (warning,) = [line for line in done.stderr.splitlines() if "control character" in line]
        assert f"report {report}: 23 control character(s) dropped" in warning
    html = report.with_suffix(".html").read_text(encoding="utf-8")
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", html)
    assert "Heat pumps[31m" not in html and "Heat pumps move heat" in html and "owned" not in html


def test_a_file_that_is_mostly_controls_is_still_a_binary_file(tmp_path: Path) -> None:
    zipped = tmp_path / "zip.md"
    zipped.write_bytes(b"\x00\x01\x02PK\x00" * 50)
    done = cli(tmp_path, "review", str(zipped))
    assert done.returncode == 2 and "a binary file" in done.stderr


def test_an_id_with_path_characters_is_named_as_such(tmp_path: Path) -> None:
    report = tmp_path / "copied.md"
    report.write_text(_report("../../etc/passwd", "A claim [1].", SOURCES), encoding="utf-8")
    exported = export_report(report, fmt="html", reports_dir=tmp_path)
    assert "holds path characters" in exported.note and "has no id" not in exported.note


def test_the_pdf_print_has_a_time_limit_and_stops_the_browser_s_helpers(tmp_path: Path) -> None:
    """A stand-in Chromium that starts a helper and never finishes: one line, and both are gone."""
    pid_file = tmp_path / "helper.pid"
    browser = tmp_path / "chromium"
    browser.write_text(f"#!/bin/sh\nsleep 600 &\necho $! > {pid_file}\nwait\n", encoding="utf-8")
    browser.chmod(browser.stat().st_mode | stat.S_IXUSR)
    with pytest.raises(StorageError) as caught:
        print_pdf(browser, "<!DOCTYPE html><p>x</p>", timeout=1)
    assert str(caught.value) == "chromium did not finish printing the PDF within 1 s; stopped"
    helper = int(pid_file.read_text())
    assert _gone(helper), "the browser's helper process was left running"


def _gone(pid: int) -> bool:
    """Whether process ``pid`` has died (a zombie waiting for its reaper counts): polled, since a
    killed process dies asynchronously; this waits for the kill, it times nothing."""
    for _ in range(200):
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


def _stand_in(tmp_path: Path, body: str) -> Path:
    """A stand-in Chromium running ``body`` (a shell script; ``$PDF``: where --print-to-pdf asked)."""
    browser = tmp_path / "chromium"
    script = 'for a in "$@"; do case "$a" in --print-to-pdf=*) PDF="${a#--print-to-pdf=}";; esac; done\n'
    browser.write_text(f"#!/bin/sh\n{script}{body}\n", encoding="utf-8")
    browser.chmod(browser.stat().st_mode | stat.S_IXUSR)
    return browser


def _issue_45_report(tmp_path: Path, lines: int = 13_000) -> Path:
    """Issue 45's shape: 13,000 lines of six citations each (873 KB), which printed to 72 MB in 47.7 s."""
    run_id = make_run_id("amplified", None)
    body = "\n\n".join(f"Line {i} says heat pumps move heat [1] [2] [3] [1] [2] [3]." for i in range(lines))
    report = tmp_path / f"{run_id}.md"
    report.write_text(_report(run_id, body, SOURCES), encoding="utf-8")
    return report


def test_a_report_too_long_to_print_is_refused_before_chromium_starts(tmp_path: Path) -> None:
    started = tmp_path / "started"
    browser = _stand_in(tmp_path, f"touch {started}\nprintf '%%PDF-1.4' > \"$PDF\"")
    report = _issue_45_report(tmp_path)
    with pytest.raises(InputError) as caught:
        export_report(report, fmt="pdf", reports_dir=tmp_path, browser=browser)
    assert "too long to print as PDF (about " in str(caught.value) and "export it as HTML" in str(caught.value)
    assert not started.exists() and not report.with_suffix(".pdf").exists()
    done = cli(tmp_path, "export", str(report), "--format", "pdf", "--browser", str(browser))
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and not started.exists()


def test_the_pdf_budget_grows_with_the_report() -> None:
    short, long = (pdf_budget(_report("x", "A claim [1].\n\n" * n, SOURCES), "r.md") for n in (10, 2000))
    assert short.pages < long.pages <= MAX_PDF_PAGES and short.seconds < long.seconds and short.bytes < long.bytes
    assert 20 <= short.seconds < 25 and long.seconds <= 60
    assert pdf_budget(_report("x", "A claim [1].\n\n" * 2000, SOURCES), "r.md", timeout=1).seconds == 1


def test_a_pdf_past_its_report_s_size_budget_is_not_written(tmp_path: Path) -> None:
    browser = _stand_in(tmp_path, "printf '%%PDF-1.4' > \"$PDF\"\nhead -c 4000000 /dev/zero >> \"$PDF\"")
    report = tmp_path / "small.md"
    report.write_text(_report(make_run_id("small", None), "A claim [1].", SOURCES), encoding="utf-8")
    with pytest.raises(StorageError) as caught:
        export_report(report, fmt="pdf", reports_dir=tmp_path, browser=browser)
    assert "came out at 4.0 MB, past the 1.4 MB a report of about 1 page(s) may take" in str(caught.value)
    assert not report.with_suffix(".pdf").exists()


def test_a_print_past_its_time_says_whose_budget_it_was(tmp_path: Path) -> None:
    browser = _stand_in(tmp_path, "sleep 600 &\nwait")
    report = tmp_path / "small.md"
    report.write_text(_report(make_run_id("small", None), "A claim [1].", SOURCES), encoding="utf-8")
    with pytest.raises(StorageError) as caught:
        export_report(report, fmt="pdf", reports_dir=tmp_path, browser=browser, timeout=1)
    assert str(caught.value) == ("chromium did not finish printing the PDF within 1 s; stopped "
                                 "(the time a report of about 1 page(s) may take)")  # fmt: skip
