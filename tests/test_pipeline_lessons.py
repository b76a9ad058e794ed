"""Lessons from stored critiques reach the prompt of their own stage, and nothing else."""

from __future__ import annotations

import random

import yaml

from research_agent.pipeline import research
from tests.support.memory import NOW, make_critique, make_facts, put
from tests.support.pipeline import QUERY, DocsProvider, script, settings_for
from tests.support.research_responder import ResearchResponder


def seed_memory(meta, count=4, domain="technology"):
    """Critiques showing a planning weakness (missing counterarguments) and a site track record
    (docs.python.org kept, example.com dropped), with free text that must never reach a prompt."""
    ids = []
    facts = make_facts(sites=(("docs.python.org", 3, 0, 2), ("example.com", 0, 2, 0), ("other.org", 2, 3, 1)))
    for n in range(count):
        critique = make_critique(n, domain=domain, scores=(4, 4, 4, None, 4),
                                 tags=("missing_counterarguments", "geographic_bias"), facts=facts,
                                 weaknesses=("Leans on sources from one zebracountry only.",))
        put(meta, critique)
        ids.append(critique.id)
    return ids


async def test_each_prompt_gets_only_its_stage_lessons_and_the_report_names_them(tmp_path, scripted_model):
    settings = settings_for(tmp_path, control_fraction=0.0)
    ids = seed_memory(settings.meta_dir)
    script(scripted_model, ResearchResponder())
    result = await research(QUERY, settings=settings, model=scripted_model, providers=[DocsProvider(tmp_path)],
                            now=NOW, rng=random.Random(1))
    assert result.adaptive
    record = yaml.safe_load(result.run_record_path.read_text())
    applied = record["lessons"]["applied"]
    planning = [a for a in applied if a["stage"] == "decompose"]
    judging = [a for a in applied if a["stage"] == "relevance"]
    assert [a["key"] for a in planning] == ["counterarguments:missing"]
    assert [a["key"] for a in judging] == ["site:kept:docs.python.org", "site:dropped:example.com"]
    assert all(set(a) == {"key", "stage", "target", "text", "critique_ids"} for a in applied)
    assert all(a["critique_ids"] == ids for a in applied)
    decompose_prompts = [r.user for r in scripted_model.calls("decompose")]
    relevance_prompts = [r.user for r in scripted_model.calls("relevance")]
    for prompt in decompose_prompts:  # planning lessons only, each verbatim
        assert all(a["text"] in prompt for a in planning) and not any(a["text"] in prompt for a in judging)
    assert relevance_prompts
    for prompt in relevance_prompts:  # judging lessons only, each verbatim
        assert all(a["text"] in prompt for a in judging) and not any(a["text"] in prompt for a in planning)
    for stage in ("classify", "draft", "skeptic"):
        assert all("Lessons" not in r.user and "Lessons" not in r.system for r in scripted_model.calls(stage))
    # critique free text never reaches a prompt; a tag beside a null score gives no lesson
    assert not any("zebracountry" in r.user for r in scripted_model.requests)
    assert not any("region" in r.user for r in scripted_model.calls("decompose"))
    tail = result.report_markdown.rsplit("## Lessons Applied", 1)
    assert len(tail) == 2 and "## " not in tail[1], "Lessons Applied is the last section"
    assert "1. planning (decompose): Counterarguments were missing in 4 of the last 4 reports" in tail[1]
    assert "2. judging (relevance): docs.python.org: kept 12 of 12 pages" in tail[1]
    assert all(f"`{cid}`" in tail[1] for cid in ids)
    assert record["lessons"]["adaptive"] is True and record["lessons"]["withheld"] == []


async def test_no_lessons_until_three_critiques_and_no_empty_heading(tmp_path, scripted_model):
    settings = settings_for(tmp_path, control_fraction=0.0)
    seed_memory(settings.meta_dir, count=2)
    script(scripted_model, ResearchResponder())
    result = await research(QUERY, settings=settings, model=scripted_model, providers=[DocsProvider(tmp_path)],
                            now=NOW, rng=random.Random(1))
    assert not result.adaptive and "Lessons Applied" not in result.report_markdown


async def test_no_lessons_flag_makes_a_baseline_run(tmp_path, scripted_model):
    settings = settings_for(tmp_path, control_fraction=0.0, lessons=False)
    seed_memory(settings.meta_dir)
    script(scripted_model, ResearchResponder())
    result = await research(QUERY, settings=settings, model=scripted_model, providers=[DocsProvider(tmp_path)],
                            now=NOW, rng=random.Random(1))
    assert not result.adaptive and "Lessons Applied" not in result.report_markdown
    record = yaml.safe_load(result.run_record_path.read_text())
    assert "control" in record["lessons"]["reason"] or "baseline" in record["lessons"]["reason"]
    assert record["lessons"]["applied"] == []
    assert record["lessons"]["withheld"] == [
        "counterarguments:missing", "site:kept:docs.python.org", "site:dropped:example.com"
    ]
    assert not any("Counterarguments were missing" in r.user for r in scripted_model.requests)
