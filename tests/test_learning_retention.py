"""End to end (issue 41): a lesson retired under a small retention limit stays retired.

Every run goes through the real selection (``select_lessons``, reading the index and the trial
ledger), a run record carrying what it was given, and the real critique (``critique_run`` with a
scripted critic: one point lower on every dimension when the run was given the harmful lesson),
which writes the critique, adds the run's row to the ledger and prunes to ``max_critiques``.
"""

from __future__ import annotations

import random
from datetime import timedelta
from pathlib import Path

from research_agent.config import Settings
from research_agent.ids import make_run_id
from research_agent.memory.critique.judgement import critique_run
from research_agent.memory.lessons.effects_view import lesson_effects
from research_agent.memory.lessons.select import select_lessons
from research_agent.memory.store.files import scan_critiques
from research_agent.memory.store.trials import open_ledger
from tests.conftest import ScriptedModel
from tests.support.critique import ANSWER, make_record
from tests.support.memory import NOW

COUNTER = "counterarguments:missing"  # built from critiques tagged missing_counterarguments
LIMIT = 5


def _answer(harmed: bool, i: int) -> dict:
    level = 3 if harmed else 4
    scores = {d: level for d in ANSWER["scores"]}
    scores["actionability"] = level + (i % 2)  # a little spread
    return {**ANSWER, "scores": scores, "weaknesses": [], "tags": ["missing_counterarguments"]}


async def _run(tmp_path: Path, settings: Settings, i: int) -> tuple[bool, bool]:
    """One run: its selection, record and critique; whether it was given COUNTER, and withheld it as retired."""
    meta = settings.meta_dir
    when = NOW + timedelta(minutes=10 * i)
    chosen = select_lessons(
        meta, "technology", now=when, rng=random.Random(i), state_dir=settings.state_dir, trial_probability=0.5,
        control_fraction=0.2,
    )  # fmt: skip
    given = COUNTER in [lesson.key for lesson in chosen.lessons]
    retired = any(w.key == COUNTER and w.reason == "retired" for w in chosen.withheld)
    query = f"How do heat pumps perform, take {i % 4}?"
    record = make_record(
        tmp_path, id=make_run_id(query, when), query=query, started=when.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        lessons=chosen.as_record(),
    )  # fmt: skip
    model = ScriptedModel()
    model.enqueue("critique", _answer(given, i))
    await critique_run(record, model, settings=settings, now=when + timedelta(minutes=1))
    return given, retired


async def test_a_lesson_retired_under_a_small_limit_is_never_given_again(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    settings = Settings(reports_dir=reports, state_dir=tmp_path / "state", max_critiques=LIMIT)
    retired_at = None
    given_after: list[int] = []
    i = 0
    while i < 80 and (retired_at is None or i < retired_at + 3 * LIMIT):
        given, withheld_retired = await _run(tmp_path, settings, i)
        if retired_at is None and withheld_retired:
            retired_at = i
        if retired_at is not None and given:
            given_after.append(i)
        i += 1
        assert len(scan_critiques(settings.meta_dir)[0]) <= LIMIT  # retention keeps 5 critique files
    assert retired_at is not None, "the harmful lesson was never retired"
    assert i - retired_at >= 2 * LIMIT and given_after == []
    ledger = open_ledger(settings.meta_dir, settings.state_dir)
    assert len(ledger.rows) == i  # every run's evidence, whatever retention deleted
    last = ledger.ordered()[-1]  # each row says what the run's selection left out, and why
    assert dict(last.excluded)[COUNTER].startswith(f"retired on run {retired_at_number(ledger)}")
    (decision,) = [e for e in ledger.events if e.key == COUNTER]
    assert decision.event == "retired"
    (effect,) = [e for e in lesson_effects(settings.meta_dir, now=NOW + timedelta(minutes=10 * i),
                                           state_dir=settings.state_dir) if e.key == COUNTER]  # fmt: skip
    assert effect.status == "retired" and effect.decided_after == decision.number


def retired_at_number(ledger) -> int:
    (decision,) = [e for e in ledger.events if e.key == COUNTER]
    return decision.number
