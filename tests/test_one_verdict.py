"""One verdict (issue 33): ``review`` of a report the tool wrote says what the run said.

The lint reads the parts the tool adds to a report (the Adversarial Analysis, the Limitations &
Gaps, the rejection note) by one rule, whether the run reviews its draft before they exist or
``review`` reads the file after; the skeptic's findings its run record keeps count while their
claims still stand. conftest.py checks every report any test's run writes the same way
(tests/support/one_verdict.py); these tests show the cases the issue named.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import yaml
from typer.testing import CliRunner

from research_agent.cli.review import app as review_app
from research_agent.review.markdown import REJECTION_MARK, parse_report
from tests.support.one_verdict import verdict_disagreements
from tests.support.pipeline import CLAIM, CRITICAL, queue, record_of, run, use
from tests.support.research_responder import ResearchResponder

runner = CliRunner()

SHORT_DRAFT = """## Summary

Plain VACUUM reclaims dead tuples for reuse inside the table file [1].

## Key Findings

- VACUUM FULL rewrites the table and returns space to the operating system [1].
- Autovacuum runs VACUUM when enough dead tuples pile up [2].

## Limitations

- Only two sources were read.
"""


def review_json(report: Path, *extra: str) -> tuple[int, dict]:
    done = runner.invoke(review_app, [str(report), "--json", *extra])
    return done.exit_code, json.loads(done.stdout)


def critical_types(data: dict) -> list[str]:
    return sorted(i["type"] for i in data["issues"] if i["severity"] == "critical")


async def test_a_report_rejected_for_its_length_gets_the_same_count_and_words_from_review(
    tmp_path, scripted_model
) -> None:
    short = ResearchResponder()
    queue(scripted_model, short, draft=[lambda request: SHORT_DRAFT], revise=[lambda request: SHORT_DRAFT] * 2)
    result = await run(tmp_path, scripted_model)
    outcome = result.run_record.review
    assert outcome.rejected and outcome.reasons == ("length",)
    assert REJECTION_MARK in result.report_markdown  # the note under the title: the tool's, not prose
    warning = next(w for w in result.warnings if w.startswith("the tool's own review rejected"))

    code, data = review_json(result.report_path)
    assert code == 1 and critical_types(data) == ["length"] and data["words"] == outcome.words
    (length,) = [i for i in data["issues"] if i["type"] == "length"]
    assert length["matched"] == f"{outcome.words} words, target 1200"
    assert "1 critical issue(s) still open (length)" in warning
    shown = runner.invoke(review_app, [str(result.report_path)]).stdout
    assert f"Words of prose: {outcome.words}" in shown and f"X Length ({outcome.words} words" in shown


async def test_the_skeptics_findings_quoted_twice_are_not_duplicated_paragraphs(tmp_path, scripted_model) -> None:
    again = {**CRITICAL, "reason": CRITICAL["reason"] + "!"}  # the same words: a paragraph the lint calls a repeat
    stubborn = ResearchResponder(findings=[CRITICAL, again], fix_on_revise=False)
    queue(scripted_model, stubborn, revise=[use(stubborn)] * 2)
    result = await run(tmp_path, scripted_model)
    adversarial = result.report_markdown.split("## Adversarial Analysis")[1].split("## Limitations")[0]
    assert adversarial.count(CLAIM) == 2  # the same finding line twice: the tool's text, not the writer's
    outcome = result.run_record.review
    assert (outcome.open_critical, outcome.reasons) == (2, ("skeptic: evidence",))

    code, data = review_json(result.report_path)
    assert code == 1 and critical_types(data) == ["skeptic:evidence"] * 2 and data["words"] == outcome.words
    assert not [i for i in data["issues"] if i["type"].startswith("duplicate")]


async def test_a_copy_finds_its_run_beside_it_or_one_folder_up_and_alone_gets_the_lint(
    tmp_path, scripted_model
) -> None:
    stubborn = ResearchResponder(findings=[CRITICAL], fix_on_revise=False)
    queue(scripted_model, stubborn, revise=[use(stubborn)] * 2)
    result = await run(tmp_path, scripted_model)
    nowhere = ["--reports-dir", str(tmp_path / "none")]
    below = result.report_path.parent / "copies" / "copy.md"
    below.parent.mkdir()
    shutil.copy(result.report_path, below)
    code, data = review_json(below, *nowhere)
    assert code == 1 and critical_types(data) == ["skeptic:evidence"]
    alone = tmp_path / "elsewhere" / "copy.md"
    alone.parent.mkdir()
    shutil.copy(result.report_path, alone)
    code, data = review_json(alone, *nowhere)  # no run record to be found: the lint alone, which passes
    assert code == 0 and critical_types(data) == [] and data["words"] == result.run_record.review.words


async def test_the_claim_removed_in_the_text_no_longer_counts(tmp_path, scripted_model) -> None:
    stubborn = ResearchResponder(findings=[CRITICAL], fix_on_revise=False)
    queue(scripted_model, stubborn, revise=[use(stubborn)] * 2)
    result = await run(tmp_path, scripted_model)
    edited = result.report_path.read_text(encoding="utf-8").replace(CLAIM, "Plain VACUUM frees space")
    result.report_path.write_text(edited, encoding="utf-8")
    code, data = review_json(result.report_path)
    assert code == 0 and critical_types(data) == []


def test_the_tools_parts_are_read_by_one_rule() -> None:
    text = (
        "# Q\n\n> " + REJECTION_MARK + " 2 critical issue(s) were still open after 2 revision(s).\n\n"
        "## Summary\nHeat pumps cut bills [1].\n\n## Adversarial Analysis\n- **critical** (evidence): 40% is a lot.\n\n"
        "## Limitations & Gaps\n- Sales rose 40% in the cold regions.\n\n## Sources\n1. A — https://a.example\n"
    )
    doc = parse_report(text)
    assert [b.text for b in doc.blocks] == ["Heat pumps cut bills [1]."]
    assert [b.line for b in doc.tool_blocks] == [3, 9, 12]


async def test_the_check_catches_a_run_and_a_review_that_disagree(tmp_path, scripted_model) -> None:
    queue(scripted_model, ResearchResponder())
    result = await run(tmp_path, scripted_model)
    assert verdict_disagreements(tmp_path) == []
    data = yaml.safe_load(result.run_record_path.read_text(encoding="utf-8"))
    data["review"]["words"] += 1
    result.run_record_path.write_text(yaml.safe_dump(data), encoding="utf-8")
    (found,) = verdict_disagreements(tmp_path)
    assert found.startswith(result.report_path.name)
    result.run_record_path.unlink()  # so that the check after this test has nothing to say


# A weak writer's shape (SmolLM2 on llama.cpp): everything before any heading, so Key Findings is
# empty; sources named in plain words ("The source 1 is ..."), which the report prints as citations;
# two paragraphs that differ only in the source they name.
MENTIONS_DRAFT = """You have already asked about VACUUM, so here are a few more details:

