"""Measuring an A/B: which pairs count for which measure, and which way is better."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from typer.testing import CliRunner

from research_agent.cli.memory import app
from research_agent.config import Settings
from research_agent.measures import (
    CitationFacts,
    CritiqueFacts,
    RecencyFacts,
    SiteFacts,
    SourceCounts,
)
from research_agent.memory.effects.ab import AbLedger, ab_result, save_ab
from research_agent.memory.effects.ab_measure import dimension_measures, fact_measures, overall_measure
from research_agent.memory.effects.ab_types import AbPair, ArmResult, ArmUsage
from research_agent.memory.lessons.select import select_lessons
from research_agent.memory.store.critique_types import Scores
from research_agent.memory.store.files import load_all, prune_critiques
from tests.support.memory import NOW, make_critique, put
from tests.support.memory_cli import deps_for


def facts(*, weak: float, unanswered: int, sites: int) -> CritiqueFacts:
    return CritiqueFacts(
        sources=SourceCounts(found=10, fetched=9, kept=6, dropped=3, unscored=0, cited=5),
        sites=SiteFacts(distinct=sites, top="docs.python.org", top_share=0.5),
        sub_queries=(),
        unanswered=unanswered,
        citations=CitationFacts(sentences=10, weakly_supported=round(weak * 10), weakly_supported_share=weak),
        recency=RecencyFacts(),
    )


def arm(scores: tuple, found: CritiqueFacts | None = None, *, tokens: int = 100, cost: float | None = 0.01) -> ArmResult:
    s = Scores(*scores)
    return ArmResult(
        run_id="q_20261122T120000000000Z",
        lessons=(),
        lessons_reason="",
        scores=s,
        mean_score=s.mean,
        facts=found,
        usage=ArmUsage(run_tokens=tokens, critique_tokens=10, calls=3, cost_usd=cost),
    )


def pair(index: int, baseline: ArmResult, adaptive: ArmResult) -> AbPair:
    return AbPair(index, f"question {index}?", "baseline", baseline, adaptive)


def test_a_null_geography_in_either_arm_drops_that_pair_for_geography_only():
    pairs = [
        pair(1, arm((3, 3, 3, 3, 3)), arm((4, 3, 4, 4, 3))),
        pair(2, arm((3, 3, 3, None, 3)), arm((4, 3, 4, 5, 3))),  # baseline: geography not applicable
        pair(3, arm((3, 3, 2, 2, 3)), arm((3, 3, 4, None, 3))),  # adaptive: not applicable
    ]
    measures = {m.name: m for m in dimension_measures(pairs)}
    geography = measures["geographic_balance"].difference
    assert measures["geographic_balance"].n == 1 and geography.delta == 1 and geography.interval is None
    assert (geography.mean_without, geography.mean_with) == (3, 4)
    coverage = measures["coverage"]
    assert coverage.n == 3 and coverage.difference.delta == pytest.approx((1 + 1 + 2) / 3)
    assert all(measures[d].n == 3 for d in ("source_diversity", "claim_support", "actionability"))
    # the mean score is over each critique's applicable dimensions
    assert overall_measure(pairs).n == 3


def test_facts_count_only_pairs_where_both_critiques_carry_them_and_positive_always_means_better():
    pairs = [
        pair(1, arm((3,) * 5, facts(weak=0.4, unanswered=2, sites=1)), arm((3,) * 5, facts(weak=0.1, unanswered=0, sites=3))),
        pair(2, arm((3,) * 5, facts(weak=0.3, unanswered=1, sites=2)), arm((3,) * 5, facts(weak=0.2, unanswered=1, sites=2))),
        pair(3, arm((3,) * 5, None), arm((3,) * 5, facts(weak=0.0, unanswered=0, sites=9))),  # a version-1 critique
    ]
    measures = {m.name: m for m in fact_measures(pairs)}
    weak, unanswered, sites = (measures[k] for k in ("citations.weakly_supported_share", "unanswered", "sites.distinct"))
    assert weak.n == unanswered.n == sites.n == 2
    assert weak.better == unanswered.better == "lower" and sites.better == "higher"
    # fewer weak citations and fewer unanswered sub-queries in the adaptive arm: positive deltas
    assert weak.difference.delta == pytest.approx(0.2) and weak.as_dict()["baseline"] == pytest.approx(0.35)
    assert weak.as_dict()["adaptive"] == pytest.approx(0.15)
    assert unanswered.difference.delta == pytest.approx(1.0)
    lo, hi = unanswered.difference.interval
    assert lo < 1.0 < hi
    assert sites.difference.delta == pytest.approx(1.0)


def test_cost_is_unknown_when_any_price_was_and_tokens_add_up(tmp_path):
    ledger = AbLedger(3)
    ledger.pairs += [
        pair(1, arm((3,) * 5, tokens=100), arm((3,) * 5, tokens=200)),
        pair(2, arm((3,) * 5, tokens=100), arm((3,) * 5, tokens=200, cost=None)),
    ]
    result = ab_result(ledger, ab_id="ab-x", started=NOW, questions_file="q.txt", settings=Settings(), complete=False)
    assert result.baseline_usage.tokens == 220 and result.baseline_usage.cost_usd == pytest.approx(0.02)
    assert result.adaptive_usage.tokens == 420 and result.adaptive_usage.cost_usd is None
    data = result.as_dict()
    assert data["usage"]["adaptive"]["cost_usd"] is None and data["complete"] is False
    assert {"pairs", "dimensions", "facts"} <= set(data)


def test_ab_files_are_not_critiques_to_memory(tmp_path):
    """memory list/validate/prune and lesson selection neither read nor count ab-*.yaml files."""
    reports = tmp_path / "reports"
    meta = reports / "meta"
    for n in range(4):
        put(meta, make_critique(n, tags=("missing_counterarguments",)))
    ledger = AbLedger(1)
    ledger.pairs.append(pair(1, arm((3,) * 5), arm((4,) * 5)))
    result = ab_result(ledger, ab_id="ab-x", started=NOW, questions_file="q.txt", settings=Settings(), complete=True)
    path = save_ab(meta / "ab-20261122T115900000000Z.yaml", result)
    runner = CliRunner()
    validate = runner.invoke(app, ["validate"], obj=deps_for(reports))
    assert validate.exit_code == 0 and "4 valid, 0 invalid" in validate.output and "ab-" not in validate.output
    assert all(item.ok for item in load_all(meta, now=NOW)) and len(load_all(meta, now=NOW)) == 4
    assert prune_critiques(meta, 2, now=NOW) and path.exists()
    selection = select_lessons(meta, "technology", now=NOW + timedelta(minutes=1), control_fraction=0.0,
                               rng=random.Random(0))
    assert not any(name.startswith("ab-") for name, _ in selection.excluded)
