"""A degenerate critic is noticed (issue 23, point 5): scores that are an exact ramp in the
schema's dimension order mark the critique ``suspect``; it makes and feeds no lesson and is left
out of effects, the domain suspension and the A/B measures; ``memory stats`` and ``memory
validate`` name it. The same non-ramp vector repeated is not suspect, and stays usable."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

from research_agent.config import Settings
from research_agent.memory.critique.judgement import critique_run, summarize
from research_agent.memory.effects.ab import AbLedger, ab_result
from research_agent.memory.effects.ab_types import AbPair, ArmResult, ArmUsage
from research_agent.memory.effects.stats import compute_stats
from research_agent.memory.lessons.effects_view import lesson_effects
from research_agent.memory.lessons.select import select_lessons
from research_agent.memory.store.critique_types import Scores
from research_agent.memory.store.files import load_all, load_critique
from research_agent.memory.store.schema import DIMENSIONS
from tests.support.critique import ANSWER, make_record
from tests.support.memory import NOW, make_critique, put, put_raw
from tests.support.memory_cli import deps_for, root_app

RAMP = (1, 2, 3, 4, 5)
KEY = "counterarguments:missing"  # target scores.coverage


@pytest.mark.parametrize(("scores", "suspect"), [(RAMP, True), (RAMP[::-1], True), ((1, 2, 3, None, 5), False),
                                                 ((2, 3, 4, 5, 5), False), ((3, 3, 3, 3, 3), False)])
async def test_a_critic_answering_in_schema_order_is_marked_suspect(
    tmp_path: Path, scripted_model, scores, suspect
) -> None:
    scripted_model.enqueue("critique", {**ANSWER, "scores": dict(zip(DIMENSIONS, scores, strict=True))})
    critique = await critique_run(make_record(tmp_path), scripted_model, settings=Settings(), now=NOW)
    assert bool(critique.suspect) is suspect
    saved = load_critique(next((tmp_path / "reports" / "meta").glob("critique-*.yaml")))
    assert saved.suspect == critique.suspect  # written to the file (schema v3, optional)
    if suspect:
        assert critique.suspect.startswith(f"the scores are {', '.join(map(str, scores))} in the schema's")
        assert "suspect:" in summarize(critique)


def _seed(meta: Path, scores: tuple, *, start: int, applied: bool, count: int = 5) -> None:
    for i in range(count):
        arm = {"applied": (KEY,)} if applied else {"withheld": (KEY,)}
        put(meta, make_critique(start + i, scores=scores, **arm))


def test_no_effect_comes_from_a_suspect_critique_while_a_repeated_vector_counts(tmp_path: Path) -> None:
    _seed(tmp_path, (3, 3, 3, 3, 3), start=0, applied=False)  # the same vector five times: usable
    _seed(tmp_path, RAMP, start=10, applied=True)
    (found,) = [e for e in lesson_effects(tmp_path, now=NOW) if e.key == KEY]
    assert (found.applied_runs, found.baseline_runs) == (0, 5)
    _seed(tmp_path, (4, 4, 4, 4, 4), start=20, applied=True, count=2)
    (found,) = [e for e in lesson_effects(tmp_path, now=NOW) if e.key == KEY]
    assert (found.applied_runs, found.mean_with) == (2, 4.0)


def test_suspect_critiques_neither_suspend_a_domain_nor_count_toward_lessons(tmp_path: Path) -> None:
    for i in range(5):  # baseline runs judged well, adaptive ones by a critic that counts 5, 4, 3, 2, 1
        put(tmp_path, make_critique(i, scores=(4, 4, 4, 4, 4)))
        put(tmp_path, make_critique(10 + i, scores=RAMP[::-1], adaptive=True))
    selection = select_lessons(tmp_path, "technology", now=NOW, rng=random.Random(0), control_fraction=0.0)
    assert not selection.reason.startswith("lessons suspended")
    suspects = [why for _, why in selection.excluded if why.startswith("suspect: ")]
    assert len(suspects) == 5
    stats = compute_stats(load_all(tmp_path, now=NOW))
    (domain,) = stats.domains
    assert (domain.comparison.adaptive_n, domain.comparison.suspended) == (0, False)
    assert len(domain.suspect) == 5 and sum("suspect critique (technology)" in w for w in stats.warnings) == 5


def test_an_older_file_with_a_ramp_is_suspect_though_it_carries_no_mark(tmp_path: Path) -> None:
    critique = make_critique(1, scores=RAMP, applied=(KEY,))
    put_raw(tmp_path, critique, suspect=None)
    (loaded,) = load_all(tmp_path, now=NOW)
    assert loaded.critique.suspect is None and loaded.critique.suspect_reason
    assert [e for e in lesson_effects(tmp_path, now=NOW) if e.key == KEY] == []


def test_memory_validate_and_stats_name_suspect_critiques(tmp_path: Path) -> None:
    meta = tmp_path / "reports" / "meta"
    put(meta, make_critique(1, scores=(4, 4, 4, 4, 4)))
    suspect = put(meta, make_critique(2, scores=RAMP))
    runner = CliRunner()
    deps = deps_for(tmp_path / "reports")
    validate = runner.invoke(root_app(), ["memory", "validate"], obj=deps)
    assert validate.exit_code == 0, validate.output
    assert f"suspect  {suspect.name}: the scores are 1, 2, 3, 4, 5" in validate.output
    assert "2 valid (1 suspect: valid, but they feed no lesson), 0 invalid" in validate.output
    stats = runner.invoke(root_app(), ["memory", "stats"], obj=deps)
    assert stats.exit_code == 0, stats.output
    assert "warning: suspect critique (technology)" in " ".join(stats.output.split())


def _arm(scores: tuple, suspect: str | None = None) -> ArmResult:
    s = Scores(*scores)
    return ArmResult("q_20261122T120000000000Z", (), "", s, s.mean, None, ArmUsage(100, 10, 3, 0.01), suspect)


def test_a_pair_with_a_suspect_arm_is_kept_but_not_measured() -> None:
    ledger = AbLedger(3)
    ledger.pairs += [
        AbPair(1, "q1?", "baseline", _arm((3, 3, 3, 3, 3)), _arm((4, 4, 4, 4, 4))),
        AbPair(2, "q2?", "adaptive", _arm((3, 3, 3, 3, 3)), _arm((4, 4, 4, 4, 4))),
        AbPair(3, "q3?", "baseline", _arm((3, 3, 3, 3, 3)), _arm(RAMP, "a ramp")),
    ]
    result = ab_result(ledger, ab_id="ab-x", started=NOW, questions_file="q.txt", settings=Settings(), complete=True)
    assert result.overall.n == 2 and result.overall.difference.delta == pytest.approx(1.0)
    assert len(result.pairs) == 3 and result.as_dict()["pairs"][2]["adaptive"]["suspect"] == "a ramp"


def test_the_same_vector_repeated_is_not_suspect_but_feeds_the_collapse_warning(tmp_path: Path) -> None:
    for i in range(6):
        put(tmp_path, make_critique(i, scores=(3, 4, 3, 3, 3)))
    stats = compute_stats(load_all(tmp_path, now=NOW))
    (domain,) = stats.domains
    assert domain.suspect == () and domain.collapse.collapsed
    assert any(w.startswith("mode collapse warning (technology)") for w in stats.warnings)
    selection = select_lessons(tmp_path, "technology", now=NOW, rng=random.Random(0), control_fraction=0.0)
    assert not [why for _, why in selection.excluded if why.startswith("suspect")]
