"""A learning A/B: every question run without lessons and with them, both critiqued, compared.

:func:`run_ab` runs each question twice through the caller's ``research`` function (the
pipeline's :func:`research_agent.pipeline.research`, assembled as for any run): a
*baseline* run with lessons off (the ``--no-lessons`` path) and an *adaptive* run with
lessons on and no chance of becoming a control run (see :func:`arm_settings`). The arm
that runs first alternates from question to question. Both runs of a question finish
before either is critiqued, so a question's baseline critique never becomes a lesson
for its own adaptive run. Each critique is made here and now
(:func:`~research_agent.memory.critique.judgement.critique_run`), marked ``run_kind: ab``: it
joins memory's critiques, but stays out of every lesson's arms, on both sides, and out of the
adaptive-versus-baseline comparison (its adaptive arm is given its lessons by no trial draw, its
baseline arm withholds them all). ``settings.run_timeout`` bounds each question's pair as a whole, critiques included:
the first run gets half of it as its own deadline, the second run what is left, and so does
each critique; a run that reaches its deadline publishes its draft, as ``run`` does. A run
that fails (a RunTimeout, an InvalidModelOutput, a SearchError) fails its question; a
critique that fails or runs out of time keeps the pair, marked incomplete with the
reason (:attr:`~.ab_types.AbPair.incomplete`), and the A/B goes on. Finished pairs go into
an :class:`AbLedger` the caller holds, so Ctrl-C keeps them; :func:`ab_result` measures
them and :func:`save_ab` writes ``reports/meta/ab-<stamp>.yaml``. Files named ``ab-*`` are
never read as critiques.
"""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from ...config import Settings
from ...errors import InvalidModelOutput, ResearchError, RunTimeout, SearchError
from ...files.atomic import atomic_write_text
from ...files.safeyaml import dump_yaml
from ...llm import ChatModel
from ...progress import NoProgress, Progress
from ..critique.schedule import critique_within
from ..store.files import stamp_of
from .ab_measure import arm_usage, dimension_measures, fact_measures, overall_measure
from .ab_types import AbFailure, AbPair, AbResult, ArmResult, ArmUsage

__all__ = [
    "AB_NAME",
    "AbLedger",
    "AbWatcher",
    "QuietWatcher",
    "ResearchFn",
    "arm_settings",
    "run_ab",
    "ab_result",
    "ab_path",
    "save_ab",
]

AB_NAME = re.compile(r"^ab-[0-9]{8}T[0-9]{12}Z\.yaml$")

ResearchFn = Callable[..., Awaitable[Any]]  # pipeline.research: (query, *, settings, model, progress, now)

# Errors that belong to one question (the A/B records it and goes on); any other error stops it.
QUESTION_ERRORS = (RunTimeout, InvalidModelOutput, SearchError)

_HEADER = """\
# research-agent learning A/B {id}: each question run as a baseline (no lessons) and as an
# adaptive run (lessons on, never a control run), both critiqued. Every measure gives the
# arms' means, delta (signed so that positive means the adaptive arm did better; lower-is-better
# facts are negated) and its 90% paired interval (null with fewer than 2 pairs). A pair counts
# for a dimension only when both critiques scored it, for a fact only when both carry facts.
# A pair whose critique failed (or whose run could not read its memory) is kept with
# complete: false and the reason under incomplete, and counts for no measure; failed_count
# counts those pairs and the questions that failed outright.
# complete: false at the top means the A/B stopped early; pairs holds the pairs finished before that.
"""


class AbWatcher(Protocol):
    """Where an A/B tells how it goes: a Progress for each step, and each pair's end."""

    def step(self, index: int, total: int, what: str, question: str) -> AbstractContextManager[Progress]: ...

    def finished(self, pair: AbPair, total: int) -> None: ...

    def failed(self, failure: AbFailure, total: int) -> None: ...


class _NoStep:
    def __enter__(self) -> Progress:
        return NoProgress()

    def __exit__(self, *exc: object) -> None:
        return None


