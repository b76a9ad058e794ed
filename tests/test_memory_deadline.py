"""Memory never holds a run past its deadline (issue 26, point 5).

Every wait on the summary index lasts at most the run's remaining time: a lock held longer
makes the run go on without lessons, with one warning, recorded as ``lessons: unavailable``
and left out of both arms of every comparison. A short lock is still waited out.
"""

from __future__ import annotations

import random
import sqlite3
import threading
from pathlib import Path

import pytest
import yaml

from research_agent.memory.effects.stats import compute_stats
from research_agent.memory.lessons.effects_view import lesson_effects
from research_agent.memory.lessons.run import MemoryLessons
from research_agent.memory.lessons.select import select_lessons
from research_agent.memory.lessons.types import LessonSelection
from research_agent.memory.store.critique_types import Critique
from research_agent.memory.store.files import load_all, write_critique
from research_agent.memory.store.index.db import MAX_WAIT
from research_agent.memory.store.index.summary import INDEX_NAME, IndexBusy, IndexTrust, open_index
from research_agent.pipeline import research
from tests.support.memory import NOW, make_critique, put, state_in
from tests.support.pipeline import QUERY, DocsProvider, script, settings_for
from tests.support.research_responder import ResearchResponder

COUNTER = ("missing_counterarguments",)


def seed(meta: Path, count: int = 4) -> None:
    for n in range(count):  # scores that spread (no mode-collapse warning)
        put(meta, make_critique(n, tags=COUNTER, scores=(2 + n % 4, 2 + n % 4, 4, 4, 4)))


class Opener:
    """Opens the index as the product does, and keeps what each opened index would wait."""

    def __init__(self, before=None) -> None:
        self.waits: list[float] = []
        self.before = before

    def __call__(self, meta_dir, **kw):
        if self.before is not None:
            self.before()
        index = open_index(meta_dir, **kw)
        self.waits.append(index.busy_timeout)
        return index


def lessons(meta: Path, state: Path, time_left, opener=open_index) -> MemoryLessons:
    return MemoryLessons(meta, now=NOW, rng=random.Random(1), control_fraction=0.0, trial_probability=0.0, state_dir=state,
                         time_left=time_left, opener=opener)  # fmt: skip


class Holder:
    """Another process's write lock on the index, held until released."""

    def __init__(self, path: Path) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.conn.execute("BEGIN EXCLUSIVE")

    def release(self) -> None:
        self.conn.execute("COMMIT")
        self.conn.close()


def locked(meta: Path, state: Path) -> Holder:
    """The index built, a new critique waiting to be added to it, and the index locked."""
    lessons(meta, state, None).offer()  # builds the index on disk with the user's key
    assert (meta / INDEX_NAME).is_file()
    put(meta, make_critique(9, tags=COUNTER))
    return Holder(meta / INDEX_NAME)


@pytest.mark.parametrize("left", [2.5, 0.125, 0.0])
def test_the_busy_timeout_handed_to_sqlite_is_the_time_left(tmp_path: Path, left: float) -> None:
    meta = tmp_path / "meta"
    seed(meta)
    lessons(meta, tmp_path / "state", None).offer()  # the index is up to date: nothing to read
    opener = Opener()
    memory = lessons(meta, tmp_path / "state", lambda: left, opener)
    memory.offer()
    memory.given("health")  # a domain the offer did not select: the index is opened again
    assert opener.waits == [left, left]


def test_without_a_deadline_a_wait_lasts_at_most_the_cap(tmp_path: Path) -> None:
    meta = tmp_path / "meta"
    seed(meta)
    opener = Opener()
    lessons(meta, tmp_path / "state", None, opener).offer()
    lessons(meta, tmp_path / "state", lambda: 10 * MAX_WAIT, opener).offer()
    assert opener.waits == [MAX_WAIT, MAX_WAIT]


def run_over_a_locked_index(tmp_path: Path, left: float) -> LessonSelection:
    """What a run with ``left`` seconds to spare is given while another process holds the index's lock."""
    meta, state = tmp_path / "meta", tmp_path / "state"
    seed(meta)
    holder = locked(meta, state)
    try:
        memory = lessons(meta, state, lambda: left)
        assert memory.offer().by_domain == {}
        return memory.given("technology")
    finally:
        holder.release()


def test_no_time_left_and_a_locked_index_the_run_goes_on_without_lessons_and_one_warning(tmp_path: Path) -> None:
    selection = run_over_a_locked_index(tmp_path, 0.0)
    assert (selection.lessons, selection.adaptive, selection.available) == ((), False, False)
    assert selection.withheld == () and selection.as_record()["available"] is False
    [warning] = selection.warnings  # with no time left, not even the new file is read
    assert warning.startswith("this run goes on without lessons: ran out of time reading 1 changed")
    assert "memory could not be read in time" in selection.reason


