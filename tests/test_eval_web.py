"""The workbench's read-only eval pages: ``/evals`` lists the evals of the reports folder, ``/evals/<id>``
shows one scorecard with a link to each report; planted or broken scorecards are escaped or named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from research_agent.cli.eval import app
from tests.support.batch import batch_deps
from tests.support.eval_writers import CopyingResponder
from tests.support.responder_model import ResponderModel
from tests.support.web import in_process, options_for


@pytest.fixture
def an_eval(tmp_path: Path) -> dict:
    """An eval of the built-in world's first 3 questions (made before the test's event loop runs)."""
    model = ResponderModel(CopyingResponder())
    result = CliRunner().invoke(app, ["run", "--json", "--limit", "3", "--no-critique"], obj=batch_deps(tmp_path, model))
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


async def test_the_evals_page_lists_each_eval_and_its_page_shows_the_scorecard(tmp_path: Path, an_eval: dict) -> None:
    data = an_eval
    async with in_process(options_for(tmp_path)) as web:
        listed = await web.client.get("/evals")
        page = await web.client.get(f"/evals/{data['id']}")
        missing = await web.client.get("/evals/builtin-42-20200101T000000000000Z")
        not_an_id = await web.client.get("/evals/..%2Fsecret")
    assert listed.status_code == 200 and f'href="/evals/{data["id"]}"' in listed.text
    assert f"{data['summary']['fact_recall']:.2f}" in listed.text and 'aria-current="page">Evals' in listed.text
    assert page.status_code == 200 and "fact recall" in page.text and "cited precision" in page.text
    for q in data["questions"]:
        assert f'href="/reports/{q["run_id"]}"' in page.text
    assert missing.status_code == 404 and not_an_id.status_code == 404


async def test_planted_and_broken_scorecards_are_escaped_or_named(tmp_path: Path, an_eval: dict) -> None:
    data = an_eval
    reports = tmp_path / "reports"
    planted = dict(data, id="planted-20200101T000000000000Z")
    planted["world"] = {**data["world"], "name": "<script>alert(1)</script>"}
    planted["questions"] = [dict(q, question="<img src=x onerror=alert(1)>", run_id="../../etc/passwd")
                            for q in data["questions"]]  # fmt: skip
    (reports / f"eval-{planted['id']}.json").write_text(json.dumps(planted), encoding="utf-8")
    (reports / "eval-broken-20200102T000000000000Z.json").write_text("{not json", encoding="utf-8")
    async with in_process(options_for(tmp_path)) as web:
        listed = await web.client.get("/evals")
        page = await web.client.get(f"/evals/{planted['id']}")
    assert "<script>alert(1)" not in listed.text and "&lt;script&gt;" in listed.text
    assert "eval-broken-20200102T000000000000Z.json: not an eval scorecard" in listed.text
    assert page.status_code == 200 and "<img src=x" not in page.text and "&lt;img src=x" in page.text
    assert "/reports/../" not in page.text, "a run id that is not one links nowhere"
