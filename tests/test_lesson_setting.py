"""Lessons that fit the run's setting and evidence that can be trusted (issue 20, points 3, 6, 8;
issue 30, point 5): no site lesson over a corpus, cap-aware coverage, per_site that must add up,
suspect and unavailable runs."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from typer.testing import CliRunner

from research_agent.measures import SubQueryFacts
from research_agent.memory.critique.measured import MAX_SITES, measure_run
from research_agent.memory.effects.stats import compute_stats
from research_agent.memory.lessons.effects_view import lesson_effects
from research_agent.memory.lessons.select import select_lessons
from research_agent.memory.lessons.setting import NOT_OVER_CORPUS, RunSetting
from research_agent.memory.store.files import load_all
from research_agent.memory.store.names import corpus_id, local_site
from research_agent.record import RunRecord
from research_agent.record.types import CorpusRecord, SourceSummary, SubQueryCount
from tests.support.memory import NOW, make_critique, make_facts, put, put_raw
from tests.support.memory_cli import deps_for, root_app


def _select(meta: Path, setting: RunSetting | None, **kw):
    return select_lessons(meta, "technology", now=NOW, control_fraction=0.0, rng=random.Random(0), setting=setting, **kw)


def _narrow(site: str, n: int):
    """A critique whose kept pages all came from ``site`` (a breadth:sites weakness)."""
    return make_critique(n, facts=make_facts(sites=((site, 6, 1, 3),)), tags=("single_site",))


def test_no_site_lesson_is_built_from_or_offered_to_runs_over_a_corpus(tmp_path: Path) -> None:
    """Over the user's own documents every site is the user's choice: corpus runs build no site
    lesson (neither a track record nor the spread of sites), and a corpus run is offered none."""
    docs = tmp_path / "docs"
    (docs / "library").mkdir(parents=True)
    library, tutorial = local_site(corpus_id(docs), "library"), local_site(corpus_id(docs), "tutorial")
    meta = tmp_path / "reports" / "meta"
    for n in range(4):  # one folder supplied most kept pages, the other's pages were all dropped
        facts = make_facts(kept=6, sites=((library, 6, 0, 3), (tutorial, 0, 5, 0)))
        put(meta, make_critique(n, facts=facts, tags=("single_site",), scores=(2, 4, 4, 4, 4)))
    for setting in (None, RunSetting.of([docs], web=False), RunSetting(web=True)):
        keys = [x.key for x in _select(meta, setting).lessons]
        assert not [k for k in keys if k.startswith("site:") or k == "breadth:sites"], (setting, keys)
    # the same weaknesses in web runs teach site lessons, which only web runs get
    for n in range(10, 14):
        facts = make_facts(kept=6, sites=(("docs.python.org", 6, 0, 3), ("spam.example.com", 0, 5, 0)))
        put(meta, make_critique(n, facts=facts, tags=("single_site",), scores=(2, 4, 4, 4, 4)))
    web = [x.key for x in _select(meta, RunSetting(web=True)).lessons]
    assert {"breadth:sites", "site:kept:docs.python.org", "site:dropped:spam.example.com"} <= set(web)
    over_corpus = _select(meta, RunSetting.of([docs], web=False))
    assert not [x.key for x in over_corpus.lessons if x.key.startswith("site:") or x.key == "breadth:sites"]
    assert dict(over_corpus.excluded)["breadth:sites"] == NOT_OVER_CORPUS
    both = _select(meta, RunSetting.of([docs], web=True))  # a run over a corpus and the web gets the web's
    assert "breadth:sites" in [x.key for x in both.lessons]
    (lesson,) = [x for x in both.lessons if x.key == "breadth:sites"]
    assert "docs.python.org" not in lesson.text, "a planning prompt names no site"


def test_memory_lessons_says_what_a_corpus_run_would_not_get(tmp_path: Path) -> None:
    meta = tmp_path / "reports" / "meta"
    for n in range(4):
        facts = make_facts(kept=6, sites=(("docs.python.org", 6, 0, 3),))
        put(meta, make_critique(n, facts=facts, tags=("single_site", "missing_counterarguments")))
    docs = tmp_path / "docs"
    docs.mkdir()
    deps = deps_for(tmp_path / "reports")
    web = CliRunner().invoke(root_app(), ["memory", "lessons", "q", "--domain", "technology"], obj=deps)
    assert web.exit_code == 0, web.output
    assert "breadth:sites" in web.stdout and "does not get" not in web.stdout
    corpus = CliRunner().invoke(
        root_app(), ["memory", "lessons", "q", "--domain", "technology", "--corpus", str(docs)], obj=deps
    )
    assert corpus.exit_code == 0, corpus.output
    assert "counterarguments:missing" in corpus.stdout
    assert "a run over your own documents does not get: breadth:sites" in corpus.stdout
    missing = CliRunner().invoke(
        root_app(), ["memory", "lessons", "q", "--domain", "technology", "--corpus", str(tmp_path / "nope")], obj=deps
    )
    assert missing.exit_code != 0 and "Traceback" not in missing.output


def _record(root: Path, *, capped: bool, fetched: tuple[int, int]) -> RunRecord:
    sources = tuple(
        SourceSummary(n, f"t{n}", str(root / folder / f"{n}.md"), "", "local", 4, "", "kept", False, sub_queries=(1,))
        for n, folder in enumerate(("Guides", "guides", "api"), start=1)
    )
    return RunRecord(
        id="q_20261122T110000000000Z", query="q", mode="standard", domain="technology", started="2026-11-22T11:00:00Z",
        finished="2026-11-22T11:01:00Z", model="m", fast_model="m", report_path="r.md", gate_decision="full_report",
        gate_reason="", sub_queries=("first", "second"),
        sub_query_counts=(SubQueryCount(1, 5, fetched[0]), SubQueryCount(2, 4, fetched[1])),
        sources=sources, found_count=9, capped_by_user=capped, corpus=(CorpusRecord(str(root), 3, 3, 0, 0),),
    )  # fmt: skip


def test_corpus_facts_name_first_folders_under_the_corpus_id_and_the_cap_leaves_nothing_unanswered(tmp_path) -> None:
    root = tmp_path / "pg"
    facts = measure_run(_record(root, capped=True, fetched=(3, 0)), "# r\n", now=datetime.now(UTC))
    cid = corpus_id(root)
    assert facts.corpora == (cid,)
    assert [(p.site, p.kept) for p in facts.sites.per_site] == [(f"{cid}/guides", 2), (f"{cid}/api", 1)]
    assert not facts.sites.truncated and facts.per_site_problem() is None
    # the second sub-query found 4 and read none: the user's cap skipped it, so it is not unanswered
    assert facts.sub_queries[1] == SubQueryFacts(2, "second", found=4, kept=0, cited=0, fetched=0)
    assert facts.unanswered == 0 and facts.open_sub_queries == 0
    uncapped = measure_run(_record(root, capped=False, fetched=(3, 0)), "# r\n", now=datetime.now(UTC))
    assert uncapped.unanswered == 1


def test_a_capped_run_teaches_no_coverage_lesson_from_unfetched_sub_queries(tmp_path: Path) -> None:
    capped = make_facts(capped=True, sub_queries=((5, 2, 1), (5, 0, 0), (4, 0, 0)))
    unread = replace(capped, sub_queries=tuple(replace(q, fetched=0 if q.kept == 0 else 3) for q in capped.sub_queries))
    for n in range(4):
        put(tmp_path, make_critique(n, facts=unread))
    assert "coverage:unanswered" not in [x.key for x in _select(tmp_path, None).lessons]
    read = replace(capped, sub_queries=tuple(replace(q, fetched=3) for q in capped.sub_queries))
    for n in range(4):
        put(tmp_path, make_critique(n, facts=read))  # read, and still nothing kept: unanswered
    assert "coverage:unanswered" in [x.key for x in _select(tmp_path, None).lessons]


def test_per_site_must_add_up_and_is_cut_only_with_truncated(tmp_path: Path) -> None:
    sources = tuple(
        SourceSummary(n, "t", f"https://site{n}.example.org/p", f"site{n}.example.org", "ddgs", 4, "", "kept", False)
        for n in range(1, MAX_SITES + 6)
    )
    record = replace(_record(tmp_path / "c", capped=False, fetched=(3, 3)), sources=sources, corpus=())
    facts = measure_run(record, "# r\n", now=datetime.now(UTC))
    assert len(facts.sites.per_site) == MAX_SITES and facts.sites.truncated
    assert facts.per_site_problem() is None and facts.as_dict()["sites"]["truncated"] is True


def test_a_v2_critique_with_inconsistent_per_site_loads_counts_and_is_warned_about(tmp_path: Path) -> None:
    meta = tmp_path / "reports" / "meta"
    bad_sites = make_facts(kept=2, sites=(("docs.python.org", 5, 0, 3), ("a.example.org", 4, 0, 1)))
    v2 = replace(make_critique(0, facts=bad_sites, scores=(4, 4, 2, 4, 4)), schema_version=2)
    data = v2.as_dict()
    put_raw(meta, v2, lessons_withheld=[], facts=data["facts"])
    v3 = make_critique(1, facts=bad_sites)
    put_raw(meta, v3, facts=v3.as_dict()["facts"])
    loaded = {item.name: item for item in load_all(meta)}
    old = loaded[f"critique-{v2.id}.yaml"].critique
    assert old is not None and old.facts.sites.per_site == () and old.scores.coverage == 2
    assert old.load_notes == ("facts.sites.per_site ignored: its kept counts add up to 9, not to sources.kept (2)",)
    assert loaded[f"critique-{v3.id}.yaml"].critique is None, "version 3 must add up"
    assert compute_stats(load_all(meta)).domains[0].count == 1  # the v2 file still counts toward its scores
    shown = CliRunner().invoke(root_app(), ["memory", "validate"], obj=deps_for(tmp_path / "reports"))
    assert f"warning  critique-{v2.id}.yaml: facts.sites.per_site ignored" in shown.stdout
    assert "kept counts add up to 9, not to sources.kept (2), and truncated is not set" in shown.stdout


def test_suspect_critiques_and_runs_without_memory_teach_and_count_nothing(tmp_path: Path) -> None:
    for n in range(4):
        put(tmp_path, make_critique(n, tags=("missing_counterarguments",), suspect="no real words"))
    assert _select(tmp_path, None).lessons == ()
    assert "suspect: no real words" in dict(_select(tmp_path, None).excluded).values()
    for n in range(10, 13):
        put(tmp_path, make_critique(n, applied=("counterarguments:missing",), available=False))
        put(tmp_path, make_critique(20 + n, withheld=("counterarguments:missing",), suspect="repeats"))
    assert lesson_effects(tmp_path, now=NOW) == ()
