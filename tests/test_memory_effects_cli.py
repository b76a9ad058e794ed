"""``memory effects`` (table and pure JSON) and ``memory validate`` on hand-edited critiques."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

from research_agent.cli.memory import MemoryDeps, app
from research_agent.memory.lessons.select import select_lessons
from tests.support.memory import NOW, make_critique, make_facts, put, put_raw
from tests.support.memory_cli import deps_for

COUNTER = "counterarguments:missing"


def invoke(args: list[str], deps: MemoryDeps):
    return CliRunner().invoke(app, args, obj=deps, env={"COLUMNS": "160"})


@pytest.fixture
def reports(tmp_path: Path) -> Path:
    (tmp_path / "reports" / "meta").mkdir(parents=True)
    return tmp_path / "reports"


def seed(meta: Path) -> None:
    for i, coverage in enumerate([4, 5, 4]):
        put(
            meta,
            make_critique(i, scores=(4, 4, coverage, 4, 4), applied=(COUNTER, "site:kept:docs.python.org")),
        )
    for i, coverage in enumerate([3, 3]):
        put(meta, make_critique(10 + i, scores=(4, 4, coverage, 4, 4), withheld=(COUNTER,)))
    put(meta, make_critique(20, domain="health", applied=(COUNTER,)))


def test_effects_json_is_pure_json_with_the_documented_fields(reports: Path) -> None:
    seed(reports / "meta")
    result = invoke(["effects", "--json"], deps_for(reports))
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    data = json.loads(result.stdout)  # stdout carries nothing else
    assert [(e["domain"], e["key"]) for e in data] == [
        ("health", COUNTER),
        ("technology", COUNTER),
        ("technology", "site:kept:docs.python.org"),
    ]
    for item in data:
        assert list(item) == [
            "key", "stage", "target", "text", "domain", "applied_runs", "baseline_runs",
            "mean_with", "mean_without", "delta", "interval", "method", "paired_questions", "confounded_with",
            "status", "score", "decided_on", "decided_after", "decided_at", "trial_runs", "more_runs", "reinstated",
            "fact_recall", "critic_tracking",
        ]  # fmt: skip
    counter = data[1]
    assert (counter["stage"], counter["target"], counter["status"]) == (
        "decompose",
        "scores.coverage",
        "measuring",
    )
    assert (counter["applied_runs"], counter["baseline_runs"]) == (3, 2)
    assert counter["mean_with"] == pytest.approx(13 / 3, abs=1e-4) and counter["mean_without"] == 3.0
    assert counter["delta"] == pytest.approx(4 / 3, abs=1e-4) and len(counter["interval"]) == 2
    site = data[2]
    assert (site["stage"], site["baseline_runs"], site["delta"], site["interval"]) == (
        "relevance",
        0,
        None,
        None,
    )
    only = json.loads(invoke(["effects", "--json", "--domain", "health"], deps_for(reports)).stdout)
    assert [(e["domain"], e["applied_runs"]) for e in only] == [("health", 1)]


def test_effects_table_and_bad_domain(reports: Path) -> None:
    seed(reports / "meta")
    result = invoke(["effects"], deps_for(reports))
    assert result.exit_code == 0, result.output
    for text in ("lesson effects in health", "lesson effects in technology", COUNTER, "site:kept:docs.python.org",
                 "measuring", "target coverage (higher is better)",
                 "with it 4.33 over 3 run(s); without it 3.00 over 2 run(s)", "delta +1.33", "unpaired", "mean score 4.07 with, 3.80 without",
                 "delta: with minus without"):  # fmt: skip
        assert text in result.stdout, text
    bad = invoke(["effects", "--domain", "cooking"], deps_for(reports))
    assert bad.exit_code == 2 and "error: unknown domain 'cooking'" in bad.stderr
    empty = invoke(["effects", "--domain", "business"], deps_for(reports))
    assert empty.exit_code == 0 and "no lesson has been given or withheld yet in business" in empty.stdout
    assert json.loads(invoke(["effects", "--json", "--domain", "business"], deps_for(reports)).stdout) == []


LESSON = {"key": COUNTER, "stage": "decompose", "text": "Counterarguments were missing."}
FACTS = make_facts().as_dict()


def _hand_edits() -> dict[str, tuple[dict, str]]:
    bad_host = {**FACTS, "sites": {**FACTS["sites"], "per_site": [
        {"site": "guides/../../etc", "kept": 3, "dropped": 0, "cited": 1}]}}  # fmt: skip
    port_host = {**FACTS, "sites": {**FACTS["sites"], "top": "evil.com:8080"}}
    return {
        "unknown key": ({"lessons_applied": [{**LESSON, "key": "style:short"}]},
                        "lessons_applied[0].key: 'style:short' has the wrong format"),
        "unknown stage": ({"lessons_applied": [{**LESSON, "stage": "draft"}]},
                          "lessons_applied[0].stage: 'draft' is not one of: decompose, relevance"),
        "wrong stage": ({"lessons_applied": [{**LESSON, "key": "site:kept:docs.python.org"}]},
                        "lessons_applied[0].stage: 'decompose' is the wrong stage for 'site:kept:docs.python.org' "
                        "(its lessons are for relevance)"),
        "unknown withheld key": ({"lessons_withheld": [{"key": "tone:friendly", "reason": "trial"}]},
                                 "lessons_withheld[0].key: 'tone:friendly' has the wrong format"),
        "negative count": ({"facts": {**FACTS, "sources": {**FACTS["sources"], "kept": -3}}},
                           "facts.sources.kept: -3 is below the minimum of 0"),
        "host outside the pattern": ({"facts": port_host}, "facts.sites.top: 'evil.com:8080' has the wrong format"),
        "folder leading out": ({"facts": bad_host},
                               "facts.sites.per_site[0].site: 'guides/../../etc' is not a host name or corpus folder; "
                               "facts.sites.per_site: kept counts add up to 3, not to sources.kept (6), and truncated "
                               "is not set"),
    }  # fmt: skip


def test_hand_edited_critiques_are_skipped_with_a_reason_and_never_feed_a_lesson(reports: Path) -> None:
    meta = reports / "meta"
    tags = ("missing_counterarguments",)
    for i in range(3):
        put(meta, make_critique(i, tags=tags, facts=make_facts()))
    expected = {}
    for n, (changes, reason) in enumerate(_hand_edits().values()):
        critique = make_critique(30 + n, tags=tags, facts=make_facts(), adaptive=True)
        expected[put_raw(meta, critique, **changes).name] = reason
    result = invoke(["validate"], deps_for(reports))
    assert result.exit_code == 1
    for name, reason in expected.items():
        assert f"invalid  {name}: {reason}" in result.stdout, reason
    assert (
        f"3 valid, {len(expected)} invalid (skipped: an invalid file never feeds a lesson)" in result.stdout
    )
    selection = select_lessons(meta, "technology", now=NOW, control_fraction=0.0, rng=random.Random(0))
    excluded = dict(selection.excluded)
    for name, reason in expected.items():
        assert excluded[name] == f"invalid: {reason}"
    (lesson,) = selection.lessons
    assert lesson.text.startswith("Counterarguments were missing in 3 of the last 3 reports")
    assert json.loads(invoke(["effects", "--json"], deps_for(reports)).stdout) == []
