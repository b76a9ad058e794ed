"""The typed run record: one meaning per count, written and read back through one pair,
checked against the schema that ships with the package, and records of the old names."""

from __future__ import annotations

import fnmatch
import json
import re
import shutil
import tomllib
from pathlib import Path

import jsonschema
import pytest
import yaml
from typer.testing import CliRunner

from research_agent.config import Settings
from research_agent.errors import InputError
from research_agent.memory.critique.judgement import critique_run
from research_agent.memory.lessons.select import LessonSelection
from research_agent.memory.store.files import load_critique
from research_agent.pipeline import research
from research_agent.record import read_run_record, run_record_schema
from tests.conftest import INVALID, ScriptedModel
from tests.support.critique import ANSWER
from tests.support.memory import NOW
from tests.support.memory_cli import deps_for, root_app
from tests.support.pipeline import DOCS, QUERY, DocsProvider, queue, settings_for, source_entries, use
from tests.support.research_responder import ResearchResponder

OLD = Path(__file__).parent / "data" / "run_record_v1"  # written by the code before the renames
OLD_ID = "how-does-postgresql-vacuum-reclaim-space-from_20261122T133022505672Z"
# Long enough that the draft written from these sources is not far too short (a quarter of the target).
UNREAD = (
    "PostgreSQL VACUUM notes that the scorer never reads. They say that VACUUM ANALYZE also refreshes the "
    "planner statistics, so queries pick better plans after a large batch of updates or deletes."
)
OFF_TOPIC = {"gardening.md": ("Growing tomatoes", "Tomatoes need full sun, steady watering and staked support.")}


async def a_run(tmp_path: Path, model: ScriptedModel):
    """A run that keeps four sources, drops one (off topic) and cannot score one."""
    responder = ResearchResponder()
    docs = {**DOCS, **OFF_TOPIC, "unread.md": ("Unread", UNREAD)}

    def without_unread(request) -> dict:  # the batch's answer names every source but the unread one
        unread = re.search(r"^\[(\d+)\] Unread", request.user, re.M)
        answer = use(responder)(request)
        return {"scores": [s for s in answer["scores"] if unread is None or s["id"] != int(unread.group(1))]}

    queue(model, responder, relevance=[without_unread] + [INVALID] * 3)  # asked again alone: no answer
    return await research(
        QUERY, settings=settings_for(tmp_path), model=model, providers=[DocsProvider(tmp_path, docs)],
        lessons=lambda domain: LessonSelection.none(domain),
    )


async def test_counts_mean_the_same_in_the_run_record_and_its_critique(tmp_path, scripted_model):
    result = await a_run(tmp_path, scripted_model)
    record = result.record
    assert (record["kept_count"], record["dropped_count"], record["unscored_count"]) == (4, 1, 1)
    assert record["cited_count"] == len(source_entries(result.report_markdown))
    assert [s["status"] for s in record["sources"]].count("unscored") == 1

    critic = ScriptedModel().enqueue("critique", ANSWER)
    critique = await critique_run(result.run_record_path, critic, settings=Settings(), now=NOW)
    assert (critique.source_count, critique.dropped_count) == (record["kept_count"], record["dropped_count"])


async def test_the_record_a_run_writes_reads_back_as_it_was_written(tmp_path, scripted_model):
    result = await a_run(tmp_path, scripted_model)
    on_disk = yaml.safe_load(result.run_record_path.read_text(encoding="utf-8"))
    assert on_disk == result.record and on_disk["schema_version"] == 2
    again = read_run_record(result.run_record_path)
    assert again.as_dict() == result.record
    assert (again.kept_count, again.dropped_count, again.unscored_count) == (4, 1, 1)
    assert again.iterations == result.iterations and again.sources == result.sources
    assert set(on_disk["usage"]["relevance"]) == {"prompt_tokens", "completion_tokens", "calls", "retries", "cost_usd"}


def test_a_record_written_before_the_renames_reads_with_the_new_names() -> None:
    old = yaml.safe_load((OLD / f"run-{OLD_ID}.yaml").read_text(encoding="utf-8"))
    assert (old["schema_version"], old["source_count"], old["dropped_count"]) == (1, 4, 1)  # 1: the unscored one
    record = read_run_record(OLD / f"run-{OLD_ID}.yaml")
    assert (record.kept_count, record.dropped_count, record.unscored_count, record.cited_count) == (4, 0, 1, 4)
    assert record.cited_site_count == 4
    first = record.iterations[0]
    assert (first.scored_count, first.kept_count, first.critical_count, first.warning_count) == (5, 4, 1, 1)
    assert first.decision == "revise" and record.iterations[1].decision == "proceed"
    assert record.usage["relevance"].calls == 7 and record.usage["relevance"].retries == 2
    assert record.lessons.adaptive is False and record.lessons.reason == "lessons disabled"
    assert record.skeptic.findings[0].severity == "critical" and record.skeptic.viability == 82
    assert record.as_dict()["iterations"][0]["critical_count"] == 1


def test_critique_run_reads_a_record_written_before_the_renames(tmp_path: Path) -> None:
    meta = tmp_path / "reports" / "meta"
    meta.mkdir(parents=True)
    shutil.copy(OLD / f"run-{OLD_ID}.yaml", meta)
    shutil.copy(OLD / f"{OLD_ID}.md", tmp_path / "reports")  # the record names reports/<id>.md
    model = ScriptedModel().enqueue("critique", ANSWER)
    result = CliRunner().invoke(
        root_app(), ["critique", "--run", str(meta / f"run-{OLD_ID}.yaml"), "--json"],
        obj=deps_for(tmp_path / "reports", make_model=lambda settings: model),
    )
    assert result.exit_code == 0, result.output
    critique = load_critique(meta / f"critique-{OLD_ID}.yaml")
    assert (critique.source_count, critique.dropped_count) == (4, 0)
    assert json.loads(result.output)["id"] == OLD_ID


def _written(tmp_path: Path, change) -> Path:
    data = read_run_record(OLD / f"run-{OLD_ID}.yaml").as_dict()  # in the current names
    change(data)
    path = tmp_path / f"run-{OLD_ID}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.pop("sources"), "'sources' is a required property"),
        (lambda d: d.update(cost_usd=float("nan")), "cost_usd: nan is not a finite number"),
        (lambda d: d["sources"][0].update(status="maybe"), "sources[0].status: 'maybe' is not one of"),
        (lambda d: d["iterations"][0].pop("kept_count"), "iterations[0]: 'kept_count' is a required property"),
        (lambda d: d["usage"]["draft"].update(calls=-1), "usage.draft.calls: -1 is less than the minimum of 0"),
        (lambda d: d.update(schema_version=3), "schema_version: 3 is not one of [1, 2]"),
    ],
)
def test_a_run_record_that_breaks_its_schema_is_refused(tmp_path: Path, change, message: str) -> None:
    path = _written(tmp_path, change)
    with pytest.raises(InputError, match=r"^run record .*: ") as caught:
        read_run_record(path)
    assert message in str(caught.value)


def test_the_schema_ships_with_the_package_and_is_a_valid_schema() -> None:
    schema = run_record_schema()
    jsonschema.validators.validator_for(schema).check_schema(schema)
    pyproject = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = pyproject["tool"]["setuptools"]["package-data"]["research_agent"]
    assert any(fnmatch.fnmatch("record/record.schema.json", p) for p in patterns)
