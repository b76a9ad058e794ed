"""The summary index beside the critique files: rebuilt when missing or stale, hand edits
picked up, and never a way in for a file the loader refuses."""

from __future__ import annotations

import os
import random
import sqlite3
import threading
from pathlib import Path

import pytest

from research_agent.memory.lessons.effects_view import lesson_effects
from research_agent.memory.lessons.select import select_lessons
from research_agent.memory.store.files import prune_critiques
from research_agent.memory.store.index.summary import INDEX_NAME, open_index
from tests.support.memory import NOW, make_critique, make_facts, put, put_raw, state_in, trust_in

WEAK_GEO = (4, 4, 4, 2, 4)
COUNTER = "counterarguments:missing"


def select(meta: Path, **kw):
    kw.setdefault("control_fraction", 0.0)
    return select_lessons(meta, "technology", now=NOW, rng=random.Random(0), state_dir=state_in(meta), **kw)


def rows(meta: Path) -> dict[str, tuple]:
    with sqlite3.connect(meta / INDEX_NAME) as conn:
        return {name: (ok, domain, reason) for name, ok, domain, reason in conn.execute(
            "SELECT name, ok, domain, reason FROM files")}  # fmt: skip


def test_no_critiques_no_index(tmp_path: Path) -> None:
    meta = tmp_path / "meta"
    assert select(meta).lessons == ()
    assert not meta.exists()
    meta.mkdir()
    select(meta)
    assert list(meta.iterdir()) == []


def test_built_on_first_use_refreshed_file_by_file_and_rebuilt_when_missing(tmp_path: Path) -> None:
    paths = [put(tmp_path, make_critique(i, scores=WEAK_GEO)) for i in range(3)]
    with open_index(tmp_path, trust=trust_in(tmp_path)) as index:
        assert (index.last.files, index.last.read, index.on_disk) == (3, 3, True)
    assert (tmp_path / INDEX_NAME).is_file()
    put(tmp_path, make_critique(3, scores=WEAK_GEO))
    paths[0].unlink()
    with open_index(tmp_path, trust=trust_in(tmp_path)) as index:
        assert (index.last.files, index.last.read, index.last.removed) == (3, 1, 1)
    with open_index(tmp_path, trust=trust_in(tmp_path)) as index:
        assert (index.last.read, index.last.removed) == (0, 0)  # nothing changed
    (tmp_path / INDEX_NAME).unlink()
    selection = select(tmp_path)
    assert len(selection.considered) == 3 and selection.lessons
    assert set(rows(tmp_path)) == {p.name for p in tmp_path.glob("critique-*.yaml")}


def _edit(path: Path, old: str, new: str, *, keep_times: bool) -> None:
    """Edit in place (same inode, same size); with ``keep_times`` put the mtime back as it was."""
    before = os.stat(path)
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1 and len(old) == len(new)
    with open(path, "r+", encoding="utf-8") as handle:
        handle.write(text.replace(old, new))
    if keep_times:
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(path)
    assert after.st_ino == before.st_ino and after.st_size == before.st_size


@pytest.mark.parametrize("keep_times", [False, True])
def test_a_hand_edit_is_picked_up_even_with_the_mtime_put_back(tmp_path: Path, keep_times: bool) -> None:
    paths = [put(tmp_path, make_critique(i, tags=("few_sources",), facts=make_facts(), applied=(COUNTER,)))
             for i in range(3)]  # fmt: skip
    assert [lesson.key for lesson in select(tmp_path).lessons] == ["breadth:few-sources"]
    assert [e.applied_runs for e in lesson_effects(tmp_path, now=NOW, state_dir=state_in(tmp_path))] == [3]
    for path in paths:  # the critic's tag, changed by hand to another of the same length
        _edit(path, "- few_sources", "- single_site", keep_times=keep_times)
    assert [lesson.key for lesson in select(tmp_path).lessons] == ["breadth:sites"]
    _edit(paths[0], "coverage: 4", "coverage: 9", keep_times=keep_times)  # now invalid
    selection = select(tmp_path)
    assert dict(selection.excluded)[paths[0].name].startswith(
        "invalid: scores.coverage: 9 is above the maximum of 5"
    )
    assert make_critique(0).id not in selection.considered
    assert rows(tmp_path)[paths[0].name][0] == 0  # the index itself knows
    # the run's evidence was recorded in the trial ledger when its critique was sound: it stays
    assert [e.applied_runs for e in lesson_effects(tmp_path, now=NOW, state_dir=state_in(tmp_path))] == [3]


