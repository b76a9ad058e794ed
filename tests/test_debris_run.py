"""A run whose writer answers with debris (issue 23, points 2-4): the review rejects every draft,
the viability shown is capped at 50 whatever the skeptic said, the run revises (never replans)
until its revisions run out, and the report goes out marked ``review: rejected`` with a note
under its title and one warning; ``--strict`` makes the command exit 1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from research_agent.cli.review import app as review_app
from research_agent.review.markdown import parse_front_matter
from research_agent.run.report import ReportMeta, compose_report
from research_agent.stages.writing.draft_text import read_draft
from tests.support.cli import cli
from tests.support.debris import ISSUE_DEBRIS, OTHER_DEBRIS, Debris, DebrisResponder
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.pipeline import CLAIM, CRITICAL, QUERY, queue, record_of, run, use
from tests.support.research_responder import ResearchResponder

BOTH = pytest.mark.parametrize("debris", [ISSUE_DEBRIS, OTHER_DEBRIS], ids=lambda d: d.name)


@BOTH
async def test_debris_is_revised_twice_then_published_as_rejected(tmp_path, scripted_model, debris: Debris) -> None:
    responder = DebrisResponder(debris)
    queue(scripted_model, responder, revise=[use(responder)] * 2)
    result = await run(tmp_path, scripted_model)

    iterations = result.iterations
    assert [i.decision for i in iterations] == ["revise", "revise", "proceed"]  # revised, never replanned
    assert [i.viability for i in iterations] == [50, 50, 50]  # the skeptic said more; the lint caps it
    report = result.report_markdown
    front = parse_front_matter(report)
    open_critical = front["open_critical"]
    assert front["review"] == "rejected" and open_critical == iterations[-1].critical_count >= 5
    under_title = report.split("\n# ", 1)[1].split("\n## ", 1)[0]
    assert "> **The tool's own review rejected this report.**" in under_title
    assert f"{open_critical} critical issue(s) were still open after 2 revision(s)" in under_title
    warning = next(w for w in result.warnings if w.startswith("the tool's own review rejected this report"))
    assert f"{open_critical} critical issue(s) still open" in warning
    record = record_of(result)
    assert record["review"]["status"] == "rejected" and record["review"]["open_critical"] == open_critical
    assert record["skeptic"]["viability"] == 50 and f"the skeptic said {debris.viability}" in record["skeptic"][
        "viability_note"]  # fmt: skip
    assert record["skeptic"]["findings"] == []  # its one finding, repeated, is debris: dropped (issue 45)
    assert "1 of the skeptic's findings said nothing readable (debris) and are not shown." in report
    assert any(w.startswith("1 skeptic finding(s) were debris") for w in result.warnings)
    held = f"Viability of the answer from these sources: 50/100 (held there while critical issues stay open; " \
           f"the skeptic said {debris.viability})."
    assert held in report


@BOTH
def test_the_published_debris_is_rejected_by_the_review_command(tmp_path: Path, debris: Debris) -> None:
    draft = read_draft(debris.answer())
    meta = ReportMeta("How does PostgreSQL VACUUM reclaim space?", "standard", "2026-01-01", "smollm2", "full_report")
    path = tmp_path / "report.md"
    path.write_text(compose_report(draft, [], meta=meta, skeptic=None).markdown, encoding="utf-8")
    raw = tmp_path / "raw.md"
    raw.write_text(debris.markdown(), encoding="utf-8")
    for report in (path, raw):
        result = CliRunner().invoke(review_app, [str(report), "--json"])
        assert result.exit_code == 1, result.stdout
        types = {i["type"] for i in json.loads(result.stdout)["issues"] if i["severity"] == "critical"}
        assert {"debris", "no_citation", "length"} <= types and types & {"duplicate_section", "duplicate_paragraph"}


async def test_a_skeptic_finding_left_open_rejects_the_report_but_a_disputed_claim_does_not(
    tmp_path, scripted_model
) -> None:
    stubborn = ResearchResponder(findings=[CRITICAL], fix_on_revise=False)
    queue(scripted_model, stubborn, revise=[use(stubborn)] * 2)
    (tmp_path / "kept").mkdir()
    kept = await run(tmp_path / "kept", scripted_model)
    assert parse_front_matter(kept.report_markdown)["review"] == "rejected"
    assert kept.run_record.review.open_critical == 1

    marking = ResearchResponder(findings=[CRITICAL], fix_on_revise=False)

    def mark(request):  # the writer marks the claim disputed instead of removing it
        data = marking.answer("revise", request.system, request.user)
        data = json.loads(json.dumps(data).replace(CLAIM, f"{CLAIM} [Disputed]"))
        return data

    queue(scripted_model, marking, revise=[mark])
    (tmp_path / "marked").mkdir()
    marked = await run(tmp_path / "marked", scripted_model)
    assert CLAIM + " [Disputed]" in marked.report_markdown
    assert "review" not in parse_front_matter(marked.report_markdown)
    assert marked.run_record.review.status == "approved" and marked.run_record.review.open_critical == 0


def test_strict_exits_1_and_the_warning_is_one_line_and_in_json(tmp_path: Path, corpus: Path) -> None:
    with FakeOpenAIServer(DebrisResponder(ISSUE_DEBRIS)) as server:
        common = ["run", QUERY, "--corpus", str(corpus), "--no-critique"]
        plain = cli(tmp_path, *common, "--reports-dir", str(tmp_path / "a"), base_url=server.base_url)
        strict = cli(tmp_path, *common, "--strict", "--json", "--reports-dir", str(tmp_path / "b"),
                     base_url=server.base_url)  # fmt: skip
    assert plain.returncode == 0, plain.stderr
    warnings = [line for line in plain.stderr.splitlines() if line.startswith("warning: the tool's own review")]
    assert len(warnings) == 1 and "critical issue(s) still open" in warnings[0]
    report = Path(plain.stdout.strip())
    assert parse_front_matter(report.read_text(encoding="utf-8"))["review"] == "rejected"

    assert strict.returncode == 1, strict.stderr
    data = json.loads(strict.stdout)
    assert Path(data["report_path"]).is_file()  # the user paid for it: it is written all the same
    assert [w for w in data["warnings"] if w.startswith("the tool's own review rejected")] == [
        warnings[0].removeprefix("warning: ")
    ]
    record = yaml.safe_load(Path(data["run_record_path"]).read_text(encoding="utf-8"))
    assert record["review"]["status"] == "rejected"


def test_a_clean_run_is_not_marked_and_strict_exits_0(tmp_path: Path, corpus: Path, server) -> None:
    proc = cli(tmp_path, "run", QUERY, "--corpus", str(corpus), "--no-critique", "--strict",
               "--reports-dir", str(tmp_path / "r"), base_url=server.base_url)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "review" not in parse_front_matter(Path(proc.stdout.strip()).read_text(encoding="utf-8"))
    assert "the tool's own review" not in proc.stderr


async def test_a_low_confidence_critical_finding_is_listed_but_does_not_reject(tmp_path, scripted_model) -> None:
    unsure = ResearchResponder(findings=[{**CRITICAL, "confidence": 0.5}], fix_on_revise=False)
    queue(scripted_model, unsure)  # not confident enough to revise for, nor to reject on
    result = await run(tmp_path, scripted_model)
    assert "review" not in parse_front_matter(result.report_markdown)
    assert result.run_record.review.status == "approved"
    assert 'Unresolved after review: skeptic: evidence at line ' in result.report_markdown
    assert f': "{CLAIM}": the draft overstates what the source says.' in result.report_markdown