class QuietWatcher:
    """An AbWatcher that shows nothing."""

    def step(self, index: int, total: int, what: str, question: str) -> AbstractContextManager[Progress]:
        return _NoStep()

    def finished(self, pair: AbPair, total: int) -> None:
        return None

    def failed(self, failure: AbFailure, total: int) -> None:
        return None


class AbLedger:
    """The pairs finished so far and the questions that failed: what Ctrl-C leaves."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.pairs: list[AbPair] = []
        self.failed: list[AbFailure] = []


def arm_settings(settings: Settings, arm: str) -> Settings:
    """The settings of one arm: ``baseline`` has lessons off (as ``--no-lessons``);
    ``adaptive`` has lessons on, a control fraction of 0 and no trials, so it is never a
    control run and is given every lesson it is selected. Neither writes ``--output``."""
    if arm == "baseline":
        return settings.replace(lessons=False, output=None)
    if arm == "adaptive":
        return settings.replace(lessons=True, control_fraction=0.0, trial_probability=0.0, output=None)
    raise ValueError(f"unknown arm {arm!r}")


async def run_ab(
    questions: Sequence[str],
    settings: Settings,
    *,
    model: ChatModel,
    research: ResearchFn,
    ledger: AbLedger,
    watcher: AbWatcher | None = None,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    monotonic: Callable[[], float] = time.monotonic,
) -> None:
    """Run and critique both arms of every question, in order, filling ``ledger``.

    Each question's pair (both runs and both critiques) has ``settings.run_timeout``
    seconds, measured on ``monotonic``. A question that fails with a RunTimeout, an
    InvalidModelOutput or a SearchError is recorded in ``ledger.failed`` and the A/B goes
    on; a critique that fails keeps its pair, incomplete; any other error (and Ctrl-C)
    stops it, with the pairs finished so far in ``ledger.pairs``.
    """
    watcher = watcher or QuietWatcher()
    total = len(questions)
    for index, question in enumerate(questions, start=1):
        left = _countdown(monotonic, settings.run_timeout)  # the pair's deadline
        try:
            pair = await _run_pair(index, total, question, settings, model, research, watcher, clock, left)
        except QUESTION_ERRORS as exc:
            failure = AbFailure(index, question, str(exc) or type(exc).__name__)
            ledger.failed.append(failure)
            watcher.failed(failure, total)
            continue
        ledger.pairs.append(pair)
        watcher.finished(pair, total)


def _countdown(monotonic: Callable[[], float], seconds: float) -> Callable[[], float]:
    """Seconds left of ``seconds`` from now, read on ``monotonic`` at each call."""
    ends = monotonic() + seconds
    return lambda: ends - monotonic()


async def _run_pair(
    index: int,
    total: int,
    question: str,
    settings: Settings,
    model: ChatModel,
    research: ResearchFn,
    watcher: AbWatcher,
    clock: Callable[[], datetime],
    left: Callable[[], float],
) -> AbPair:
    """Both runs of one question (alternating which goes first), then both critiques, all
    within the ``left()`` seconds the pair has. The first run gets half of it, the second what
    is left: a run that reaches its deadline publishes its draft as ``run`` does, and the other
    arm still runs (the pair is then kept, incomplete if no time is left for the critiques)."""
    order = ("baseline", "adaptive") if index % 2 else ("adaptive", "baseline")
    results: dict[str, Any] = {}
    for position, arm in enumerate(order):
        with watcher.step(index, total, f"{arm} run", question) as progress:
            remaining = left()
            if remaining <= 0:
                raise RunTimeout(
                    f"the pair passed its {settings.run_timeout:g}s deadline before the {arm} run "
                    "(raise it with --timeout)"
                )
            share = remaining / (len(order) - position)  # the run after this one gets as long
            try:
                results[arm] = await research(
                    question, settings=arm_settings(settings, arm).replace(run_timeout=share), model=model,
                    progress=progress, now=clock(),
                )  # fmt: skip
            except RunTimeout as exc:  # before any draft: the user set the pair's deadline, not this one
                raise RunTimeout(
                    f"the {arm} run passed its {share:.0f}s share of the pair's {settings.run_timeout:g}s deadline "
                    f"during the {exc.stage or 'last'} stage (raise it with --timeout)", stage=exc.stage,
                ) from None
    arms: dict[str, ArmResult] = {}
    with watcher.step(index, total, "critiques", question) as progress:
        for arm in order:
            progress.stage("critique", arm)
            arms[arm] = await _critique_arm(results[arm], arm_settings(settings, arm), model, clock(), left())
    return AbPair(index, question, order[0], arms["baseline"], arms["adaptive"])


async def _critique_arm(
    result: Any, settings: Settings, model: ChatModel, now: datetime, time_left: float
) -> ArmResult:
    """Critique one arm's run in this process, within ``time_left`` seconds, and keep what
    the A/B measures; a critique that fails or runs out of time leaves the arm uncritiqued."""
    lessons = result.run_record.lessons
    arm = {
        "run_id": result.id,
        "lessons": tuple(lesson.key or lesson.text for lesson in lessons.applied) if lessons.adaptive else (),
        "lessons_reason": lessons.reason,
        "lessons_available": lessons.available,
    }
    try:
        critique = await critique_within(
            result.run_record_path, model, settings=settings, now=now, timeout=time_left, run_kind="ab"
        )
    except ResearchError as exc:
        usage = ArmUsage(result.total_usage.tokens, 0, result.total_usage.calls, result.total_usage.cost_usd)
        return ArmResult(**arm, scores=None, mean_score=None, facts=None, usage=usage,
                         critique_error=str(exc) or type(exc).__name__)  # fmt: skip
    run_usage = result.total_usage
    critique_usage = critique.usage
    cost = run_usage.cost_usd
    if critique_usage is not None:
        cost = None if cost is None or critique_usage.cost_usd is None else cost + critique_usage.cost_usd
    usage = ArmUsage(
        run_tokens=run_usage.tokens,
        critique_tokens=critique_usage.tokens if critique_usage is not None else 0,
        calls=run_usage.calls + (critique_usage.calls if critique_usage is not None else 0),
        cost_usd=cost,
    )
    return ArmResult(
        **arm, scores=critique.scores, mean_score=critique.mean_score, facts=critique.facts, usage=usage,
        suspect=critique.suspect_reason,
    )  # fmt: skip


def ab_result(
    ledger: AbLedger,
    *,
    ab_id: str,
    started: datetime,
    questions_file: str,
    settings: Settings,
    complete: bool,
) -> AbResult:
    """Measure the pairs in ``ledger``: the frozen result the CLI prints and the file holds.

    A pair with a suspect critique on either arm is kept and shown, but not measured."""
    pairs = tuple(ledger.pairs)
    measured = tuple(pair for pair in pairs if pair.measurable)
    return AbResult(
        id=ab_id,
        started=started.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        questions_file=questions_file,
        mode=settings.mode.name,
        model=settings.model,
        questions=ledger.total,
        complete=complete,
        pairs=pairs,
        failed=tuple(ledger.failed),
        overall=overall_measure(measured),
        dimensions=dimension_measures(measured),
        facts=fact_measures(measured),
        baseline_usage=arm_usage(pairs, "baseline"),
        adaptive_usage=arm_usage(pairs, "adaptive"),
    )


def ab_path(meta_dir: Path, started: datetime) -> Path:
    """``<meta>/ab-<stamp>.yaml`` for an A/B started at ``started``; a later stamp if that one is taken."""
    path = Path(meta_dir) / f"ab-{stamp_of(started)}.yaml"
    while path.exists() or path.is_symlink():
        path = Path(meta_dir) / f"ab-{stamp_of(datetime.now(UTC))}.yaml"
    return path


def save_ab(path: Path, result: AbResult) -> Path:
    """Write the A/B atomically as readable YAML with a header that explains it; return the path."""
    return atomic_write_text(path, _HEADER.format(id=result.id) + dump_yaml(result.as_dict()))
