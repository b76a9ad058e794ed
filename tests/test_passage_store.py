"""The passages behind a report: kept per cited source, written with the run record (both or
neither), read back safely, and pruned beyond the newest runs."""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from research_agent.cli.memory import app as memory_app
from research_agent.errors import InputError, StorageError
from research_agent.ids import make_run_id
from research_agent.memory.lessons.select import LessonSelection
from research_agent.pipeline import research
from research_agent.record.passages import (
    MAX_RUN_CHARS,
    MAX_SOURCE_CHARS,
    build_passage_store,
    passages_path,
    prune_passage_stores,
    read_passage_store,
    report_run_id,
)
from research_agent.review.markdown import parse_front_matter
from research_agent.stages.synthesize import writer_text
from tests.support.memory_cli import deps_for
from tests.support.pipeline import QUERY, DocsProvider, script, settings_for, source_entries
from tests.support.research_responder import ResearchResponder

NOW = datetime(2026, 5, 4, 3, 2, 1, 123456, tzinfo=UTC)


async def test_a_run_keeps_what_the_writer_was_given_of_each_cited_source(
    tmp_path: Path, scripted_model
) -> None:
    script(scripted_model, ResearchResponder())
    provider = DocsProvider(tmp_path)
    settings = settings_for(tmp_path)
    result = await research(QUERY, settings=settings, model=scripted_model, providers=[provider],
                            lessons=LessonSelection.none, now=NOW)  # fmt: skip
    assert parse_front_matter(result.report_markdown)["id"] == result.id
    store = read_passage_store(settings.meta_dir, result.id)
    assert store is not None and store.run_id == result.id
    entries = source_entries(result.report_markdown)
    assert [s.n for s in store.sources] == sorted(entries)  # the report's own numbering
    by_path = {str(path): text for path, _, text in provider.paths.values()}
    for source in store.sources:
        assert entries[source.n].endswith(f"<{Path(source.location).as_uri()}>")  # every Sources location a link
        assert source.text == by_path[source.location] and not source.truncated
        assert source.text == writer_text_of(source.location, by_path, settings.mode.source_tokens)
    sentence = "Plain VACUUM marks the space as reusable within the table file."
    vacuum = next(s.n for s in store.sources if s.location.endswith("/vacuum.md"))
    assert "marks the space as reusable" in store.passage(sentence, vacuum).text
    assert store.passage(sentence, 99) is None


def writer_text_of(location: str, texts: dict[str, str], budget: int) -> str:
    from research_agent.sources import Source

    return writer_text(
        Source(location, "t", location, location, texts[location], "local"), token_budget=budget
    )


async def test_a_run_whose_passages_cannot_be_written_leaves_no_report_and_no_record(
    tmp_path: Path, scripted_model
) -> None:
    settings = settings_for(tmp_path)
    run_id = make_run_id(QUERY, NOW)
    passages_path(settings.meta_dir, run_id).mkdir(parents=True)  # its place is taken: the write must fail
    script(scripted_model, ResearchResponder())
    with pytest.raises(StorageError, match="it is a directory"):
        await research(QUERY, settings=settings, model=scripted_model, providers=[DocsProvider(tmp_path)],
                       lessons=LessonSelection.none, now=NOW)  # fmt: skip
    assert list(settings.reports_dir.glob("*.md")) == [] and list(settings.meta_dir.glob("run-*")) == []


