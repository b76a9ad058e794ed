"""A plan a person gives or reviews (issue 44, point 3), through the pipeline: no decompose call for a
plan given, the plan searched as the person left it, the run record's ``plan_by_person``, no planning
lesson said to be applied where no planning prompt was written, no replan of a person's plan, and the
trial ledger leaving such a run out of the planning lessons' arms only."""

from __future__ import annotations

import random

import pytest
import yaml

from research_agent.errors import Cancelled, InputError
from research_agent.memory.critique.judgement import critique_run
from research_agent.memory.store.trials import open_ledger
from research_agent.pipeline import research
from research_agent.plans import ResearchPlan, checked_plan, editable_text, plan_from_text
from research_agent.plans.steering import GIVEN_REASON
from research_agent.run.finish import PLAN_BY_PERSON
from research_agent.run.replan import BY_PERSON
from tests.support.critique import ANSWER
from tests.support.memory import NOW
from tests.support.pipeline import GAP, QUERY, DocsProvider, script, settings_for
from tests.support.research_responder import ResearchResponder
from tests.support.streams import JumpingLoop
from tests.test_pipeline_lessons import seed_memory

MINE = ("postgresql vacuum dead tuples", "autovacuum daemon thresholds")


def record_of(result) -> dict:
    return yaml.safe_load(result.run_record_path.read_text(encoding="utf-8"))


async def test_a_plan_given_is_searched_with_no_decompose_call_and_no_planning_lesson(tmp_path, scripted_model):
    settings = settings_for(tmp_path, control_fraction=0.0, trial_probability=0.0)
    seed_memory(settings.meta_dir)
    script(scripted_model, ResearchResponder(), plans=0)
    provider = DocsProvider(tmp_path)
    given = ResearchPlan(QUERY, "technology", MINE)
    result = await research(QUERY, settings=settings, model=scripted_model, providers=[provider], now=NOW,
                            rng=random.Random(1), plan=given)  # fmt: skip

    assert scripted_model.calls("decompose") == [] and provider.calls == list(MINE)
    record = record_of(result)
    assert record["plan_by_person"] is True and record["sub_queries"] == list(MINE)
    assert record["domain"] == "technology"
    applied = [a["key"] for a in record["lessons"]["applied"]]
    assert applied == ["source-kind:press-release"], "the judging lesson is given; the planning one had no prompt"
    excluded = {e["file"]: e["reason"] for e in record["lessons"]["excluded"]}
    assert excluded["counterarguments:missing"] == GIVEN_REASON
    assert "counterarguments" not in result.report_markdown.split("## Lessons Applied")[-1].split("## ")[0]

    scripted_model.enqueue("critique", ANSWER)  # its critique carries the flag into the trial ledger
    await critique_run(result.run_record_path, scripted_model, settings=settings, now=NOW)
    row = open_ledger(settings.meta_dir, settings.state_dir).rows[result.id]
    assert row.plan_by_person and [u.key for u in row.uses] == ["source-kind:press-release"]


async def test_a_person_s_plan_is_not_replanned_and_the_record_says_why(tmp_path, scripted_model):
    script(scripted_model, ResearchResponder(viability=[20], findings=[GAP]), plans=0)
    given = ResearchPlan(QUERY, "technology", MINE)
    result = await research(QUERY, settings=settings_for(tmp_path), model=scripted_model,
                            providers=[DocsProvider(tmp_path)], lessons=_none, plan=given)  # fmt: skip
    assert scripted_model.calls("decompose") == [] and len(result.iterations) == 1
    assert f"not replanned: {BY_PERSON}" in result.warnings


def _none(domain):
    from research_agent.memory.lessons.types import LessonSelection

    return LessonSelection.none(domain)


class Reviewer:
    """A person at the review: gives back ``answer(plan)``; keeps what it was shown."""

    def __init__(self, answer) -> None:
        self.answer = answer
        self.shown: list[ResearchPlan] = []

    async def __call__(self, plan: ResearchPlan) -> ResearchPlan:
        self.shown.append(plan)
        return self.answer(plan)