The source 1 is actually from the PostgreSQL manual. Plain VACUUM marks the space as reusable within the table file.

The source 2 is actually from the autovacuum page. The original source 1 says autovacuum runs VACUUM automatically.

The source 3 is actually from the autovacuum page. The original source 1 says autovacuum runs VACUUM automatically.

I hope this helps! Let me know if you have any further questions.
"""


async def test_sources_named_in_words_are_citations_to_the_run_as_to_review(tmp_path, scripted_model) -> None:
    writer = ResearchResponder(fix_on_revise=False)
    queue(scripted_model, writer, draft=[lambda request: MENTIONS_DRAFT], revise=[lambda request: MENTIONS_DRAFT] * 2)
    result = await run(tmp_path, scripted_model)
    assert "The source [1] is actually" in result.report_markdown
    outcome = result.run_record.review
    assert outcome.rejected and outcome.reasons == ("duplicated paragraphs", "empty sections", "length")

    code, data = review_json(result.report_path)
    assert code == 1 and critical_types(data) == ["duplicate_paragraph", "empty_section", "length"]
    assert data["words"] == outcome.words
    claims = record_of(result)["claim_check"]
    assert claims["cited"] >= 4 and claims["skipped"] == ""  # the check read the citations the report prints
    assert {pair["source"] for pair in record_of(result)["citation_support"]["weak_pairs"]} <= {1, 2, 3}
