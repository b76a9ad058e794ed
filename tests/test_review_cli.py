"""`review REPORT.md`: exit 0 approved, 1 rejected, 2 unusable input; text or JSON output."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from research_agent.cli.review import app, review_file
from research_agent.config import MODES
from tests.support.files import write_file
from tests.support.review_reports import CLEAN_BODY, FRONT, extra, long_body, report

runner = CliRunner()

def write(tmp_path: Path, text: str | bytes, name: str = "report.md") -> Path:
    return write_file(tmp_path / name, text)


def test_approved_report_exits_0(tmp_path: Path) -> None:
    path = write(tmp_path, report(long_body(MODES["standard"].target_words)))
    result = runner.invoke(app, [str(path)])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("APPROVED - No Issues Found")
    assert "  - Viability: unscored" in result.stdout


def test_rejected_report_exits_1_with_feedback(tmp_path: Path) -> None:
    path = write(tmp_path, extra("Sales rose 40%."))
    result = runner.invoke(app, [str(path)])
    assert result.exit_code == 1
    assert result.stdout.startswith("REJECTED - Issues Found:\n\nX Unsupported claims (1 issue):")
    assert "X Length (" in result.stdout  # standard mode from the front matter: under a quarter, critical


def test_json_output(tmp_path: Path) -> None:
    path = write(tmp_path, extra("Sales rose 40%."))
    result = runner.invoke(app, [str(path), "--json"])
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["approved"] is False and data["critical"] == 2 and data["warnings"] == 0
    assert [i["type"] for i in data["issues"]] == ["unsupported_claim", "length"]
    assert set(data["issues"][0]) == {
        "type",
        "severity",
        "line",
        "matched",
        "reason",
        "fix",
        "origin",
        "confidence",
    }


def test_mode_flag_overrides_front_matter_and_no_mode_means_no_length_check(tmp_path: Path) -> None:
    text = report(long_body(200))  # about 250 words: under a quarter of standard's target, over quick's
    path = write(tmp_path, text)
    assert "X Length (" in runner.invoke(app, [str(path)]).stdout  # standard, from the front matter
    quick = runner.invoke(app, [str(path), "--mode", "quick"])
    assert quick.exit_code == 0 and "! Length (" in quick.stdout and "target 600" in quick.stdout
    bare = write(tmp_path, report(CLEAN_BODY, front=""), "bare.md")
    assert "Length" not in runner.invoke(app, [str(bare)]).stdout
    unknown = write(tmp_path, report(CLEAN_BODY, front=FRONT.replace("standard", "turbo")), "turbo.md")
    assert "Length" not in runner.invoke(app, [str(unknown)]).stdout


def test_rules_file_adds_issues(tmp_path: Path) -> None:
    rules = write(
        tmp_path,
        "- {name: no-critics, pattern: Field trials, reason: r, fix: f, severity: critical}\n",
        "rules.yaml",
    )
    result = runner.invoke(app, [str(write(tmp_path, report(CLEAN_BODY))), "--rules", str(rules), "--json"])
    assert result.exit_code == 1
    assert [i["type"] for i in json.loads(result.stdout)["issues"]][0] == "rule:no-critics"


def one_line_error(args: list[str]) -> str:
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    return lines[0]


def test_unusable_inputs_exit_2_with_one_line(tmp_path: Path) -> None:
    assert "no such file" in one_line_error([str(tmp_path / "absent.md")])
    assert "not a file" in one_line_error([str(tmp_path)])
    assert "not UTF-8" in one_line_error([str(write(tmp_path, b"# T\n\xff\xfe bad\n", "bin.md"))])
    good = str(write(tmp_path, report(CLEAN_BODY)))
    assert "unknown mode 'turbo'" in one_line_error([good, "--mode", "turbo"])
    bad_rules = write(
        tmp_path, "- {name: a, pattern: '(', reason: r, fix: f, severity: warning}\n", "bad.yaml"
    )
    assert "rule 'a': bad pattern" in one_line_error([good, "--rules", str(bad_rules)])


def test_windows_newlines_and_bom_are_read(tmp_path: Path) -> None:
    text = "\ufeff" + report(CLEAN_BODY).replace("\n", "\r\n")
    path = write(tmp_path, text.encode("utf-8"), "crlf.md")
    review = review_file(path, mode=None)
    assert [i.type for i in review.issues] == ["length"]  # front matter still found: standard mode


def test_an_empty_or_unstructured_file_is_a_rejected_report_exit_1(tmp_path: Path) -> None:
    for name, text, reason in [
        ("empty.md", "", "the report is empty"),
        ("hello.md", "hello", "the report has no sections"),
        ("bare.md", "# Title\n\nSome words about pumps.\n", "the report has no Sources list"),
    ]:
        result = runner.invoke(app, [str(write(tmp_path, text, name))])
        assert result.exit_code == 1, (name, result.output)
        assert result.stdout.startswith("REJECTED - Issues Found:\n\nX Report structure"), result.stdout
        assert reason in result.stdout
        data = json.loads(runner.invoke(app, [str(tmp_path / name), "--json"]).stdout)
        assert data["approved"] is False and data["issues"][0]["type"] == "structure"


def test_a_binary_file_stays_unusable_input_exit_2(tmp_path: Path) -> None:
    assert "binary" in one_line_error([str(write(tmp_path, b"\x00\x01\x02PK\x00", "zip.md"))])


def test_a_paragraph_looped_through_near_copies_is_rejected(tmp_path: Path) -> None:
    para = "Installers say that careful sizing and good insulation matter more than the brand of the unit [3]."
    near = para.replace("careful sizing", "careful unit sizing")
    looped = long_body(MODES["standard"].target_words) + "\n## Loop\n" + "\n\n".join([para] + [near] * 13) + "\n"
    result = runner.invoke(app, [str(write(tmp_path, report(looped)))])
    assert result.exit_code == 1, result.output  # approved (exit 0) before near copies counted as repeats
    assert "X Duplicated paragraphs (13 issues):" in result.stdout
