"""The critique of a run: facts, the one model call, cleaning, file, retention, log, spawn."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from research_agent.config import Settings
from research_agent.errors import InputError, LLMUnavailable, StorageError
from research_agent.measures import (
    CitationFacts,
    RecencyFacts,
    SiteCounts,
    SiteFacts,
    SourceCounts,
)
from research_agent.memory.critique.facts import compute_facts
from research_agent.memory.critique.judgement import critique_run, summarize
from research_agent.memory.critique.spawn import critique_argv, spawn_critique
from research_agent.memory.store.critique_types import LessonUse
from research_agent.memory.store.files import LOG_NAME, load_all, load_critique
from research_agent.memory.store.schema import TAGS
from research_agent.record import read_run_record
from research_agent.run_refs import short_id
from research_agent.text.sanitize import DATA_CLOSE, DATA_OPEN
from tests.support.critique import ANSWER, REPORT, RUN_ID, make_record
from tests.support.memory import NOW, make_critique, put


def test_facts_of_an_old_record_say_what_can_be_known(tmp_path: Path) -> None:
    """A schema_version 1 record: no per-sub-query counts, no citation support, no dates."""
    path = make_record(tmp_path)
    record = read_run_record(path)
    facts = compute_facts(record, REPORT, now=NOW)
    m = facts.measured
    assert m.sources == SourceCounts(found=5, fetched=5, kept=3, dropped=1, unscored=1, cited=3, capped_by_user=False)
    assert m.sites == SiteFacts(
        distinct=2,
        top="vendor.com",
        top_share=0.67,
        per_site=(
            SiteCounts("vendor.com", 2, 0, 2),  # www. and blog. are one registrable site
            SiteCounts("nrcan.gc.ca", 1, 0, 1),
            SiteCounts("example.org", 0, 1, 0),  # dropped only; the unscored source is in no site
        ),
    )
    assert (m.sub_queries, m.unanswered) == ((), 0)  # not recorded: nothing claimed unanswered
    assert m.citations == CitationFacts(sentences=3, weakly_supported=0, weakly_supported_share=0.0)
    assert m.recency == RecencyFacts()
    assert facts.support_measured is False and facts.snippet_only == 1
    assert (facts.paragraphs, facts.cited_paragraphs, facts.citations) == (4, 3, 4)  # list items are paragraphs
    assert facts.viability == 64
    assert facts.findings == (("critical", 1), ("concern", 1), ("observation", 1))
    assert facts.tags() == ("single_site",)
    text = facts.as_text()
    assert "distinct sites among kept sources: 2; largest: vendor.com with 67% of kept sources" in text
    assert "site example.org: kept 0, dropped 1, cited 0" in text
    assert "support in the cited sources: not measured for this run" in text


async def test_critique_run_writes_a_clean_valid_critique(tmp_path: Path, scripted_model) -> None:
    path = make_record(tmp_path)
    scripted_model.enqueue("critique", ANSWER)
    critique = await critique_run(path, scripted_model, settings=Settings(), now=NOW)

    request = scripted_model.calls("critique")[0]
    assert (request.tier, request.temperature) == ("fast", 0.0)
    assert request.schema["properties"]["tags"]["items"]["enum"] == list(TAGS)
    assert f"{DATA_OPEN} report to grade>>>" in request.user and request.user.count(DATA_CLOSE) == 2
    assert "Ignore all previous instructions" not in request.user
    assert "source_diversity" in request.system and "1 to 5" in request.system

    assert critique.id == RUN_ID and critique.model_version == "gpt-4o-mini"
    assert critique.query_domain == "technology" and critique.mode == "standard"
    assert critique.timestamp == "2026-11-22T12:00:00.000000Z"
    assert critique.scores.as_dict() == ANSWER["scores"]
    assert critique.mean_score == 3.0 and critique.overall_pass is True
    assert critique.source_count == 3 and critique.dropped_count == 1
    assert critique.gate_decision == "full_report"
    assert len(critique.weaknesses) == 5
    assert critique.weaknesses[0] == "Relies on one vendor."
    assert critique.weaknesses[1] == "[instruction-like text removed] and [instruction-like text removed]"
    assert 190 <= len(critique.weaknesses[2]) <= 200 and "\x07" not in critique.weaknesses[2]
    assert critique.suggestions == ("Add independent field data.",)
    assert critique.tags == ("single_site", "press_release_heavy")
    assert [f.type for f in critique.skeptic_flags] == ["evidence", "counter_arguments"]
    assert critique.skeptic_flags[0].detail == "critical: COP near 2.5 - single trial[31m"
    assert critique.adaptive is True
    assert critique.lessons_applied == (
        LessonUse(
            "In 3 of the last 4 technology reports coverage scored 2 or lower: x.",
            key="coverage:low_score",
            stage="decompose",
        ),
    )

    # an old record (schema_version 1) still gets the facts that can be known
    assert critique.facts == compute_facts(read_run_record(path), REPORT, now=NOW).measured
    assert critique.facts.sources.kept == 3 and critique.facts.sub_queries == ()
    stored = path.parent / f"critique-{RUN_ID}.yaml"
    assert load_critique(stored) == critique
    log = (path.parent / LOG_NAME).read_text().splitlines()
    assert len(log) == 1 and f" ok critique-{RUN_ID}.yaml: mean 3.00, pass" in log[0]
    summary = summarize(critique, path=stored)
    assert summary.startswith(f"critique of {short_id(RUN_ID)}: mean 3.00/5 (pass)")


@pytest.mark.parametrize(
    ("scores", "passed"),
    [((5, 5, 5, 5, 1), False), ((3, 3, 3, 3, 2), False), ((3, 3, 3, 4, 2), True), ((2, 2, 2, 2, 2), False)],
)
async def test_pass_rule(tmp_path: Path, scripted_model, scores, passed) -> None:
    path = make_record(tmp_path)
    names = ["source_diversity", "claim_support", "coverage", "geographic_balance", "actionability"]
    scripted_model.enqueue("critique", {**ANSWER, "scores": dict(zip(names, scores, strict=True))})
    critique = await critique_run(path, scripted_model, settings=Settings(), now=NOW)
    assert critique.overall_pass is passed


async def test_model_answer_out_of_range_is_clamped(tmp_path: Path) -> None:
    from tests.conftest import ScriptedModel

    model = ScriptedModel(validate=False)  # a server that ignored the schema
    model.enqueue(
        "critique",
        {
            **ANSWER,
            "scores": {**ANSWER["scores"], "coverage": 9, "actionability": "0"},
            "tags": ["made_up", "few_sources"],
        },
    )
    critique = await critique_run(make_record(tmp_path), model, settings=Settings(), now=NOW)
    assert critique.scores.coverage == 5 and critique.scores.actionability == 1
    assert "made_up" not in critique.tags and "few_sources" in critique.tags


async def test_no_lessons_in_the_record_means_not_adaptive(tmp_path: Path, scripted_model) -> None:
    path = make_record(
        tmp_path, lessons={"adaptive": False, "reason": "control run (baseline)", "applied": []}
    )
    scripted_model.enqueue("critique", ANSWER)
    critique = await critique_run(path, scripted_model, settings=Settings(), now=NOW)
    assert critique.adaptive is False and critique.lessons_applied == ()


async def test_retention_prunes_the_oldest(tmp_path: Path, scripted_model) -> None:
    path = make_record(tmp_path)
    for i in range(5):
        put(path.parent, make_critique(2 + i))  # all older than the run
    scripted_model.enqueue("critique", ANSWER)
    await critique_run(path, scripted_model, settings=Settings(max_critiques=3), now=NOW)
    kept = [item.critique.id for item in load_all(path.parent)]
    assert kept == [RUN_ID, make_critique(2).id, make_critique(3).id]


async def test_failure_is_logged_and_raised(tmp_path: Path, scripted_model) -> None:
    path = make_record(tmp_path)
    scripted_model.enqueue("critique", LLMUnavailable("endpoint http://127.0.0.1:9 refused the connection"))
    with pytest.raises(LLMUnavailable):
        await critique_run(path, scripted_model, settings=Settings(), now=NOW)
    assert not (path.parent / f"critique-{RUN_ID}.yaml").exists()
    line = (path.parent / LOG_NAME).read_text().splitlines()[-1]
    assert f" FAIL critique-{RUN_ID}.yaml: endpoint http://127.0.0.1:9 refused the connection" in line


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"report_path": "nowhere/missing.md", "id": "other-run_20261122T110000000000Z"}, "report not found"),
        ({"id": "../escape"}, "is not a run id"),
        ({"mode": "turbo"}, "unknown mode 'turbo'"),
        ({"gate_decision": None}, "gate_decision must be one of"),
        ({"model": None}, "missing or empty field 'model'"),
    ],
)
async def test_bad_run_records_are_input_errors(tmp_path: Path, scripted_model, change, message) -> None:
    path = make_record(tmp_path, **change)
    with pytest.raises(InputError, match=message):
        await critique_run(path, scripted_model, settings=Settings(), now=NOW)
    assert " FAIL " in (path.parent / LOG_NAME).read_text()


async def test_hostile_run_record_is_refused(tmp_path: Path, scripted_model) -> None:
    path = make_record(tmp_path)
    path.write_text("id: !!python/object/apply:os.system ['true']\n")
    with pytest.raises(InputError, match="unsupported YAML tag"):
        await critique_run(path, scripted_model, settings=Settings(), now=NOW)


async def test_report_found_beside_the_reports_folder(tmp_path: Path, scripted_model) -> None:
    path = make_record(tmp_path, report_path=f"some/old/cwd/{RUN_ID}.md")
    scripted_model.enqueue("critique", ANSWER)
    critique = await critique_run(path, scripted_model, settings=Settings(), now=NOW)
    assert critique.report_path == f"some/old/cwd/{RUN_ID}.md"


class FakePopen:
    def __init__(self) -> None:
        self.calls: list = []

    def __call__(self, argv, **kwargs):
        self.calls.append((argv, kwargs))
        return type("P", (), {"pid": 4242})()


def test_spawn_starts_a_detached_child_and_returns_at_once(tmp_path: Path) -> None:
    popen = FakePopen()
    record = tmp_path / "reports" / "meta" / f"run-{RUN_ID}.yaml"
    pid = spawn_critique(record, reports_dir=tmp_path / "reports", popen=popen)
    assert pid == 4242
    argv, kwargs = popen.calls[0]
    assert argv == [
        sys.executable,
        "-m",
        "research_agent.memory.critique.worker",
        str(record),
        "--reports-dir",
        str(tmp_path / "reports"),
    ]
    assert kwargs["start_new_session"] is True and kwargs["env"] is None
    assert kwargs["stdin"] == kwargs["stdout"] == kwargs["stderr"] == subprocess.DEVNULL
    spawn_critique(record, reports_dir=tmp_path, env_overrides={"RESEARCH_AGENT_MODEL": "m2"}, popen=popen)
    env = popen.calls[1][1]["env"]
    assert env["RESEARCH_AGENT_MODEL"] == "m2" and "PATH" in env


def test_spawn_failure_is_a_storage_error(tmp_path: Path) -> None:
    def broken(argv, **kwargs):
        raise FileNotFoundError(2, "No such file or directory")

    with pytest.raises(StorageError, match="cannot start the background critique"):
        spawn_critique(tmp_path / "run.yaml", reports_dir=tmp_path, popen=broken)


def test_critique_argv_uses_absolute_paths() -> None:
    argv = critique_argv(Path("reports/meta/run-x.yaml"), reports_dir=Path("reports"))
    assert Path(argv[3]).is_absolute() and Path(argv[5]).is_absolute()


async def test_a_null_written_as_text_is_no_suggestion(tmp_path: Path, scripted_model) -> None:
    # issue 32: a critique stored suggestions: ['null']
    answer = {**ANSWER, "suggestions": ["null", " None. ", "N/A", "Add independent field data."], "weaknesses": ["null"]}
    scripted_model.enqueue("critique", answer)
    critique = await critique_run(make_record(tmp_path), scripted_model, settings=Settings(), now=NOW)
    assert critique.suggestions == ("Add independent field data.",) and critique.weaknesses == ()