async def _reviewed_run(tmp_path, model, reviewer):
    provider = DocsProvider(tmp_path)
    result = await research(QUERY, settings=settings_for(tmp_path), model=model, providers=[provider],
                            lessons=_none, review_plan=reviewer)  # fmt: skip
    return result, provider


async def test_a_plan_accepted_as_it_was_is_the_model_s(tmp_path, scripted_model):
    script(scripted_model, ResearchResponder())
    reviewer = Reviewer(lambda plan: plan)
    result, provider = await _reviewed_run(tmp_path, scripted_model, reviewer)
    (shown,) = reviewer.shown
    assert shown.question == QUERY and shown.domain == "technology" and provider.calls == list(shown.sub_queries)
    assert "plan_by_person" not in record_of(result) and PLAN_BY_PERSON not in result.report_markdown
    assert "plan review" in result.timings


async def test_a_plan_edited_at_the_review_is_searched_and_recorded_as_the_person_s(tmp_path, scripted_model):
    script(scripted_model, ResearchResponder())
    reviewer = Reviewer(lambda plan: plan.with_sub_queries(MINE))
    result, provider = await _reviewed_run(tmp_path, scripted_model, reviewer)
    assert provider.calls == list(MINE) and len(scripted_model.calls("decompose")) == 1
    record = record_of(result)
    assert record["plan_by_person"] is True and record["sub_queries"] == list(MINE)
    assert f"- {PLAN_BY_PERSON}" in result.report_markdown.split("## Limitations & Gaps", 1)[1]


async def test_stopping_at_the_review_writes_nothing(tmp_path, scripted_model):
    scripted_model.enqueue("decompose", lambda r: ResearchResponder().answer(r.stage, r.system, r.user))

    def stop(plan):
        raise Cancelled("stopped at the plan review")

    with pytest.raises(Cancelled, match="plan review"):
        await _reviewed_run(tmp_path, scripted_model, Reviewer(stop))
    assert not list((tmp_path / "reports").glob("*.md"))


@pytest.mark.parametrize(
    ("data", "said"),
    [
        ([], "not a JSON object"),
        ({"question": QUERY, "sub_queries": "vacuum"}, "must be a list"),
        ({"question": QUERY, "sub_queries": []}, "no sub-query"),
        ({"question": QUERY, "domain": "astrology", "sub_queries": ["postgres vacuum"]}, "unknown domain"),
        ({"question": QUERY, "sub_queries": ["postgres vacuum"], "extra": 1}, "unknown field(s) 'extra'"),
        ({"question": "Why is the sky blue?", "sub_queries": ["postgres vacuum"]}, "made for another question"),
        ({"question": QUERY, "sub_queries": ["./science.json?type=object"]}, "sub-query 1 ('./science.json?type=object') is no search query"),
        ({"question": QUERY, "sub_queries": ["postgres vacuum", "x" * 201]}, "sub-query 2 ('xxx"),
        ({"question": QUERY, "sub_queries": ["vacuum\x1b[31m red"]}, "control characters"),
        ({"question": QUERY, "sub_queries": [f"postgres vacuum topic {n}" for n in range(13)]}, "at most 12"),
    ],
)
def test_a_bad_plan_is_refused_in_one_line_naming_the_problem(data, said) -> None:
    with pytest.raises(InputError) as caught:
        checked_plan(data, question=QUERY, where="plan file p.json")
    message = str(caught.value)
    assert said in message and message.startswith("plan file p.json") and "\n" not in message


