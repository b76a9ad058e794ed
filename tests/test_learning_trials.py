"""Per-lesson trials through whole runs (issue 20): the lesson-following scripted model, the
production trial draw (a seeded ``random.Random`` per run, the default probability, nothing
rigged), real selection, real critiques.

Two lessons are always eligible together: following ``counterarguments:missing`` helps
(coverage 4 instead of 3); following ``primary:evidence`` harms (the plan chases a vendor
brochure; claim support 2 instead of 4). Because each is withheld on its own, ``memory
effects`` tells them apart: opposite signs, the harmful one retired (on the mean score), the
helpful one proven helpful, neither confounded with the other.
"""

from __future__ import annotations

import json
import random
from datetime import timedelta

import yaml
from typer.testing import CliRunner

from research_agent.cli.memory import MemoryDeps, app
from research_agent.config import Settings
from research_agent.memory.critique.judgement import critique_run
from research_agent.memory.lessons.trials import DEFAULT_TRIAL_PROBABILITY
from research_agent.pipeline import research
from tests.support.ab import QUESTIONS
from tests.support.lesson_follower import TwoLessonFollower, write_trial_corpus
from tests.support.memory import NOW, make_critique, put
from tests.support.pipeline import settings_for
from tests.support.responder_model import ResponderModel

COUNTER = "counterarguments:missing"
PRIMARY = "primary:evidence"
RUNS = 24


async def _runs(tmp_path, settings: Settings, model: ResponderModel) -> list[dict]:
    """``RUNS`` runs, each critiqued; their run records' lesson blocks."""
    blocks = []
    for i in range(RUNS):
        when = NOW + timedelta(minutes=10 * i)
        question = f"{QUESTIONS[i % 2]} (case {i % 6})"
        result = await research(question, settings=settings, model=model, now=when, rng=random.Random(i))
        await critique_run(result.run_record_path, model, settings=settings, now=when + timedelta(minutes=1))
        blocks.append(yaml.safe_load(result.run_record_path.read_text(encoding="utf-8"))["lessons"])
    return blocks


async def test_trials_tell_a_helpful_and_a_harmful_lesson_apart(tmp_path) -> None:
    meta = tmp_path / "reports" / "meta"
    for n in range(4):  # both weaknesses, in passing critiques: both lessons are built
        put(meta, make_critique(n, tags=("missing_counterarguments", "weak_primary_sources"), scores=(4, 4, 3, None, 4)))
    corpus = write_trial_corpus(tmp_path / "corpus")
    settings = settings_for(tmp_path).replace(corpus_dirs=(corpus,), search_providers=("local",))
    assert settings.trial_probability == DEFAULT_TRIAL_PROBABILITY == 0.5 and settings.control_fraction == 0.2
    blocks = await _runs(tmp_path, settings, ResponderModel(TwoLessonFollower()))

    trial_withheld = [w["key"] for b in blocks for w in b["withheld"] if w["reason"] == "trial"]
    assert COUNTER in trial_withheld and PRIMARY in trial_withheld, "each was withheld on its own"
    assert all("trial_seed" in b for b in blocks if b["adaptive"]), "the draw's seed is recorded"

    later = NOW + timedelta(days=1)
    deps = MemoryDeps(load_settings=lambda o: settings.replace(**o), clock=lambda: later)
    shown = CliRunner().invoke(app, ["effects", "--json"], obj=deps)
    assert shown.exit_code == 0, shown.output
    effects = {e["key"]: e for e in json.loads(shown.stdout)}
    helpful, harmful = effects[COUNTER], effects[PRIMARY]
    assert helpful["delta"] > 0 > harmful["delta"]
    assert harmful["status"] == "retired" and helpful["status"] == "helpful"
    assert helpful["confounded_with"] == [] and harmful["confounded_with"] == []
    assert min(harmful["applied_runs"], harmful["baseline_runs"]) >= 5
    table = CliRunner().invoke(app, ["effects"], obj=deps)
    assert "  primary:evidence: retired (not given)\n    retired on run " in table.stdout
    assert ": lowered the mean score by " in table.stdout
    # harm to the mean score retires it (its own target, claim support, had too few runs to decide);
    # a constant difference of whole points still has an interval of some width
    assert harmful["decided_on"] == "mean_score" and harmful["decided_after"] >= 10
    lo, hi = helpful["interval"]
    assert helpful["delta"] == 1.0 and lo < 1.0 < hi
