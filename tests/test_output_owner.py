"""``--output`` never replaces a file another run owns, however the path is spelled; any other file it may."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from research_agent.errors import InputError
from research_agent.files.output import check_output_path
from tests.support.cli import cli
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.research_responder import ResearchResponder

QUERY = "How well do heat pumps work in cold climates?"
NO_MODEL = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}  # never reached: a refused --output comes first
EARLIER = "heat-pumps_20260101T000000000000Z"


def reports_with_an_earlier_run(tmp_path: Path) -> Path:
    reports = tmp_path / "reports"
    (reports / "meta").mkdir(parents=True)
    (reports / f"{EARLIER}.md").write_text("# Earlier report\n")
    (reports / f"{EARLIER}.html").write_text("<h1>Earlier</h1>\n")
    (reports / "meta" / f"run-{EARLIER}.yaml").write_text("id: x\n")
    (reports / "meta" / "index.sqlite").write_bytes(b"SQLite format 3\x00")
    return reports


@pytest.mark.parametrize(
    ("spelled", "reason"),
    [
        (f"reports/{EARLIER}.md", "it is a report in the reports folder"),
        (f"reports/{EARLIER}.html", "it is a report in the reports folder"),
        (f"reports/meta/run-{EARLIER}.yaml", "it is in the reports' meta folder"),
        ("reports/meta/index.sqlite", "it is in the reports' meta folder"),
        ("reports/meta/new-file.md", "it is in the reports' meta folder"),
        (f"elsewhere/../reports/{EARLIER}.md", "it is a report in the reports folder"),
        (f"link/{EARLIER}.md", "it is a report in the reports folder"),
        ("cache/pages.sqlite", "it is in the cache folder"),
        ("reports", "it is the reports folder"),
    ],
)
def test_a_file_another_run_owns_is_refused(tmp_path: Path, spelled: str, reason: str) -> None:
    reports = reports_with_an_earlier_run(tmp_path)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "link").symlink_to(reports)
    with pytest.raises(InputError) as info:
        check_output_path(tmp_path / spelled, reports_dir=reports, cache_dir=tmp_path / "cache")
    assert reason in str(info.value) and "\n" not in str(info.value)


def test_other_files_may_be_written_or_replaced(tmp_path: Path) -> None:
    reports = reports_with_an_earlier_run(tmp_path)
    mine = tmp_path / "mine.md"
    mine.write_text("old\n")
    for path in (mine, tmp_path / "new.md", reports / "a-copy-of-my-own.md", reports / "notes" / "x.txt"):
        assert check_output_path(path, reports_dir=reports) == path.resolve()


def test_the_cli_refuses_before_the_run_starts_and_the_earlier_files_stay(tmp_path: Path, corpus: Path) -> None:
    reports = reports_with_an_earlier_run(tmp_path)
    before = {p: p.read_bytes() for p in reports.rglob("*") if p.is_file()}
    os.symlink(reports, tmp_path / "link")
    for target in (f"reports/{EARLIER}.md", f"reports/meta/run-{EARLIER}.yaml", "reports/meta/index.sqlite",
                   f"corpus/../reports/{EARLIER}.md", f"link/{EARLIER}.md"):
        proc = cli(tmp_path, "run", QUERY, "--corpus", str(corpus), "--reports-dir", str(reports),
                   "--output", target, env=NO_MODEL)
        assert proc.returncode == 2, (target, proc.stderr)
        assert proc.stderr.startswith(f"error: --output {target}") and proc.stderr.count("\n") == 1, proc.stderr
    assert {p: p.read_bytes() for p in reports.rglob("*") if p.is_file()} == before


def test_an_ordinary_file_outside_the_reports_folder_is_still_replaced(tmp_path: Path, corpus: Path) -> None:
    mine = tmp_path / "mine.md"
    mine.write_text("MY EARLIER NOTES\n")
    with FakeOpenAIServer(ResearchResponder()) as llm:
        proc = cli(tmp_path, "run", QUERY, "--corpus", str(corpus), "--reports-dir", str(tmp_path / "reports"),
                   "--output", str(mine), "--no-critique", base_url=llm.base_url)
    assert proc.returncode == 0, proc.stderr
    assert mine.read_text().startswith("---\n") and "MY EARLIER NOTES" not in mine.read_text()


def test_export_refuses_another_runs_file_and_may_replace_its_own_page(tmp_path: Path) -> None:
    reports = reports_with_an_earlier_run(tmp_path)
    mine = reports / "mine_20260202T000000000000Z.md"
    mine.write_text("---\nquery: mine\n---\n\n# Mine\n\nHeat pumps work in the cold.\n")
    refused = cli(tmp_path, "export", str(mine), "--output", str(reports / f"{EARLIER}.html"),
                  "--reports-dir", str(reports))
    assert refused.returncode == 2 and "it is a report in the reports folder" in refused.stderr, refused.stderr
    assert (reports / f"{EARLIER}.html").read_text() == "<h1>Earlier</h1>\n"
    own = mine.with_suffix(".html")
    own.write_text("an older export of this report\n")
    again = cli(tmp_path, "export", str(mine), "--output", str(own), "--reports-dir", str(reports))
    assert again.returncode == 0, again.stderr
    assert "Heat pumps work in the cold." in own.read_text()