def test_a_file_swapped_for_a_symlink_leaves_the_index(tmp_path: Path) -> None:
    meta, outside = tmp_path / "meta", tmp_path / "outside"
    outside.mkdir()
    paths = [put(meta, make_critique(i, scores=WEAK_GEO)) for i in range(3)]
    assert len(select(meta).considered) == 3
    planted = put(outside, make_critique(0, scores=WEAK_GEO))
    paths[0].unlink()
    paths[0].symlink_to(planted)
    selection = select(meta)
    assert dict(selection.excluded)[paths[0].name] == "invalid: symlink refused (it must be a regular file)"
    assert make_critique(0).id not in selection.considered and selection.lessons == ()


def test_a_forged_row_never_admits_a_file_the_loader_refuses(tmp_path: Path) -> None:
    for i in range(3):
        put(tmp_path, make_critique(i, scores=WEAK_GEO))
    bad = put_raw(
        tmp_path, make_critique(5, scores=WEAK_GEO, tags=("missing_counterarguments",)), mean_score="1.0"
    )
    select(tmp_path)
    with sqlite3.connect(tmp_path / INDEX_NAME) as conn:  # someone rewrites the row to say "valid"
        conn.execute(
            "UPDATE files SET ok = 1, reason = '', domain = 'technology', passed = 1, mean = 4.0, "
            "created = 0, model = 'm' WHERE name = ?",
            (bad.name,),
        )
        conn.execute(
            "INSERT INTO uses VALUES (?, ?, 'applied', 'decompose', 'technology', '0', 0, 99999, '', 'q', 4.0, 0.5, x'00')",
            (bad.name, COUNTER),
        )
    selection = select(tmp_path)
    # the forged row holds no evidence the loader made (lessons are built from that, not from the
    # row's columns), so the file feeds nothing
    assert make_critique(5).id not in selection.considered
    assert all("Counterarguments" not in lesson.text for lesson in selection.lessons)


def test_a_planted_index_file_is_left_alone(tmp_path: Path) -> None:
    for i in range(3):
        put(tmp_path, make_critique(i, scores=WEAK_GEO))
    target = tmp_path.parent / f"{tmp_path.name}-elsewhere.db"
    target.write_bytes(b"")
    (tmp_path / INDEX_NAME).symlink_to(target)
    selection = select(tmp_path)  # built in memory instead
    assert len(selection.considered) == 3 and selection.lessons
    assert (tmp_path / INDEX_NAME).is_symlink() and target.read_bytes() == b""
    (tmp_path / INDEX_NAME).unlink()
    os.mkfifo(tmp_path / INDEX_NAME)
    with open_index(tmp_path, trust=trust_in(tmp_path)) as index:
        assert not index.on_disk and index.last.files == 3
    (tmp_path / INDEX_NAME).unlink()
    (tmp_path / f"{INDEX_NAME}-wal").symlink_to(target)
    with open_index(tmp_path, trust=trust_in(tmp_path)) as index:
        assert not index.on_disk
    assert target.read_bytes() == b""


def test_a_damaged_or_outdated_index_is_rebuilt(tmp_path: Path) -> None:
    for i in range(3):
        put(tmp_path, make_critique(i, scores=WEAK_GEO))
    (tmp_path / INDEX_NAME).write_bytes(b"this is not a database" * 100)
    with open_index(tmp_path, trust=trust_in(tmp_path)) as index:
        assert index.on_disk and index.last.read == 3
    with sqlite3.connect(tmp_path / INDEX_NAME) as conn:
        conn.execute("UPDATE layout SET value = 'an older layout'")
    with open_index(tmp_path, trust=trust_in(tmp_path)) as index:
        assert index.on_disk and index.last.read == 3


def test_pruned_files_keep_their_evidence_in_the_trial_ledger(tmp_path: Path) -> None:
    for i in range(4):
        put(tmp_path, make_critique(i, applied=(COUNTER,)))
    assert [e.applied_runs for e in lesson_effects(tmp_path, now=NOW, state_dir=state_in(tmp_path))] == [4]
    prune_critiques(tmp_path, 2, now=NOW)
    assert [e.applied_runs for e in lesson_effects(tmp_path, now=NOW, state_dir=state_in(tmp_path))] == [4]


def test_concurrent_runs_share_the_index_without_harm(tmp_path: Path) -> None:
    for i in range(6):
        put(tmp_path, make_critique(i, scores=WEAK_GEO, applied=(COUNTER,) if i % 2 else ()))
    start = threading.Barrier(4, timeout=30)
    results: list = []
    errors: list = []

    def run(n: int) -> None:
        try:
            start.wait()
            put(tmp_path, make_critique(20 + n, scores=WEAK_GEO))  # each writes while the others read
            results.append(select(tmp_path))
        except Exception as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == [] and len(results) == 4
    assert all(result.lessons for result in results)
    with open_index(tmp_path, trust=trust_in(tmp_path)) as index:
        assert index.on_disk and index.last.files == 10
    assert set(rows(tmp_path)) == {p.name for p in tmp_path.glob("critique-*.yaml")}
    with sqlite3.connect(tmp_path / INDEX_NAME) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
