"""One session of an eval, on the batch's machinery: the shared model client behind the endpoint's
limits (:func:`~research_agent.batch.session.open_endpoint`), each round run as a batch
(:func:`~research_agent.batch.runner.run_batch`: parallel questions, critiques, retries, the state
written after every change, cancellation), then every finished run graded, its grade recorded in
the run's row of the trial ledger (:mod:`.ledger`), and the scorecard written.

Rounds run one after another: the questions of round 2 start once round 1's have ended, so they
get the lessons round 1's critiques built. Each run is graded as it ends, its critique's scores read
while the critique is there (retention keeps only the newest critiques). The scorecard pages are written however the session
ends: finished, stopped by an error, or cancelled (a second Ctrl-C may cut them short; the state is
up to date all the same).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from ..batch.runner import BatchWatcher, QuietWatcher, ResearchFn, RunOptions, run_batch
from ..batch.session import ModelFactory, SessionOptions, default_model, open_endpoint, statuses_now
from ..batch.state import Entry
from ..batch.summary import lesson_changes, lesson_statuses
from ..config import Settings
from ..service.events import EventLog
from .graded import GradedRun, grade_entry
from .ledger import record_eval_grades
from .pages import write_pages
from .plan import EvalPlan
from .scorecard import scorecard_data

__all__ = ["run_eval", "Grades"]


class Grades:
    """The graded runs of an eval, by entry key, graded once each (the CLI's view asks as runs end)."""

    def __init__(self, plan: EvalPlan, base: Settings) -> None:
        self.plan, self.base = plan, base
        self.entries = {entry.key: entry for entry in plan.state.entries}  # the runner changes them in place
        self.by_key: dict[str, GradedRun] = {}

    def of(self, key: str) -> GradedRun | None:
        """The graded run of entry ``key`` (None: not finished, or its files cannot be read)."""
        if key not in self.by_key:
            entry = self.entries.get(key)
            run = grade_entry(self.plan.world, entry, self.base.meta_dir, self.base.reports_dir) if entry else None
            if run is None:
                return None
            self.by_key[key] = run
        return self.by_key[key]

    def all(self) -> dict[str, GradedRun]:
        """Every finished run of the eval, graded."""
        graded = {key: self.of(key) for key, entry in self.entries.items() if entry.state == "done"}
        return {key: run for key, run in graded.items() if run is not None}


class _Grading:
    """A BatchWatcher that grades each run as it ends (before retention may prune its critique),
    then tells ``inner``."""

    def __init__(self, grades: Grades, inner: BatchWatcher | None) -> None:
        self.grades, self.inner = grades, inner or QuietWatcher()

    def started(self, entry: Entry, events: EventLog) -> None:
        self.inner.started(entry, events)

    def retrying(self, entry: Entry, delay: float) -> None:
        self.inner.retrying(entry, delay)

    def ended(self, entry: Entry) -> None:
        if entry.state == "done":
            self.grades.of(entry.key)
        self.inner.ended(entry)


async def run_eval(
    plan: EvalPlan,
    base: Settings,
    *,
    options: SessionOptions,
    research: ResearchFn,
    grades: Grades | None = None,
    make_model: ModelFactory = default_model,
    watcher: BatchWatcher | None = None,
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> dict[str, Any]:
    """Run every round of ``plan`` not done yet (see the module docstring) and return the scorecard
    (also kept as ``plan.page``); an error or a cancellation goes on once the pages are written."""
    state = plan.state
    grades = grades or Grades(plan, base)
    endpoint = await open_endpoint(base, options, make_model, sleep=sleep, clock=clock)  # refused: nothing written
    started = time.monotonic()
    grading, ran = _Grading(grades, watcher), False
    try:
        if plan.new:
            state.lessons_at_start = await asyncio.to_thread(lesson_statuses, base)
        for number in range(1, plan.options.rounds + 1):
            batch = plan.round_batch(number)
            if batch.todo():
                await run_batch(batch, model=endpoint.model, research=research, watcher=grading, sleep=sleep,
                                options=RunOptions(options.parallel, options.retries, options.html))  # fmt: skip
        ran = True
    finally:
        await endpoint.aclose()
        state.wall_seconds += time.monotonic() - started
        state.limits = endpoint.limits.stats.as_dict()
        state.status = "finished" if ran else "stopped"  # finished: ran to its end, failed runs and all
        state.save()
        changed = lesson_changes(state.lessons_at_start, await statuses_now(base))
        graded = grades.all()
        await asyncio.to_thread(record_eval_grades, base.meta_dir, base.state_dir, plan.world.name, state.id, graded)
        plan.page = scorecard_data(plan, graded, lessons_changed=changed)
        write_pages(plan.page, base.reports_dir)
    return plan.page
