"""The summary index is a cache, never an authority (issue 26, point 7).

Whoever can plant a critique can also edit ``reports/meta/index.sqlite``. Every row carries a
MAC keyed by the user's secret key (kept in the state folder, outside ``reports/``); a row that
fails it is rebuilt from its file, so a forged row changes nothing any command shows.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from research_agent.cli.memory import MemoryDeps, app
from research_agent.config import Settings
from research_agent.files.state import secret_key
from research_agent.memory.store.files import load_all
from research_agent.memory.store.index.parse import parse_files
from research_agent.memory.store.index.rows import signature
from research_agent.memory.store.index.summary import INDEX_NAME, IndexTrust, list_critiques, open_index
from research_agent.memory.store.person.file import PersonLesson
from research_agent.memory.store.person.lessons import add_lesson
from tests.support.memory import NOW, make_critique, make_facts, put, put_raw

COUNTER = "counterarguments:missing"


@pytest.fixture
def reports(tmp_path: Path) -> Path:
    meta = tmp_path / "reports" / "meta"
    for i, coverage in enumerate([4, 5, 4, 3]):  # planning lessons, applied and withheld
        put(meta, make_critique(i, scores=(4, 4, coverage, 4, 4), tags=("missing_counterarguments",),
                                applied=(COUNTER,) if i % 2 else ()))  # fmt: skip
    for i in range(2):
        put(meta, make_critique(10 + i, scores=(4, 4, 3, 4, 4), withheld=(COUNTER,)))
    put_raw(meta, make_critique(20), mean_score="1.0")  # refused by the loader
    return tmp_path / "reports"


def deps(tmp_path: Path) -> MemoryDeps:
    state = tmp_path / "state"
    return MemoryDeps(
        load_settings=lambda o: Settings(**{"reports_dir": tmp_path / "reports", "state_dir": state, **o}),
        clock=lambda: NOW,
    )


def invoke(tmp_path: Path, *args: str):
    result = CliRunner().invoke(app, list(args), obj=deps(tmp_path), env={"COLUMNS": "200"})
    assert result.exit_code in (0, 1), result.output
    return result


def answers(tmp_path: Path) -> dict[str, str]:
    """What the memory commands say, as JSON."""
    return {
        "lessons": invoke(tmp_path, "lessons", "q", "--domain", "technology", "--json").stdout,
        "effects": invoke(tmp_path, "effects", "--json").stdout,
        "list": invoke(tmp_path, "list", "--json").stdout,
    }


def forge(reports: Path, *statements: str) -> None:
    with sqlite3.connect(reports / "meta" / INDEX_NAME) as conn:
        for statement in statements:
            conn.execute(statement)


def test_the_commands_keep_a_signed_index_in_the_reports_folder(tmp_path: Path, reports: Path) -> None:
    before = answers(tmp_path)
    assert json.loads(before["lessons"])["applied"], "the seed gives lessons"
    with sqlite3.connect(reports / "meta" / INDEX_NAME) as conn:
        macs = [mac for (mac,) in conn.execute("SELECT mac FROM files UNION ALL SELECT mac FROM uses")]
    assert len(macs) == 7 + 4 and all(isinstance(mac, bytes) and len(mac) == 16 for mac in macs)
    assert secret_key(tmp_path / "state")  # made on first use, outside reports/
    assert not any(p.name.endswith(".key") for p in reports.rglob("*"))


@pytest.mark.parametrize(
    "statements",
    [
        ["UPDATE files SET passed = 0"],  # every critique now reads as failing
        ["UPDATE files SET domain = 'health' WHERE ok = 1"],
        ["UPDATE uses SET value = 1 WHERE arm = 'applied'"],  # a forged use changes the effect
        ["INSERT INTO uses SELECT name, 'coverage:unanswered', arm, stage, domain, stamp, created, 5, reason, "
         "question, mean, p, mac FROM uses WHERE arm = 'withheld'"],  # a forged use row, its MAC copied from another row
        ["UPDATE uses SET domain = 'health'"],  # uses moved to another domain
        ["UPDATE files SET evidence = replace(evidence, '\"missing_counterarguments\"', '\"few_sources\"')"],
        ["DELETE FROM uses WHERE arm = 'withheld'"],  # evidence removed
        ["UPDATE bodies SET body = replace(body, 'question number', 'forged question')"],
        ["DELETE FROM files"],
    ],
)
def test_a_forged_row_changes_nothing_in_lessons_effects_or_list(tmp_path: Path, reports: Path, statements) -> None:
    before = answers(tmp_path)
    forge(reports, *statements)
    assert answers(tmp_path) == before
    assert answers(tmp_path) == before  # and the rows were rebuilt, not just ignored once


def test_an_index_signed_with_another_key_is_read_again_from_the_files(tmp_path: Path, reports: Path) -> None:
    meta = reports / "meta"
    with open_index(meta, trust=IndexTrust(tmp_path / "someone else")) as index:  # another key
        assert index.on_disk and index.last.read == 7
    with open_index(meta, trust=IndexTrust(tmp_path / "state")) as index:
        assert (index.last.read, index.last.forged) == (7, 7)
    with open_index(meta, trust=IndexTrust(tmp_path / "state")) as index:
        assert (index.last.read, index.last.forged) == (0, 0)


def test_an_index_checked_in_full_is_not_checked_again_until_its_file_changes(tmp_path: Path, reports: Path) -> None:
    meta, trust = reports / "meta", IndexTrust(tmp_path / "state")
    with open_index(meta, trust=trust) as index:
        assert (index.last.read, index.last.sealed) == (7, False)
    with open_index(meta, trust=trust) as index:
        assert (index.last.read, index.last.sealed) == (0, True)  # sealed: its rows were checked
    forge(reports, "UPDATE files SET passed = 0")  # any write changes the file's signature
    with open_index(meta, trust=trust) as index:
        assert (index.last.sealed, index.last.forged, index.last.read) == (False, 6, 6)  # the 6 that passed
    with open_index(meta, trust=IndexTrust(tmp_path / "someone else")) as index:
        assert not index.last.sealed, "a seal is the user's own"


def test_memory_list_answers_from_the_index_exactly_as_the_files_read(tmp_path: Path, reports: Path) -> None:
    meta = reports / "meta"
    (meta / "critique-not-a-run-id.yaml").write_text("junk", encoding="utf-8")
    put(meta, make_critique(30, facts=make_facts(sites=(("docs.example.org", 3, 4, 3),))))
    state = tmp_path / "state"
    from_files = load_all(meta, now=NOW)
    assert list_critiques(meta, state_dir=state, now=NOW) == from_files  # built from the files
    assert list_critiques(meta, state_dir=state, now=NOW) == from_files  # answered from the index
    later = list_critiques(meta, state_dir=state, now=NOW.replace(year=2020))  # every critique is dated after "now"
    assert later == load_all(meta, now=NOW.replace(year=2020))
    assert not [item for item in later if item.critique is not None]
    assert sum(1 for item in later if (item.error or "").startswith("dated in the future")) == 7


def test_validate_rebuild_index_reads_every_file_again(tmp_path: Path, reports: Path) -> None:
    invoke(tmp_path, "list")
    forge(reports, "UPDATE files SET reason = 'forged'")
    result = invoke(tmp_path, "validate", "--rebuild-index")
    assert result.exit_code == 1  # one invalid file, as before
    assert f"index rebuilt from 7 critique file(s) in {reports / 'meta' / INDEX_NAME}" in result.stdout
    with sqlite3.connect(reports / "meta" / INDEX_NAME) as conn:
        assert conn.execute("SELECT COUNT(*) FROM files WHERE reason = 'forged'").fetchone() == (0,)


def test_the_files_read_in_worker_processes_give_the_same_rows(reports: Path) -> None:
    meta = reports / "meta"
    stale = sorted((p.name, signature(p.lstat())) for p in meta.glob("critique-*.yaml"))
    alone = parse_files(meta, stale)
    pooled = parse_files(meta, stale, workers=2, pool_from=2)
    assert pooled == alone and len(alone) == 7


USER = "user:notes"


@pytest.mark.parametrize(
    "statements",
    [
        ["UPDATE measures SET value = 1 WHERE target = 'scores.claim_support'"],  # the named target's values
        ["DELETE FROM measures WHERE target = 'scores.claim_support'"],  # a target's values gone
        ["UPDATE measures SET value = 5, mac = (SELECT m.mac FROM measures AS m WHERE m.name = measures.name "
         "AND m.target = 'mean_score') WHERE target = 'scores.claim_support'"],  # a MAC copied from another row
        ["DELETE FROM measures"],
    ],
)
def test_a_forged_measure_row_changes_nothing_in_a_user_lessons_effect(tmp_path: Path, statements) -> None:
    """A person's lesson named its target: its effect is read from ``measures`` rows, which are
    checked like every other row (MAC, and one per target for each file that has them)."""
    meta = tmp_path / "reports" / "meta"
    for i, support in enumerate([4, 2, 5, 3, 4, 2]):  # the lesson given in odd runs, withheld for its trial in even
        put(meta, make_critique(i, scores=(4, support, 4, 4, 4), applied=(USER,) if i % 2 else (),
                                withheld=() if i % 2 else (USER,), reason="trial"))  # fmt: skip
    add_lesson(meta, tmp_path / "state", PersonLesson(USER, "decompose", "technology", "Search the release notes too.",
                                                      target="scores.claim_support"))  # fmt: skip
    effects = json.loads(invoke(tmp_path, "effects", "--json").stdout)
    (mine,) = [e for e in effects if e["key"] == USER]
    assert mine["target"] == "scores.claim_support" and mine["applied_runs"] == 3, mine
    forge(tmp_path / "reports", *statements)
    assert json.loads(invoke(tmp_path, "effects", "--json").stdout) == effects
    assert json.loads(invoke(tmp_path, "effects", "--json").stdout) == effects  # rebuilt, not just ignored once
