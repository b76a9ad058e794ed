"""Worlds: the built-in generator (seeded, of every kind, its answers on their pages) and the format,
whose bad folders are refused before any model call with exit 2 and one line naming the problem."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from research_agent.cli.eval import app
from research_agent.eval.grading.mentions import answer_pattern, normalized
from research_agent.eval.world import KINDS, generate, load_world, world_schema, write_world
from research_agent.llm import ChatModel
from tests.support.batch import batch_deps
from tests.support.eval_reports import LABELLED_WORLD

SEEDS = range(6)


@pytest.mark.parametrize("seed", SEEDS)
def test_a_generated_world_has_every_kind_and_its_answers_stand_on_their_pages(tmp_path: Path, seed: int) -> None:
    world = load_world(write_world(tmp_path / "world", seed))
    kinds = Counter(q.kind for q in world.questions)
    assert 40 <= len(world.pages) <= 80 and 15 <= len(world.questions) <= 25
    assert set(kinds) == set(KINDS) and kinds["unanswerable"] == 1
    assert {Path(p).suffix for p in world.pages} == {".md", ".html", ".txt"}
    for question in world.questions:
        for point in question.checkpoints:
            for page in point.sources:
                assert answer_pattern(point.answer).search(normalized(world.pages[page])), (question.id, page)
        for old in question.superseded:
            holding = [p for p, text in world.pages.items() if answer_pattern(old.by).search(normalized(text))]
            assert any(answer_pattern(old.answer).search(normalized(world.pages[p])) for p in holding)
    unanswerable = next(q for q in world.questions if not q.answerable)
    assert unanswerable.checkpoints == () and not any("revenue" in text.lower() for text in world.pages.values())
    distractor = next(q for q in world.questions if q.kind == "distractor")
    firm = distractor.question.rsplit(" ", 2)[-2] if "employ" in distractor.question else distractor.question.split()[5]
    assert sum(1 for text in world.pages.values() if firm[:5] in text) >= 2, "a near twin stands beside it"


def test_the_same_seed_gives_the_same_world_and_another_seed_another() -> None:
    assert generate(7) == generate(7)
    first, second = generate(7), generate(8)
    assert first[1]["questions"] != second[1]["questions"] and set(first[0]) != set(second[0])


def test_writing_a_world_again_leaves_unchanged_files_alone(tmp_path: Path) -> None:
    folder = write_world(tmp_path / "world", 3)
    stamps = {p: p.stat().st_mtime_ns for p in folder.rglob("*") if p.is_file()}
    write_world(folder, 3)
    assert {p: p.stat().st_mtime_ns for p in folder.rglob("*") if p.is_file()} == stamps


def test_the_schema_ships_with_the_package_and_the_labelled_world_is_valid() -> None:
    assert world_schema()["required"] == ["questions"]
    world = load_world(LABELLED_WORLD)
    assert world.name == "labelled" and len(world.questions) == 6 and len(world.fingerprint) == 16


def _bad(tmp_path: Path, change) -> Path:
    folder = tmp_path / "world"
    shutil.copytree(LABELLED_WORLD, folder)
    data = yaml.safe_load((folder / "questions.yaml").read_text(encoding="utf-8"))
    result = change(folder, data)
    if result is not False:
        (folder / "questions.yaml").write_text(yaml.safe_dump(data if result is None else result), encoding="utf-8")
    return folder


def _first_cp(data):
    return data["questions"][0]["checkpoints"][0]


BAD_WORLDS = {
    "no questions.yaml": (lambda f, d: (f / "questions.yaml").unlink() or False, "questions.yaml: no such file"),
    "no pages": (lambda f, d: shutil.rmtree(f / "pages"), "pages: no such folder"),
    "a missing page": (lambda f, d: _first_cp(d).update(sources=["firms/nowhere.md"]),
                       "questions[0].checkpoints[0].sources[0]: page firms/nowhere.md does not exist in pages/"),
    "a page outside": (lambda f, d: _first_cp(d).update(sources=["../questions.yaml"]), "is not a path inside pages/"),
    "duplicate question ids": (lambda f, d: d["questions"][1].update(id="founding"), "duplicate question id 'founding'"),
    "duplicate checkpoint ids": (lambda f, d: d["questions"][0]["checkpoints"][1].update(id="year"),
                                 "duplicate checkpoint id 'year'"),
    "an empty list": (lambda f, d: d.update(questions=[]), "questions: [] should be non-empty"),
    "an unknown key": (lambda f, d: d["questions"][0].update(answer="1987"), "Additional properties"),
    "an unanswerable question with checkpoints": (lambda f, d: d["questions"][0].update(answerable=False),
                                                  "an unanswerable question (answerable: false) has no checkpoints"),
    "a question without checkpoints": (lambda f, d: d["questions"][0].pop("checkpoints") and None, "no checkpoints"),
    "not YAML": (lambda f, d: (f / "questions.yaml").write_text("questions: [\n", encoding="utf-8") or False,
                 "questions.yaml:"),
    "an empty file": (lambda f, d: (f / "questions.yaml").write_text("", encoding="utf-8") or False, "empty file"),
}  # fmt: skip


class _NoCalls(ChatModel):
    """A model that fails the test if it is ever asked anything."""

    requests: list = []

    async def complete(self, request):  # pragma: no cover - reaching it is the failure
        raise AssertionError(f"a model call ({request.stage}) before the world was checked")


@pytest.mark.parametrize("case", sorted(BAD_WORLDS))
def test_a_folder_that_is_not_a_world_is_refused_before_any_model_call(tmp_path: Path, case: str) -> None:
    change, said = BAD_WORLDS[case]
    folder = _bad(tmp_path, change)
    result = CliRunner().invoke(app, ["run", str(folder)], obj=batch_deps(tmp_path, _NoCalls()))
    assert result.exit_code == 2, result.output
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"error: {folder}") and said in line, line
    assert not (tmp_path / "reports" / "meta").exists() or not list((tmp_path / "reports" / "meta").glob("eval-*"))


def test_a_missing_world_folder_is_refused_with_its_name(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["run", str(tmp_path / "nowhere"), "--json"], obj=batch_deps(tmp_path, _NoCalls()))
    assert result.exit_code == 2 and "nowhere: no such folder" in result.stdout
