"""Lessons from stored critiques reach the prompt of their own stage, and nothing else."""

from __future__ import annotations

import random

import yaml

from research_agent.memory.lessons.setting import NOT_OVER_CORPUS
from research_agent.memory.store.names import corpus_id, local_site
from research_agent.pipeline import research
from research_agent.run_refs import short_id
from tests.support.answers import scored_each
from tests.support.memory import NOW, make_critique, make_facts, put
from tests.support.pipeline import QUERY, DocsProvider, Recorded, script, settings_for
from tests.support.research_responder import ResearchResponder


def sites_of(root):
    """The run's corpus sites (the corpus is ``root``): its top, where the docs lie, and its reports folder."""
    corpus = corpus_id(root)
    return local_site(corpus, root.name), local_site(corpus, "reports")


def seed_memory(meta, count=4, domain="technology"):
    """Critiques showing a planning weakness (missing counterarguments), a judging one (press
    releases went with weakly supported citations), and site track records (of the run's own
    corpus, which build no lesson: the user chose those documents; and of a web site, whose lesson
    a corpus run does not get), with free text that must never reach a prompt."""
    ids = []
    here, reports = sites_of(meta.parent.parent)
    facts = make_facts(sites=((here, 3, 0, 2), (reports, 0, 2, 0), ("docs.python.org", 3, 0, 2)))
    for n in range(count):
        critique = make_critique(n, domain=domain, scores=(4, 4, 4, None, 4),
                                 tags=("missing_counterarguments", "geographic_bias", "press_release_heavy"),
                                 facts=facts,
                                 weaknesses=("Leans on sources from one zebracountry only.",))
        put(meta, critique)
        ids.append(critique.id)
    return ids


async def test_each_prompt_gets_only_its_stage_lessons_and_the_report_names_them(tmp_path, scripted_model):
    settings = settings_for(tmp_path, control_fraction=0.0, trial_probability=0.0)
    ids = seed_memory(settings.meta_dir)
    script(scripted_model, ResearchResponder())
    result = await research(QUERY, settings=settings, model=scripted_model, providers=[DocsProvider(tmp_path)],
                            now=NOW, rng=random.Random(1))
    assert result.adaptive
    record = yaml.safe_load(result.run_record_path.read_text())
    applied = record["lessons"]["applied"]
    planning = [a for a in applied if a["stage"] == "decompose"]
    judging = [a for a in applied if a["stage"] == "relevance"]
    here, reports = sites_of(tmp_path)
    assert [a["key"] for a in planning] == ["counterarguments:missing"]
    # no site lesson over a corpus: its own folders build none, and a web site's is not offered
    assert [a["key"] for a in judging] == ["source-kind:press-release"]
    excluded = {e["file"]: e["reason"] for e in record["lessons"]["excluded"]}
    assert excluded["site:kept:docs.python.org"] == NOT_OVER_CORPUS
    assert not [key for key in excluded if here in key or reports in key]
    assert all(set(a) == {"key", "stage", "target", "text", "critique_ids", "p"} for a in applied)
    assert all(a["critique_ids"] == ids for a in applied)
    decompose_prompts = [r.user for r in scripted_model.calls("decompose")]
    relevance_prompts = [r.user for r in scripted_model.calls("relevance")]
    for prompt in decompose_prompts:  # planning lessons only, each verbatim
        assert all(a["text"] in prompt for a in planning) and not any(a["text"] in prompt for a in judging)
    assert relevance_prompts
    for prompt in relevance_prompts:  # judging lessons only, each verbatim
        assert all(a["text"] in prompt for a in judging) and not any(a["text"] in prompt for a in planning)
    for stage in ("draft", "skeptic"):
        assert all("Lessons" not in r.user and "Lessons" not in r.system for r in scripted_model.calls(stage))
    # critique free text never reaches a prompt; a tag beside a null score gives no lesson
    assert not any("zebracountry" in r.user for r in scripted_model.requests)
    assert not any("region" in r.user for r in scripted_model.calls("decompose"))
    tail = result.report_markdown.rsplit("## Lessons Applied", 1)
    assert len(tail) == 2 and "## " not in tail[1], "Lessons Applied is the last section"
    assert "1. planning (decompose): Counterarguments were missing in 4 of the last 4 reports" in tail[1]
    assert "2. judging (relevance): Press releases and marketing pages went with weakly supported" in tail[1]
    assert all(f"`{short_id(cid)}`" in tail[1] and cid not in tail[1] for cid in ids), "short ids, not 70 characters"
    assert record["lessons"]["adaptive"] is True and record["lessons"]["withheld"] == []


async def test_no_lessons_until_three_critiques_and_no_empty_heading(tmp_path, scripted_model):
    settings = settings_for(tmp_path, control_fraction=0.0, trial_probability=0.0)
    seed_memory(settings.meta_dir, count=2)
    script(scripted_model, ResearchResponder())
    result = await research(QUERY, settings=settings, model=scripted_model, providers=[DocsProvider(tmp_path)],
                            now=NOW, rng=random.Random(1))
    assert not result.adaptive and "Lessons Applied" not in result.report_markdown