def test_texts_are_capped_per_source_and_per_run() -> None:
    word = "passage "
    big = word * (MAX_SOURCE_CHARS // len(word) + 100)
    sources = [(f"title {i}", f"/doc/{i}.md", big) for i in range(MAX_RUN_CHARS // MAX_SOURCE_CHARS + 3)]
    store = build_passage_store(make_run_id("caps", NOW), sources)
    assert all(len(s.text) <= MAX_SOURCE_CHARS and s.truncated for s in store.sources)
    assert sum(len(s.text) for s in store.sources) <= MAX_RUN_CHARS
    assert store.sources[-1].text == "" and store.sources[0].text.endswith("passage")  # cut between words
    assert json.loads(store.to_json())["sources"][0]["n"] == 1


BAD_FILES = [
    ("not json {", "not JSON"),
    ("[" * 5000 + "]" * 5000, "nest"),
    ('{"schema_version": 9, "id": "x", "sources": []}', "unknown schema_version"),
    ('{"schema_version": 1, "id": "../../etc", "sources": []}', "not a run id"),
    ('{"schema_version": 1, "id": "ID", "sources": [{"n": "1", "text": "t"}]}', "sources[0].n"),
    ('{"schema_version": 1, "id": "ID", "sources": [{"n": 1, "text": 5}]}', "sources[0].text must be text"),
    ('{"schema_version": 1, "id": "other-run_20260101T000000000000Z", "sources": []}', "holds run"),
]


@pytest.mark.parametrize(("content", "message"), BAD_FILES)
def test_a_bad_passage_file_is_one_line_naming_it(tmp_path: Path, content: str, message: str) -> None:
    run_id = make_run_id("bad", NOW)
    path = passages_path(tmp_path, run_id)
    path.write_text(content.replace('"ID"', f'"{run_id}"'), encoding="utf-8")
    with pytest.raises(InputError, match=re.escape(message)) as caught:
        read_passage_store(tmp_path, run_id)
    assert str(path) in str(caught.value) and "\n" not in str(caught.value)


def test_a_symlinked_passage_file_is_refused_and_a_missing_one_is_none(tmp_path: Path) -> None:
    run_id = make_run_id("link", NOW)
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_bytes(build_passage_store(run_id, []).to_json())
    meta = tmp_path / "meta"
    meta.mkdir()
    passages_path(meta, run_id).symlink_to(elsewhere)
    with pytest.raises(InputError, match="symlink"):
        read_passage_store(meta, run_id)
    assert read_passage_store(meta, make_run_id("none", NOW)) is None


def test_a_report_names_its_run_by_front_matter_or_by_file_name() -> None:
    run_id = make_run_id("copied", NOW)
    assert report_run_id({"id": run_id}, Path("/anywhere/renamed.md")) == run_id
    assert report_run_id({}, Path(f"/reports/{run_id}.md")) == run_id  # written before id: existed
    assert report_run_id({"id": "../x"}, Path("/reports/notes.md")) is None


def _runs(meta: Path, count: int, *, record: bool = True, start: datetime = NOW) -> list[str]:
    ids = []
    for i in range(count):
        run_id = make_run_id(f"run {i}", start - timedelta(hours=i))
        passages_path(meta, run_id).write_bytes(build_passage_store(run_id, []).to_json())
        if record:
            (meta / f"run-{run_id}.yaml").write_text("id: x\n", encoding="utf-8")
        ids.append(run_id)
    return ids


def test_retention_keeps_the_newest_runs_and_junk_never_displaces_them(tmp_path: Path) -> None:
    meta = tmp_path / "meta"
    meta.mkdir()
    real = _runs(meta, 4)  # newest first
    future = _runs(meta, 1, start=NOW + timedelta(days=30))  # a planted file dated in the future
    orphan = _runs(meta, 1, record=False, start=NOW + timedelta(minutes=5))  # newest, but no run record
    (meta / "passages-not-a-run.json").write_text("{}", encoding="utf-8")
    removed = prune_passage_stores(meta, 2, now=NOW)
    left = sorted(p.name for p in meta.glob("passages-*"))
    assert left == sorted([*(f"passages-{r}.json" for r in real[:2]), "passages-not-a-run.json"])
    assert {p.name for p in removed} == {f"passages-{r}.json" for r in (*real[2:], *future, *orphan)}
    assert prune_passage_stores(meta, 0, now=NOW) == []  # 0: retention off


async def test_each_run_prunes_passage_stores_beyond_max_critiques(tmp_path: Path, scripted_model) -> None:
    settings = settings_for(tmp_path, max_critiques=2)
    settings.meta_dir.mkdir(parents=True)
    old = _runs(settings.meta_dir, 3, start=NOW - timedelta(days=1))
    script(scripted_model, ResearchResponder())
    result = await research(QUERY, settings=settings, model=scripted_model, providers=[DocsProvider(tmp_path)],
                            lessons=LessonSelection.none, now=NOW)  # fmt: skip
    left = {p.name for p in settings.meta_dir.glob("passages-*")}
    assert left == {f"passages-{result.id}.json", f"passages-{old[0]}.json"}


def test_memory_prune_removes_passage_stores_beyond_the_limit(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    (reports / "meta").mkdir(parents=True)
    ids = _runs(reports / "meta", 3)
    result = CliRunner().invoke(memory_app, ["prune", "--keep", "1", "--yes"], obj=deps_for(reports))
    assert result.exit_code == 0, result.output
    assert f"removed passages-{ids[1]}.json" in result.output and "pruned 2 file(s)" in result.output
    assert [p.name for p in (reports / "meta").glob("passages-*")] == [f"passages-{ids[0]}.json"]
    assert os.path.exists(reports / "meta" / f"run-{ids[2]}.yaml")  # run records are kept