def test_a_plan_s_sub_queries_are_tidied_and_merged_and_its_domain_read_as_people_write_it() -> None:
    plan = checked_plan({"question": f"  {QUERY} ", "domain": "Policy-Law",
                         "sub_queries": ["postgres   vacuum", "Postgres vacuum", "autovacuum thresholds"]})  # fmt: skip
    assert plan == ResearchPlan(QUERY, "policy_law", ("postgres vacuum", "autovacuum thresholds"))
    assert checked_plan({"question": QUERY, "sub_queries": ["postgres vacuum"]}).domain == "other"


def test_the_editable_text_round_trips_and_an_empty_list_stops() -> None:
    plan = ResearchPlan(QUERY, "technology", MINE)
    text = editable_text(plan)
    assert text.startswith("# The plan for: ") and plan_from_text(plan, text) == plan
    edited = text.replace("autovacuum daemon thresholds\n", "") + "\nvacuum full locking\n"
    assert plan_from_text(plan, edited).sub_queries == (MINE[0], "vacuum full locking")
    assert plan_from_text(plan, "# nothing left\n\n") is None
    with pytest.raises(InputError, match="sub-query 1"):
        plan_from_text(plan, "x\n")


async def test_a_plan_edited_at_review_keeps_its_lessons_as_given_and_its_row_says_a_person_planned(
    tmp_path, scripted_model
):
    """The planning lesson was in the prompt the model planned with, so the record says it was given;
    the ledger row carries ``plan_by_person``, which keeps the run out of that lesson's arms and in the
    judging lesson's (tests/test_trial_ledger.py::test_a_plan_a_person_gave_counts_for_judging_lessons_only)."""
    settings = settings_for(tmp_path, control_fraction=0.0, trial_probability=0.0)
    seed_memory(settings.meta_dir)
    script(scripted_model, ResearchResponder())
    reviewer = Reviewer(lambda plan: plan.with_sub_queries(MINE))
    result = await research(QUERY, settings=settings, model=scripted_model, providers=[DocsProvider(tmp_path)],
                            now=NOW, rng=random.Random(1), review_plan=reviewer)  # fmt: skip
    assert len(scripted_model.calls("decompose")) == 1 and reviewer.shown
    record = record_of(result)
    applied = sorted(a["key"] for a in record["lessons"]["applied"])
    assert applied == ["counterarguments:missing", "source-kind:press-release"] and record["plan_by_person"] is True
    scripted_model.enqueue("critique", ANSWER)
    await critique_run(result.run_record_path, scripted_model, settings=settings, now=NOW)
    row = open_ledger(settings.meta_dir, settings.state_dir).rows[result.id]
    assert row.plan_by_person and sorted(u.key for u in row.uses) == applied


async def test_a_plan_built_by_hand_is_checked_by_the_run_before_any_model_call(tmp_path, scripted_model):
    for plan, said in ((ResearchPlan(QUERY, "technology", ("type=object",)), "sub-query 1"),
                       (ResearchPlan("Why is the sky blue?", "science", MINE), "another question")):  # fmt: skip
        with pytest.raises(InputError, match=said):
            await research(QUERY, settings=settings_for(tmp_path), model=scripted_model,
                           providers=[DocsProvider(tmp_path)], lessons=_none, plan=plan)  # fmt: skip
    assert scripted_model.requests == []


def test_the_run_s_deadline_waits_for_the_person(tmp_path, scripted_model):
    """The person takes two hours over the plan of a run with a one-hour deadline: the loop's clock
    jumps (no waiting), and the run still goes on to its report, its deadline moved by the wait."""
    loop = JumpingLoop()
    script(scripted_model, ResearchResponder())

    def two_hours(plan):
        loop.offset += 7200.0
        return plan.with_sub_queries(MINE)

    try:
        result = loop.run_until_complete(research(
            QUERY, settings=settings_for(tmp_path, run_timeout=3600.0), model=scripted_model,
            providers=[DocsProvider(tmp_path)], lessons=_none, review_plan=Reviewer(two_hours),
        ))  # fmt: skip
    finally:
        loop.close()
    assert record_of(result)["stop_reason"] != "deadline" and result.timings["plan review"] < 3600
