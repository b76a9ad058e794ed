"""`memory stats` shows the claim check's unsupported share over time, per domain (issue 22, point 3)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from typer.testing import CliRunner

from research_agent.cli.memory import app
from research_agent.measures import ClaimFacts
from research_agent.memory.effects.stats import compute_stats
from research_agent.memory.store.files import load_all
from tests.support.memory import NOW, make_critique, make_facts, put
from tests.support.memory_cli import deps_for


def checked(n: int, share: float | None, domain: str = "technology"):
    """The critique of run ``n`` (``n`` hours ago) whose claim check found ``share`` unsupported."""
    claims = ClaimFacts(0, 0, 0, 0, None) if share is None else ClaimFacts(20, 20 - round(20 * share), 0,
                                                                             round(20 * share), share)  # fmt: skip
    return make_critique(n, domain=domain, facts=dataclasses.replace(make_facts(), claims=claims))


def stored(tmp_path: Path) -> Path:
    meta = tmp_path / "reports" / "meta"
    meta.mkdir(parents=True)
    for n, share in [(6, 0.4), (5, 0.3), (4, None), (3, 0.2), (2, 0.1)]:  # oldest first: it falls over time
        put(meta, checked(n, share))
    put(meta, make_critique(7))  # a critique from before the check: no claims facts
    put(meta, checked(1, 0.5, domain="health"))
    return meta


def test_the_unsupported_share_is_averaged_over_runs_that_checked_claims_earlier_and_recent(tmp_path):
    stats = compute_stats(load_all(stored(tmp_path), now=NOW))
    trend = {d.domain: d.claims for d in stats.domains}
    tech = trend["technology"]
    assert (tech.runs, tech.mean, tech.earlier, tech.recent, tech.delta) == (4, 0.25, 0.35, 0.15, -0.2)
    health = trend["health"]
    assert (health.runs, health.mean, health.earlier, health.recent) == (1, 0.5, None, None)


def test_memory_stats_prints_it_per_domain_and_in_json(tmp_path):
    stored(tmp_path)
    deps = deps_for(tmp_path / "reports")
    text = CliRunner().invoke(app, ["stats"], obj=deps)
    assert text.exit_code == 0, text.output
    assert ("unsupported claims (technology): 25% of checked claims over 4 run(s); "
            "earlier half 35%, recent half 15%") in text.output  # fmt: skip
    assert "unsupported claims (health): 50% of checked claims over 1 run(s)\n" in text.output
    data = json.loads(CliRunner().invoke(app, ["stats", "--json"], obj=deps).output)
    by_domain = {d["domain"]: d["unsupported_share"] for d in data["domains"]}
    assert by_domain["technology"] == {"runs": 4, "mean": 0.25, "earlier": 0.35, "recent": 0.15, "delta": -0.2}


def test_a_domain_without_checked_claims_says_so(tmp_path):
    meta = tmp_path / "reports" / "meta"
    meta.mkdir(parents=True)
    put(meta, make_critique(1))
    text = CliRunner().invoke(app, ["stats"], obj=deps_for(tmp_path / "reports"))
    assert "unsupported claims (technology): no run checked its claims" in text.output
