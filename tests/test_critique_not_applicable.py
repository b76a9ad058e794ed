"""A score that does not apply: the critic may answer null for geographic_balance (only), the
file says ``geographic_balance: null``, the mean and pass use the other four, a
geographic_bias tag is dropped; the file's header explains all that and the file still loads."""

from __future__ import annotations

import asyncio
from pathlib import Path

import jsonschema
import pytest
import yaml
from typer.testing import CliRunner

from research_agent.cli.memory import app
from research_agent.config import Settings
from research_agent.llm.schema_bounds import bounds_over
from research_agent.memory.critique.judgement import ANSWER_SCHEMA, critique_run, summarize
from research_agent.memory.store.files import load_all, load_critique
from research_agent.memory.store.schema import DIMENSIONS
from tests.conftest import ScriptedModel
from tests.support.critique import ANSWER, RUN_ID, make_record
from tests.support.memory import NOW
from tests.support.memory_cli import deps_for

NOT_REGIONAL = {
    **ANSWER,
    "scores": {**ANSWER["scores"], "geographic_balance": None},
    "tags": ["geographic_bias", "single_site"],
}


def test_the_answer_schema_allows_null_for_geographic_balance_only() -> None:
    jsonschema.validate(NOT_REGIONAL, ANSWER_SCHEMA)
    for dimension in DIMENSIONS:
        if dimension != "geographic_balance":
            bad = {**ANSWER, "scores": {**ANSWER["scores"], dimension: None}}
            with pytest.raises(jsonschema.ValidationError):
                jsonschema.validate(bad, ANSWER_SCHEMA)
    assert ANSWER_SCHEMA["properties"]["scores"]["properties"]["geographic_balance"]["enum"] == [
        1,
        2,
        3,
        4,
        5,
        None,
    ]
    assert bounds_over(ANSWER_SCHEMA) == []  # safe for grammar decoders


async def test_null_geographic_balance_end_to_end(tmp_path: Path) -> None:
    path = make_record(tmp_path)
    model = ScriptedModel()  # validates the answer against the request's schema
    model.enqueue("critique", NOT_REGIONAL)
    critique = await critique_run(path, model, settings=Settings(), now=NOW)
    assert "null" in model.calls("critique")[0].system  # the rubric says when null is right

    assert critique.scores.geographic_balance is None
    assert critique.mean_score == 3.0  # (2 + 3 + 3 + 4) / 4: the null is not a zero
    assert critique.overall_pass is True
    assert "geographic_bias" not in critique.tags and "single_site" in critique.tags
    file = path.parent / f"critique-{RUN_ID}.yaml"
    text = file.read_text()
    assert "  geographic_balance: null\n" in text
    assert yaml.safe_load(text)["scores"]["geographic_balance"] is None
    assert load_critique(file) == critique
    assert "geographic balance n/a" in summarize(critique)


async def test_the_header_explains_scale_pass_rule_and_null_and_the_file_still_loads(tmp_path: Path) -> None:
    path = make_record(tmp_path)
    model = ScriptedModel()
    model.enqueue("critique", ANSWER)
    critique = await critique_run(path, model, settings=Settings(), now=NOW)
    text = (path.parent / f"critique-{RUN_ID}.yaml").read_text()
    header = text.split("schema_version:", 1)[0]
    assert header.startswith(f"# research-agent critique of {RUN_ID} (schema 3)\n")
    assert all(line.startswith("#") for line in header.splitlines())
    assert "1 (poor) through 3 (adequate) to 5 (excellent)" in header
    assert "null: the dimension does not apply" in header
    assert "mean is at least 3.0 and no applicable score is below 2" in header
    assert [item.critique for item in load_all(path.parent, now=NOW)] == [critique]


def test_memory_show_prints_facts_briefly_and_null_as_n_a(tmp_path: Path) -> None:
    path = make_record(tmp_path)
    model = ScriptedModel()
    model.enqueue("critique", NOT_REGIONAL)
    asyncio.run(critique_run(path, model, settings=Settings(), now=NOW))
    result = CliRunner().invoke(app, ["show", RUN_ID], obj=deps_for(tmp_path / "reports"))
    assert result.exit_code == 0, result.output
    out = result.output
    assert "  geographic_balance: n/a\n" in out and "mean_score: 3.0\n" in out
    assert "facts:\n  sources: found 5, read 5, kept 3, dropped 1, unscored 1, cited 3\n" in out
    assert "  sites: 2 distinct among kept; top vendor.com (67% of kept)\n" in out
    assert "    example.org: kept 0, dropped 1, cited 0\n" in out
    assert "  sub-queries: not recorded\n" in out  # an old record does not say which query found what
    assert "  recency: no kept source carries a date\n" in out
