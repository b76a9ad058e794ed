"""Decisions that stay made, the arms without leaks, output a person can read (issue 41 points 2-6)."""

from __future__ import annotations

import math
import random
import re
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from research_agent.cli.memory import MemoryDeps, app
from research_agent.config import Settings
from research_agent.mcp_server.summaries import effects_text
from research_agent.memory.critique.facts import compute_facts
from research_agent.memory.critique.judgement import critique_from_answer
from research_agent.memory.effects.sequential import t_from_z
from research_agent.memory.effects.stats import compare_adaptive
from research_agent.memory.lessons.effects_view import lesson_effects
from research_agent.memory.lessons.render import lessons_markdown
from research_agent.memory.lessons.select import SelectionRules, compared_runs, select_lessons
from research_agent.memory.store.critique_types import ProposedLesson
from research_agent.memory.store.index.summary import IndexTrust, open_index
from research_agent.memory.store.person.proposals import collect_proposals
from research_agent.memory.store.trials import LEDGER_NAME, TrialEvent, open_ledger
from research_agent.record import read_run_record
from tests.support.critique import REPORT, make_record
from tests.support.memory import NOW, make_critique, put
from tests.support.web import in_process, options_for

COUNTER = "counterarguments:missing"
LOW = "coverage:low-score"


def seed_harm(meta: Path, *, runs: int = 6) -> None:
    """Runs given COUNTER scored 2, runs that withheld it by its own draw scored 4."""
    for i in range(runs):
        put(meta, make_critique(i, applied=(COUNTER,), scores=(2, 2, 2, 2, 2), tags=("missing_counterarguments",)))
        put(meta, make_critique(20 + i, withheld=(COUNTER,), scores=(4, 4, 4, 4, 4), tags=("missing_counterarguments",)))


def effects(meta: Path, state: Path, *, when=NOW) -> dict[str, object]:
    return {e.key: e for e in lesson_effects(meta, now=when, state_dir=state)}


def invoke(args: list[str], reports: Path, state: Path, **kw):
    deps = MemoryDeps(load_settings=lambda o: Settings(**{"reports_dir": reports, "state_dir": state, **o}),
                      clock=lambda: NOW, **kw)  # fmt: skip
    return CliRunner().invoke(app, args, obj=deps, env={"COLUMNS": "200"})


def test_a_retirement_is_recorded_stays_made_and_a_reinstatement_starts_a_new_trial(tmp_path: Path) -> None:
    reports, state = tmp_path / "reports", tmp_path / "state"
    meta = reports / "meta"
    seed_harm(meta)
    retired = effects(meta, state)[COUNTER]
    assert retired.status == "retired" and retired.decided_on in ("scores.coverage", "mean_score")
    (event,) = open_ledger(meta, state).events
    assert (event.event, event.key, event.number, event.measure) == ("retired", COUNTER, retired.decided_after,
                                                                     retired.decided_on)  # fmt: skip
    # runs that would now tell another story do not undo it: the sequence goes on, the decision stays
    for i in range(12):
        put(meta, make_critique(40 + i, applied=(COUNTER,), scores=(5, 5, 5, 5, 5)))
        put(meta, make_critique(60 + i, withheld=(COUNTER,), scores=(3, 3, 3, 3, 3)))
    later = effects(meta, state)[COUNTER]
    assert (later.status, later.decided_after) == ("retired", retired.decided_after)
    assert len(open_ledger(meta, state).events) == 1
    for seed in range(20):
        chosen = select_lessons(meta, "technology", now=NOW, rng=random.Random(seed), state_dir=state, trial_probability=0.5)
        assert COUNTER not in [lesson.key for lesson in chosen.lessons]
    shown = invoke(["ledger"], reports, state)
    assert shown.exit_code == 0 and f"technology {COUNTER}: retired on run {retired.decided_after}: lowered" in shown.stdout
    # a planted reinstatement does nothing
    with (meta / LEDGER_NAME).open("a") as handle:
        handle.write('{"event": ' + __import__("json").dumps(TrialEvent("reinstated", "technology", COUNTER,
                     "2026-11-22T11:00:00Z").as_json()) + ', "mac": "' + "ab" * 16 + '"}\n')  # fmt: skip
    assert effects(meta, state)[COUNTER].status == "retired"
    done = invoke(["reinstate", COUNTER], reports, state)
    assert done.exit_code == 0, done.output
    assert f"{COUNTER} is reinstated in technology" in done.stdout
    again = invoke(["reinstate", COUNTER], reports, state)
    assert again.exit_code != 0 and "is not retired" in again.output
    later = NOW + timedelta(hours=2)
    fresh = effects(meta, state, when=later)
    assert COUNTER not in fresh  # a new trial, with no run of its own yet
    chosen = select_lessons(meta, "technology", now=later, rng=random.Random(0), state_dir=state, control_fraction=0)
    assert COUNTER in [lesson.key for lesson in chosen.lessons]
    for i in range(3):  # only runs after the reinstatement count
        put(meta, make_critique(0, applied=(COUNTER,), when=NOW + timedelta(minutes=10 + i), query=f"new {i}"))
    trial = effects(meta, state, when=later)[COUNTER]
    assert (trial.applied_runs, trial.baseline_runs, trial.status) == (3, 0, "measuring") and trial.reinstated


