"""Replan and revise: the loop goes each way, within its limits, and shows its work."""

from __future__ import annotations

import yaml

from research_agent.memory.lessons.select import LessonSelection
from research_agent.pipeline import research
from tests.support.pipeline import CLAIM, CRITICAL, GAP, QUERY, DocsProvider, script, settings_for
from tests.support.research_responder import ResearchResponder


async def run(tmp_path, model, **changes):
    return await research(
        QUERY,
        settings=settings_for(tmp_path, **changes),
        model=model,
        providers=[DocsProvider(tmp_path)],
        lessons=lambda domain: LessonSelection.none(domain),
    )


async def test_low_viability_three_times_makes_exactly_three_plans_then_proceeds(tmp_path, scripted_model):
    # later plans find no new sources, so only the first plan's sources are scored
    script(scripted_model, ResearchResponder(viability=30, findings=[GAP]), plans=3, drafts=3, skeptics=3)
    result = await run(tmp_path, scripted_model)
    assert [i.decision for i in result.iterations] == ["replan", "replan", "proceed"]
    assert len(scripted_model.calls("decompose")) == 3
    assert "below the threshold of 51, after 3 plan(s)" in result.report_markdown
    guidance = scripted_model.calls("decompose")[1].user
    assert "viability 30/100" in guidance
    record = yaml.safe_load(result.run_record_path.read_text())
    assert [i["plan"] for i in record["iterations"]] == [1, 2, 3]


async def test_low_then_high_viability_makes_two_plans(tmp_path, scripted_model):
    script(scripted_model, ResearchResponder(viability=[30, 80], findings=[GAP]), plans=2, drafts=2, skeptics=2)
    result = await run(tmp_path, scripted_model)
    assert [i.decision for i in result.iterations] == ["replan", "proceed"]
    assert "below the threshold" not in result.report_markdown


async def test_critical_finding_then_clean_makes_one_revision(tmp_path, scripted_model):
    script(scripted_model, ResearchResponder(findings=[CRITICAL]), revisions=1)
    result = await run(tmp_path, scripted_model)
    assert [i.decision for i in result.iterations] == ["revise", "proceed"]
    feedback = scripted_model.calls("revise")[0].user
    assert "REJECTED - Issues Found:" in feedback and CLAIM in feedback
    assert CLAIM not in result.report_markdown.split("## Adversarial Analysis")[0]


async def test_critical_finding_that_never_clears_stops_after_two_revisions(tmp_path, scripted_model):
    script(scripted_model, ResearchResponder(findings=[CRITICAL], fix_on_revise=False), revisions=2)
    result = await run(tmp_path, scripted_model)
    assert [i.decision for i in result.iterations] == ["revise", "revise", "proceed"]
    assert "left after 2 revision(s)" in result.stop_reason
    limits = result.report_markdown.split("## Limitations & Gaps", 1)[1].split("## Sources")[0]
    assert "Unresolved after review" in limits


async def test_missing_viability_never_restarts(tmp_path, scripted_model):
    script(scripted_model, ResearchResponder(viability=None))
    result = await run(tmp_path, scripted_model)
    assert [i.decision for i in result.iterations] == ["proceed"]
    assert any("unscored" in w for w in result.warnings)


async def test_no_retry_turns_both_loops_off(tmp_path, scripted_model):
    script(scripted_model, ResearchResponder(viability=10, findings=[CRITICAL], fix_on_revise=False), revisions=1)
    result = await run(tmp_path, scripted_model, retry=False)
    assert len(scripted_model.calls("decompose")) == 1
    assert {i.plan for i in result.iterations} == {1}
    # without retry the final synthesis still answers the critical finding once: no loop
    assert len(scripted_model.calls("revise")) == 1


async def test_limits_are_settings(tmp_path, scripted_model):
    script(scripted_model, ResearchResponder(viability=30, findings=[GAP]), plans=2, drafts=2, skeptics=2)
    result = await run(tmp_path, scripted_model, max_plans=2, min_viability=40)
    assert len(result.iterations) == 2 and len(scripted_model.calls("relevance")) == 1  # every source in one batched call


async def test_a_critical_finding_with_revisions_off_says_no_revision_was_made(tmp_path, scripted_model):
    script(scripted_model, ResearchResponder(findings=[CRITICAL], fix_on_revise=False))
    result = await run(tmp_path, scripted_model, max_revisions=0)
    assert scripted_model.calls("revise") == []
    assert result.stop_reason.endswith("critical issue(s) left with no revision made")
    assert "still open with no revision made:" in result.report_markdown
    assert "0 revision(s)" not in result.report_markdown
