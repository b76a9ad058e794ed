"""Lessons from stored critiques reach the decompose and relevance prompts, and nothing else."""

from __future__ import annotations

import random

import yaml

from research_agent.pipeline import research
from tests.support.memory import NOW, make_critique, put
from tests.support.pipeline import QUERY, DocsProvider, script, settings_for
from tests.support.research_responder import ResearchResponder


def seed_memory(meta, count=4, domain="technology"):
    ids = []
    for n in range(count):
        critique = make_critique(n, domain=domain, scores=(4, 4, 4, 2, 4), tags=("geographic_bias",),
                                 weaknesses=("Leans on sources from one zebracountry only.",))
        put(meta, critique)
        ids.append(critique.id)
    return ids


async def test_lessons_go_into_decompose_and_relevance_and_the_report_names_them(tmp_path, scripted_model):
    settings = settings_for(tmp_path, control_fraction=0.0)
    ids = seed_memory(settings.meta_dir)
    script(scripted_model, ResearchResponder())
    result = await research(QUERY, settings=settings, model=scripted_model, providers=[DocsProvider(tmp_path)],
                            now=NOW, rng=random.Random(1))
    assert result.adaptive and result.lessons_applied
    lesson = result.lessons_applied[0]
    assert lesson in scripted_model.calls("decompose")[0].user
    assert all(lesson in r.user for r in scripted_model.calls("relevance"))
    for stage in ("classify", "draft", "skeptic"):
        assert all(lesson not in r.user and lesson not in r.system for r in scripted_model.calls(stage))
    # critique free text never reaches a prompt
    assert not any("zebracountry" in r.user for r in scripted_model.requests)
    tail = result.report_markdown.rsplit("## Lessons Applied", 1)
    assert len(tail) == 2 and "## " not in tail[1], "Lessons Applied is the last section"
    assert any(cid in tail[1] for cid in ids)
    record = yaml.safe_load(result.run_record_path.read_text())
    assert record["lessons"]["adaptive"] is True and record["lessons"]["applied"]


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