def test_the_ledger_clear_says_what_it_forgets_and_asks(tmp_path: Path) -> None:
    reports, state = tmp_path / "reports", tmp_path / "state"
    meta = reports / "meta"
    seed_harm(meta)
    effects(meta, state)
    refused = invoke(["ledger", "--clear"], reports, state, ask=lambda question: False)
    assert refused.exit_code == 1 and (meta / LEDGER_NAME).exists()
    assert "clearing forgets 12 run(s) of evidence (0 of them no longer have a critique" in refused.stdout
    assert f"retired lesson(s) would be given again and measured anew: {COUNTER} (technology)" in refused.stdout
    quiet = invoke(["ledger", "--clear"], reports, state, ask=lambda question: None)
    assert quiet.exit_code != 0 and "pass --yes" in quiet.output
    cleared = invoke(["ledger", "--clear", "--yes"], reports, state)
    assert cleared.exit_code == 0 and not (meta / LEDGER_NAME).exists()


def test_the_suspension_lifts_once_the_lessons_behind_it_are_retired(tmp_path: Path) -> None:
    meta, state = tmp_path / "meta", tmp_path / "state"
    for i in range(8):
        put(meta, make_critique(i, applied=(COUNTER,), scores=(1, 2, 1, 2, 1), query=f"q{i % 3}"))
        put(meta, make_critique(20 + i, withheld=(COUNTER,), reason="control", scores=(4, 5, 4, 5, 4), query=f"q{i % 3}"))
        put(meta, make_critique(40 + i, withheld=(COUNTER,), scores=(4, 4, 5, 4, 4), query=f"q{i % 3}"))
    rules = SelectionRules(NOW, 30, 10, 3, 0.2, False, 5, 0.5)
    with open_index(meta, trust=IndexTrust(state)) as index:
        before = compare_adaptive("technology", compared_runs(index.ledger(), "technology", rules))
    assert before.suspended
    assert effects(meta, state)[COUNTER].status == "retired"  # the lesson's own trial retires it
    with open_index(meta, trust=IndexTrust(state)) as index:
        after = compare_adaptive("technology", compared_runs(index.ledger(), "technology", rules))
    # its runs told of a lesson no run gets any more; with every lesson retired none is left to compare
    assert not after.suspended and after.adaptive_n == 0


def test_small_degrees_of_freedom_are_handled_exactly() -> None:
    tail = 0.5 * math.erfc(1.645 / math.sqrt(2))
    assert t_from_z(1.645, 1) == pytest.approx(math.tan(math.pi * (0.5 - tail)), rel=1e-9)  # Cauchy
    a = 1 - 2 * tail
    assert t_from_z(1.645, 2) == pytest.approx(a * math.sqrt(2 / (1 - a * a)), rel=1e-9)
    assert t_from_z(3.2, 2.5) < t_from_z(3.2, 2) < t_from_z(3.2, 1) < t_from_z(3.2, 0.5)
    assert t_from_z(3.2, 29.999) == pytest.approx(t_from_z(3.2, 30), rel=1e-4)  # where the expansion takes over


def test_no_effect_counts_the_runs_of_the_domain(tmp_path: Path) -> None:
    meta, state = tmp_path / "meta", tmp_path / "state"
    for i in range(6):
        put(meta, make_critique(i, applied=(COUNTER,), query=f"q{i % 3}"))
        put(meta, make_critique(10 + i, withheld=(COUNTER,), query=f"q{i % 3}"))
    assert effects(meta, state)[COUNTER].status == "active"  # 12 runs of the domain
    for i in range(28):  # runs that had it in neither arm still count as runs of the domain
        put(meta, make_critique(30 + i, withheld=(COUNTER,), reason="control"))
    found = effects(meta, state)[COUNTER]
    assert (found.status, found.trial_runs, found.applied_runs + found.baseline_runs) == ("no-effect", 40, 12)