def test_a_lock_held_past_the_time_left_the_run_goes_on_without_lessons(tmp_path: Path) -> None:
    selection = run_over_a_locked_index(tmp_path, 0.05)
    assert (selection.lessons, selection.available) == ((), False)
    [warning] = selection.warnings
    assert warning.startswith("this run goes on without lessons: the memory index in") and "stayed locked" in warning


def test_the_index_itself_says_it_stayed_locked(tmp_path: Path) -> None:
    meta, state = tmp_path / "meta", tmp_path / "state"
    seed(meta)
    holder = locked(meta, state)
    try:
        with pytest.raises(IndexBusy, match="stayed locked by another process"):
            open_index(meta, trust=IndexTrust(state), time_left=lambda: 0.05)
        with open_index(meta, trust=None) as index:  # without the user's trust: in memory, so never locked
            assert not index.on_disk and index.last.files == 5
    finally:
        holder.release()


def test_a_short_lock_released_by_an_event_is_waited_out(tmp_path: Path) -> None:
    meta, state = tmp_path / "meta", tmp_path / "state"
    seed(meta)
    holder = locked(meta, state)
    opening = threading.Event()

    def release_once_opened() -> None:
        assert opening.wait(60), "the run never opened the index"
        holder.release()  # the other process finishes its write while the run waits for it

    releaser = threading.Thread(target=release_once_opened)
    releaser.start()
    try:
        memory = lessons(meta, state, lambda: MAX_WAIT, Opener(before=opening.set))
        memory.offer()
        selection = memory.given("technology")
    finally:
        releaser.join(60)
    assert selection.available and selection.lessons and selection.warnings == ()
    assert len(selection.considered) == 5  # the new critique joined once the lock was free


async def test_a_run_over_a_locked_index_ends_with_its_report_and_is_recorded_unavailable(
    tmp_path: Path, scripted_model
) -> None:
    settings = settings_for(tmp_path, control_fraction=0.0)
    seed(settings.meta_dir)
    holder = locked(settings.meta_dir, settings.state_dir)
    script(scripted_model, ResearchResponder())
    try:
        memory = lessons(settings.meta_dir, settings.state_dir, lambda: 0.0)
        result = await research(QUERY, settings=settings, model=scripted_model, providers=[DocsProvider(tmp_path)],
                                lessons=memory, now=NOW, rng=random.Random(1))  # fmt: skip
    finally:
        holder.release()
    record = yaml.safe_load(result.run_record_path.read_text())
    assert record["lessons"]["available"] is False and record["lessons"]["applied"] == []
    assert [w for w in result.warnings if "without lessons" in w] == [
        next(w for w in result.warnings if w.startswith("this run goes on without lessons"))
    ]
    assert "Lessons Applied" not in result.report_markdown
    assert not any("Counterarguments" in r.user for r in scripted_model.calls("decompose"))


def unavailable(n: int, mean_scores: tuple[int, ...]) -> Critique:
    critique = make_critique(n, scores=mean_scores)
    return Critique.from_dict({**critique.as_dict(), "lessons": "unavailable"})


def test_a_run_without_its_memory_is_in_neither_arm_of_any_comparison(tmp_path: Path) -> None:
    meta = tmp_path / "meta"
    for n in range(5):  # adaptive runs score lower than control runs: the domain is suspended
        put(meta, make_critique(n, scores=(3, 3, 3, 3, 3), applied=("counterarguments:missing",)))
        put(meta, make_critique(10 + n, scores=(4, 4, 4, 4, 4), withheld=("counterarguments:missing",),
                                reason="control"))  # fmt: skip
        put(meta, make_critique(30 + n, scores=(4, 4, 4, 4, 4), withheld=("counterarguments:missing",)))
    for n in range(3):  # runs that could not read memory: they would read as baseline runs
        write_critique(meta, unavailable(20 + n, (2, 2, 2, 2, 2)))
    selection = select_lessons(meta, "technology", now=NOW, rng=random.Random(5), state_dir=state_in(tmp_path),
                               control_fraction=0.0)  # fmt: skip
    assert "over the newest 5 adaptive and 5 baseline runs" in selection.reason
    [effect] = lesson_effects(meta, now=NOW, state_dir=state_in(tmp_path))
    assert (effect.applied_runs, effect.baseline_runs) == (5, 5)  # its own trial's runs, not the controls
    [domain] = compute_stats(load_all(meta, now=NOW)).domains
    assert (domain.comparison.adaptive_n, domain.comparison.baseline_n, domain.count) == (5, 5, 18)