async def test_no_lessons_flag_makes_a_baseline_run(tmp_path, scripted_model):
    settings = settings_for(tmp_path, control_fraction=0.0, lessons=False, trial_probability=0.0)
    seed_memory(settings.meta_dir)
    script(scripted_model, ResearchResponder())
    result = await research(QUERY, settings=settings, model=scripted_model, providers=[DocsProvider(tmp_path)],
                            now=NOW, rng=random.Random(1))
    assert not result.adaptive and "Lessons Applied" not in result.report_markdown
    record = yaml.safe_load(result.run_record_path.read_text())
    assert "control" in record["lessons"]["reason"] or "baseline" in record["lessons"]["reason"]
    assert record["lessons"]["applied"] == []
    assert record["lessons"]["withheld"] == [
        {"key": key, "reason": "no_lessons"} for key in ("counterarguments:missing", "source-kind:press-release")
    ]
    assert not any("Counterarguments were missing" in r.user for r in scripted_model.requests)


def seed_health(meta, count=3):
    """Passing health critiques whose runs cited outdated sources (a planning lesson on recency)."""
    for n in range(count):
        facts = make_facts(median_age_days=2000, oldest_year=2009)
        put(meta, make_critique(n, domain="health", query=f"health question {n}", tags=("outdated_sources",),
                                facts=facts))


async def test_the_first_plan_names_the_domain_and_only_that_domains_lessons_are_applied(tmp_path, scripted_model):
    settings = settings_for(tmp_path, control_fraction=0.0, trial_probability=0.0)
    seed_memory(settings.meta_dir)  # technology: counterarguments, site records
    seed_health(settings.meta_dir)  # health: recency
    script(scripted_model, ResearchResponder(domain="health"))
    result = await research(QUERY, settings=settings, model=scripted_model, providers=[DocsProvider(tmp_path)],
                            now=NOW, rng=random.Random(1))

    (first_plan,) = scripted_model.calls("decompose")
    offered = first_plan.user.split("ignore the others:", 1)[1]
    health, technology = offered.split("\nhealth:\n", 1)[1], offered.split("\ntechnology:\n", 1)[1]
    assert "developments of the last year" in health.split("\ntechnology:", 1)[0]
    assert "Counterarguments were missing" in technology.split("\nhealth:", 1)[0]
    assert "classify" not in {r.stage for r in scripted_model.requests}, "no round of its own for the domain"

    record = yaml.safe_load(result.run_record_path.read_text())
    assert result.domain == record["domain"] == "health" and result.adaptive
    assert [a["key"] for a in record["lessons"]["applied"]] == ["recency:old-sources"]
    lessons = result.report_markdown.rsplit("## Lessons Applied", 1)[1]
    here, _ = sites_of(tmp_path)
    assert "earlier health reports" in lessons and "Counterarguments" not in lessons and here not in lessons
    assert not any(here in r.user for r in scripted_model.calls("relevance")), "technology's judging lessons stay out"


async def test_a_replan_is_given_only_the_chosen_domains_planning_lessons(tmp_path, scripted_model):
    settings = settings_for(tmp_path, control_fraction=0.0, trial_probability=0.0)
    seed_memory(settings.meta_dir)
    seed_health(settings.meta_dir)
    responder = ResearchResponder(domain="technology")

    def use(request):
        return responder.answer(request.stage, request.system, request.user)

    scripted_model.enqueue("decompose", use, times=2)
    scripted_model.enqueue("relevance", scored_each({"score": 1, "reason": "off topic"}))  # one batch; the replan finds no new source
    result = await research(QUERY, settings=settings.replace(max_plans=2), model=scripted_model,
                            providers=[DocsProvider(tmp_path)], now=NOW, rng=random.Random(1))
    assert result.gate_decision == "no_new_findings" and result.domain == "technology"
    first, second = scripted_model.calls("decompose")
    assert "\nhealth:\n" in first.user and "developments of the last year" in first.user
    assert "Counterarguments were missing" in second.user and "developments of the last year" not in second.user
    assert "question's domain" not in second.user, "the domain is named once, by the first plan"


async def test_the_progress_line_and_the_report_say_what_the_run_got(tmp_path, scripted_model):
    """Every lesson drawn out for its trial: the run says so, and the report names them."""
    settings = settings_for(tmp_path, control_fraction=0.0, trial_probability=1.0)
    seed_memory(settings.meta_dir)
    script(scripted_model, ResearchResponder())
    progress = Recorded()
    result = await research(QUERY, settings=settings, model=scripted_model, providers=[DocsProvider(tmp_path)],
                            now=NOW, rng=random.Random(1), progress=progress)  # fmt: skip
    assert "lessons: 0 given, 2 withheld for their trial" in progress.notes
    tail = result.report_markdown.rsplit("## Lessons Applied", 1)[1]
    assert "Withheld for their trial" in tail
    assert "`counterarguments:missing`, `source-kind:press-release`" in tail
    record = yaml.safe_load(result.run_record_path.read_text())
    assert record["lessons"]["withheld"] == [
        {"key": key, "reason": "trial", "p": 1.0} for key in ("counterarguments:missing", "source-kind:press-release")
    ]


async def test_a_control_run_says_it_was_one(tmp_path, scripted_model):
    settings = settings_for(tmp_path, control_fraction=1.0)
    seed_memory(settings.meta_dir)
    script(scripted_model, ResearchResponder())
    progress = Recorded()
    result = await research(QUERY, settings=settings, model=scripted_model, providers=[DocsProvider(tmp_path)],
                            now=NOW, rng=random.Random(1), progress=progress)  # fmt: skip
    assert not result.adaptive
    assert "control run: no lessons, to measure whether they help" in progress.notes
    tail = result.report_markdown.rsplit("## Lessons Applied", 1)[1]
    assert "This run was a control run" in tail and "whether lessons help" in tail