def test_effects_say_how_many_more_runs_a_decision_needs(tmp_path: Path) -> None:
    reports, state = tmp_path / "reports", tmp_path / "state"
    for i in range(6):
        put(reports / "meta", make_critique(i, applied=(COUNTER,), scores=(4, 4, 4, 4, 4 - i % 2), query=f"q{i % 3}"))
        put(reports / "meta", make_critique(10 + i, withheld=(COUNTER,), scores=(4, 4, 4 - i % 2, 4, 3), query=f"q{i % 3}"))
    shown = invoke(["effects"], reports, state)
    assert shown.exit_code == 0
    assert re.search(r"12 run\(s\) of the domain since its trial began; about \d+ more run\(s\) to decide", shown.stdout)
    assert re.search(r"    delta [+-]\d\.\d\d, always-valid interval \[[+-]\d\.\d\d, [+-]\d\.\d\d\]; paired", shown.stdout)


def test_mcp_names_the_run_and_measure_that_decided() -> None:
    text = effects_text({"effects": [{"key": COUNTER, "domain": "technology", "status": "retired", "delta": -1.66667,
                                      "decided_on": "scores.coverage", "decided_after": 21, "applied_runs": 6,
                                      "baseline_runs": 6}]})  # fmt: skip
    assert "retired (decided on run 21 of the domain, on coverage), difference -1.67" in text


def test_a_retired_lesson_is_named_in_the_lessons_applied_of_the_runs_it_would_have_reached(tmp_path: Path) -> None:
    meta, state = tmp_path / "meta", tmp_path / "state"
    seed_harm(meta)
    effects(meta, state)
    selection = select_lessons(meta, "technology", now=NOW, rng=random.Random(1), state_dir=state, control_fraction=0)
    section = lessons_markdown(selection)
    assert f"Not given, retired by its own trial: `{COUNTER}`, retired on run " in section
    assert ": lowered the coverage by 2.00" in section or ": lowered the mean score by 2.00" in section


def test_suspect_and_rejected_critiques_propose_nothing(tmp_path: Path) -> None:
    answer = {"scores": {"source_diversity": 1, "claim_support": 2, "coverage": 3, "geographic_balance": 4,
                         "actionability": 5}, "weaknesses": [], "suggestions": [], "tags": [],
              "proposed_lessons": [{"stage": "decompose", "text": "Add a sub-query for the release notes."}]}  # fmt: skip
    record = read_run_record(make_record(tmp_path))
    facts = compute_facts(record, REPORT, now=NOW)
    ramp = critique_from_answer(record, facts, answer, timestamp=NOW, report_path="r.md")
    assert ramp.suspect and ramp.proposed_lessons == ()
    fair = {**answer, "scores": {**answer["scores"], "source_diversity": 4, "claim_support": 4}}
    assert critique_from_answer(record, facts, fair, timestamp=NOW, report_path="r.md").proposed_lessons
    # one an older version wrote with its proposals is not listed either
    old = make_critique(1, scores=(1, 2, 3, 4, 5))
    proposing = (ProposedLesson("decompose", "Add a sub-query for the release notes."),)
    assert collect_proposals([replace(old, proposed_lessons=proposing)]) == ()
    rejected = replace(make_critique(2), review="rejected", overall_pass=False, proposed_lessons=proposing)
    assert collect_proposals([rejected]) == ()
    assert len(collect_proposals([replace(make_critique(3), proposed_lessons=proposing)])) == 1


async def test_the_workbench_names_the_decision_and_reinstates_in_two_steps(tmp_path: Path) -> None:
    meta = tmp_path / "reports" / "meta"
    seed_harm(meta)
    async with in_process(options_for(tmp_path)) as web:
        page = (await web.client.get("/memory")).text
        assert re.search(r'class="muted decision">retired on run \d+: lowered the', page)
        assert 'action="/memory/lessons/reinstate"' in page and "Reinstate…" in page
        csrf = await web.csrf()
        asked = await web.client.post("/memory/lessons/reinstate", data={"csrf": csrf, "key": COUNTER,
                                                                        "domain": "technology"})  # fmt: skip
        assert asked.status_code == 200 and "Reinstate this lesson?" in asked.text and "a new trial" in asked.text
        assert open_ledger(meta, tmp_path / "state").events[-1].event == "retired"  # nothing written yet
        fields = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)">', asked.text))
        done = await web.client.post("/memory/lessons/reinstate", data=fields)
        shown = await web.client.get(done.headers["location"])  # the write redirects: Back never sends it again
        twice = await web.client.post("/memory/lessons/reinstate", data=fields)
    assert done.status_code == 303 and f"{COUNTER} is reinstated in technology" in shown.text
    assert twice.status_code == 400 and "is not retired" in twice.text
    assert open_ledger(meta, tmp_path / "state").events[-1].event == "reinstated"
