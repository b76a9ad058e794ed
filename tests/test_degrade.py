"""One unreadable answer never loses a paid-for run (issue 9, part 2).

Every structured call has three attempts; after them each stage degrades, visibly,
instead of failing: skeptic -> no findings plus a limitation, revise -> the previous
draft, decompose -> the question itself (and the domain ``other``). Only the draft is fatal.
"""

from __future__ import annotations

import pytest

from research_agent.errors import InvalidModelOutput
from tests.conftest import INVALID, Invalid
from tests.support.pipeline import (
    CRITICAL,
    QUERY,
    Recorded,
    queue,
    record_of,
    run,
    use,
)
from tests.support.research_responder import ResearchResponder


async def test_an_unreadable_skeptic_gives_the_report_without_findings_and_says_so(tmp_path, scripted_model):
    queue(scripted_model, ResearchResponder(), skeptic=[INVALID, Invalid("at /viability: 'x' is not"), INVALID])
    progress = Recorded()
    result = await run(tmp_path, scripted_model, progress)

    assert result.final_decision == "proceed" and result.report_path.is_file()
    assert len(scripted_model.calls("decompose")) == 1 and not scripted_model.calls("revise")  # no replan, no revision
    report = result.report_markdown
    assert "## Adversarial Analysis\n\nThe skeptic gave no usable answer;" in report
    assert "found no problems" not in report
    limitations = report.split("## Limitations & Gaps", 1)[1]
    assert ("The skeptic's answers could not be used (the skeptic stage got invalid output from model scripted "
            "after 3 attempts: not JSON (no JSON object or array found in the answer)), so this report has no "
            "adversarial findings") in " ".join(limitations.split())
    expected = ("the skeptic stage got invalid output from model scripted after 3 attempts: not JSON "
                "(no JSON object or array found in the answer); the report goes out without adversarial findings")
    assert progress.notes == [expected]
    record = record_of(result)
    assert record["warnings"] == [expected] and record["skeptic"]["unavailable"] == expected
    assert record["skeptic"]["findings"] == [] and record["skeptic"]["viability"] is None
    assert record["usage"]["skeptic"]["calls"] == 3 and record["usage"]["skeptic"]["retries"] == 2


async def test_a_skeptic_answer_that_validates_on_the_third_attempt_is_used(tmp_path, scripted_model):
    responder = ResearchResponder(viability=77)
    queue(scripted_model, responder, skeptic=[INVALID, INVALID, use(responder)])
    result = await run(tmp_path, scripted_model)
    record = record_of(result)
    assert record["skeptic"]["viability"] == 77 and record["skeptic"]["unavailable"] == ""
    assert record["warnings"] == [] and record["usage"]["skeptic"]["calls"] == 3


async def test_an_unreadable_revision_keeps_the_previous_draft_and_stops_revising(tmp_path, scripted_model):
    responder = ResearchResponder(findings=[CRITICAL])
    queue(scripted_model, responder, revise=[INVALID] * 3)
    progress = Recorded()
    result = await run(tmp_path, scripted_model, progress)

    assert len(scripted_model.calls("revise")) == 1  # max_revisions is 2: the second is not tried
    assert result.final_decision == "proceed" and result.report_path.is_file()
    assert "Plain VACUUM marks the space as reusable" in result.report_markdown  # the draft, unrevised
    assert progress.notes[-1].endswith("; the previous draft is kept")
    kept, rejected = record_of(result)["warnings"]  # the critical finding stays open: the review rejects it
    assert kept == progress.notes[-1] and rejected.startswith("the tool's own review rejected this report: 1 ")
    assert record_of(result)["usage"]["revise"]["calls"] == 3


async def test_an_unreadable_first_plan_gives_other_and_the_question_itself(tmp_path, scripted_model):
    queue(scripted_model, ResearchResponder(), decompose=[INVALID] * 3)
    progress = Recorded()
    result = await run(tmp_path, scripted_model, progress)

    assert result.domain == "other" and result.final_decision == "proceed"
    record = record_of(result)
    assert record["sub_queries"] == [QUERY]
    assert [n.rsplit("; ", 1)[1] for n in progress.notes] == ["searching for the question itself, the domain is 'other'"]
    assert record["warnings"] == progress.notes and record["domain"] == "other"
    assert record["usage"]["decompose"]["calls"] == 3 and "classify" not in record["usage"]


async def test_only_the_draft_is_fatal_after_its_three_attempts(tmp_path, scripted_model):
    queue(scripted_model, ResearchResponder(), draft=[INVALID] * 3, skeptic=[])
    with pytest.raises(InvalidModelOutput, match="the draft stage got invalid output from model scripted after 3"):
        await run(tmp_path, scripted_model)
    assert len(scripted_model.calls("draft")) == 1
    assert not list((tmp_path / "reports").glob("*.md"))


async def test_sources_that_cannot_be_scored_are_announced_once_and_recorded(tmp_path, scripted_model):
    from research_agent.errors import LLMTimeout

    responder = ResearchResponder()
    failing = LLMTimeout("model call for stage relevance timed out after 180s (2 attempts)")
    # the batch fails, and so does the first smaller batch it is asked again in; the second is answered
    queue(scripted_model, responder, relevance=[failing, failing, use(responder)])
    progress = Recorded()
    result = await run(tmp_path, scripted_model, progress)

    expected = "2 source(s) could not be scored and are left out (model call for stage relevance"
    assert [n for n in progress.notes if "could not be scored" in n] == [progress.notes[0]]
    assert progress.notes[0].startswith(expected)
    assert any(w.startswith(expected) for w in record_of(result)["warnings"])
