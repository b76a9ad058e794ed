"""Building a run before its story starts, and taking it down after.

:func:`assemble` turns what ``research()`` was given (its :class:`RunInputs`; Settings, for
anything not given) into a frozen :class:`Run`: the model (wrapped to count usage), the search
providers (the local corpus indexed in a worker thread that Ctrl-C and the deadline
stop, while the first model call runs: :mod:`research_agent.run.indexing`), the page
reader, the context and custom rules, the lessons source, the run id. It owns what it
built and closes it, and it sets the deadline; :func:`within_deadline` keeps it over the
story's steps: passing ``settings.run_timeout`` there is a
:class:`~research_agent.errors.RunTimeout` naming the stage it was in (the story then
publishes the best draft it has, if it has one). Everything that can be refused (the query, the context and rules
files, the report folders, ``--output``, the search settings, a missing corpus folder)
is refused before any model call; a corpus folder with nothing indexable is found
while the first call runs.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import Settings, load_settings
from ..errors import InputError, RunTimeout, StorageError
from ..fetch.gather import SourceReader
from ..files.atomic import ensure_writable_dir, existing_file_mode, remove_stale_temps
from ..files.output import check_output_path
from ..files.safefile import check_folder_inside
from ..ids import make_run_id
from ..journal.checkpoints import RememberingModel, RememberingProvider
from ..journal.entries import entry_path, read_entry
from ..journal.run_journal import Journalling, Resumed, RunJournal, journaled, new_seed, resumed_from
from ..journal.signing import user_key
from ..llm import ChatModel, UsageRecorder
from ..llm.waiting import SystemTicker, Ticker, waits_reported
from ..memory.lessons.run import FixedLessons, LessonsFn, MemoryLessons, RunLessons
from ..memory.lessons.setting import RunSetting
from ..memory.store.index.summary import TimeLeft
from ..progress import NoProgress, Progress, StageClock
from ..record import CorpusRecord
from ..review.rules import Rule, RuleDeadline, RuleLimits, load_rules
from ..search.base import SearchProvider
from .context import load_context
from .indexing import Indexing, start_indexing
from .ledger import RunLedger

if TYPE_CHECKING:
    from .report import ReportMeta

__all__ = [
    "Run",
    "RunInputs",
    "LessonsFn",
    "RunLessons",
    "assemble",
    "within_deadline",
    "default_lessons",
    "validate_query",
    "MAX_QUERY_CHARS",
]

log = logging.getLogger(__name__)

MAX_QUERY_CHARS = 2000
MIN_QUERY_CHARS = 3


@dataclass(frozen=True, kw_only=True)
class RunInputs:
    """What a run is given besides its question (``research()``'s keywords, bundled once for
    :func:`assemble`); whatever is None is built from ``settings`` (by default, from the environment)."""

    settings: Settings | None = None
    model: ChatModel | None = None
    providers: Sequence[SearchProvider] | None = None
    reader: SourceReader | None = None
    lessons: LessonsFn | RunLessons | None = None
    progress: Progress | None = None
    now: datetime | None = None
    rng: random.Random | None = None
    ticker: Ticker | None = None
    journalling: Journalling | None = None


@dataclass(frozen=True)
class Run:
    """One assembled run: what the story's steps need. Only ``ledger`` grows."""

    id: str
    query: str
    started: datetime
    settings: Settings
    model: UsageRecorder
    indexing: Indexing  # the search providers, ready once the corpus index is
    reader: SourceReader | None
    progress: Progress
    clock: StageClock
    ledger: RunLedger
    lessons: RunLessons
    context_block: str
    rules: tuple[Rule, ...]
    deadline: float  # the run's deadline on the event loop's clock
    ticker: Ticker  # the clock (and pace) of waits, idle limits and token rates
    journal: RunJournal  # its entry and checkpoints (the model above already answers from them)

    @property
    def providers(self) -> tuple[SearchProvider, ...]:
        """The search providers (once ``indexing`` is ready: the story waits for it first), each
        answering from the run's checkpoints what it answered before."""
        return tuple(RememberingProvider(p, self.journal.checkpoints) for p in self.indexing.providers)

    @property
    def corpus(self) -> tuple[CorpusRecord, ...]:
        """What indexing did to each corpus folder."""
        return self.indexing.corpus

    @property
    def corpus_roots(self) -> tuple[str, ...]:
        """The resolved roots of the run's corpora: those indexing recorded, else the settings' own
        (a caller that passed its own providers)."""
        return tuple(c.root for c in self.corpus) or tuple(str(Path(d).resolve()) for d in self.settings.corpus_dirs)

    def tokens(self) -> int:
        """Tokens spent so far."""
        return self.model.total.tokens

    def report_meta(self, gate_decision: str) -> ReportMeta:
        """What the front matter of this run's report says."""
        from .report import ReportMeta  # the report's rendering: not needed before the first model call

        return ReportMeta(
            self.query, self.settings.mode.name, self.started.date().isoformat(), self.settings.model, gate_decision,
            id=self.id,
        )

    def rule_limits(self) -> RuleLimits:
        """Time limits for custom lint rules: their own budget, and never past the run's deadline."""
        return RuleLimits(deadline=self.deadline, clock=asyncio.get_running_loop().time)


def validate_query(query: str) -> str:
    """Return the query stripped, or raise InputError for an empty, too short or oversized query
    (a question of fewer than 3 characters, or without a letter or digit, asks nothing)."""
    text = (query or "").strip()
    if not text:
        raise InputError("the query is empty: give a question to research")
    if len(text) < MIN_QUERY_CHARS or not any(c.isalnum() for c in text):
        raise InputError(f"the question {text!r} is too short to research: ask it in words")
    if len(text) > MAX_QUERY_CHARS:
        raise InputError(f"the query is {len(text)} characters long; the limit is {MAX_QUERY_CHARS}")
    return text


@asynccontextmanager
async def assemble(query: str, given: RunInputs) -> AsyncIterator[Run]:
    """The run for ``query`` from what it was ``given``, under its deadline, with "waiting for the
    model" reported and its journal kept (:mod:`research_agent.journal`: a resumed run takes its id,
    start and lesson draw from its entry); what was built here is closed on the way out, whatever happens."""
    query = validate_query(query)
    settings = given.settings or load_settings()
    journalling = given.journalling or Journalling()
    progress = given.progress or NoProgress()
    clock = StageClock(progress)
    ticker = given.ticker or SystemTicker()
    model, providers, reader = given.model, given.providers, given.reader
    owned: list[Any] = []
    indexing: Indexing | None = None
    try:
        deadline = asyncio.get_running_loop().time() + settings.run_timeout
        model = model if model is not None else _owned(owned, _default_model(settings, ticker))
        context_block, rules = _read_inputs(settings)
        indexing = (start_indexing(settings, progress, owned, after=_sdk_loaded) if providers is None
                    else Indexing.ready_with(providers))  # fmt: skip
        if reader is None and _reads_web_pages(settings, providers):
            reader = _owned(owned, _default_reader(settings))
        _check_outputs(settings)
        who = _identity(settings, query, given.now, journalling)
        with journaled(settings, who.id, query, who.started, front_end=journalling.front_end, seed=who.seed,
                       resumed=who.resumed) as journal:  # fmt: skip
            ledger = RunLedger(progress)
            run = Run(
                id=who.id, query=query, started=who.started, settings=settings,
                model=UsageRecorder(RememberingModel(model, journal.checkpoints), on_note=ledger.record_warning,
                                    on_quirk=ledger.warn, clock=ticker.now),
                indexing=indexing, reader=reader, progress=progress, clock=clock, ledger=ledger,
                lessons=_lessons(given.lessons, settings, who.started, given.rng or random.Random(who.seed),
                                 _time_left(deadline)),
                context_block=context_block, rules=rules, deadline=deadline, ticker=ticker, journal=journal,
            )  # fmt: skip
            if journalling.on_started is not None:
                journalling.on_started(run.id)
            _log_start(run)
            async with waits_reported(run.model, progress, ticker):
                yield run
    finally:
        if indexing is not None:
            await indexing.stop()
        await _close(owned)


def _identity(settings: Settings, query: str, now: datetime | None, journalling: Journalling) -> Resumed:
    """The run's id, start time and lesson draw: new ones, or those of the run it resumes (whose
    question it must ask)."""
    if journalling.resume is None:
        started = (now or datetime.now(UTC)).astimezone(UTC)
        return Resumed(_unique_id(settings, query, started), started, new_seed(), 0)
    resumed = resumed_from(settings.meta_dir, journalling.resume, user_key(settings.state_dir))
    entry = read_entry(settings.meta_dir, resumed.id)
    if entry is not None and entry.question != query:
        raise InputError(f"run {resumed.id} asked another question: resume it with its own ({entry.question[:80]!r})")
    return resumed


@asynccontextmanager
async def within_deadline(run: Run) -> AsyncIterator[None]:
    """The run's deadline over the block; passing it is a RunTimeout naming the stage."""
    settings, clock = run.settings, run.clock
    deadline = asyncio.timeout_at(run.deadline)
    try:
        async with deadline:
            yield
    except RuleDeadline as exc:  # lint is not awaited: the deadline reaches it through its time budget
        raise RunTimeout(
            f"the run passed its {settings.run_timeout:g}s deadline during the review stage, in custom rule "
            f"{exc.rule!r} (raise it with --timeout, or simplify the rule)",
            stage="review",
        ) from None
    except TimeoutError:
        if not deadline.expired():
            raise
        raise RunTimeout(
            f"the run passed its {settings.run_timeout:g}s deadline during the {clock.current} stage "
            "(raise it with --timeout)",
            stage=clock.current,
        ) from None


def _log_start(run: Run) -> None:
    settings = run.settings
    log.debug("run %s: %s mode, model %s (fast %s) at %s, search %s", run.id, settings.mode.name,
              settings.model, settings.fast_model_name, settings.base_url or "the OpenAI API",
              ", ".join(settings.providers))  # fmt: skip


# --- what a run is given when the caller gives nothing ------------------------------------


def default_lessons(
    settings: Settings, *, now: datetime, rng: random.Random, time_left: TimeLeft | None = None
) -> RunLessons:
    """Lessons from ``settings.meta_dir`` (a baseline run when lessons are off), read through
    the index the user's key signs, waiting at most ``time_left()`` seconds for it."""
    return MemoryLessons(
        settings.meta_dir,
        now=now,
        rng=rng,
        ttl_days=settings.lesson_ttl_days,
        control_fraction=settings.control_fraction,
        force_control=not settings.lessons,
        trial_probability=settings.trial_probability,
        setting=RunSetting.of(settings.corpus_dirs, web=any(name != "local" for name in _provider_names(settings))),
        state_dir=settings.state_dir,
        time_left=time_left,
    )


def _time_left(deadline: float) -> TimeLeft:
    """Seconds until ``deadline`` on the running loop's clock."""
    loop = asyncio.get_running_loop()
    return lambda: deadline - loop.time()


def _lessons(
    lessons: LessonsFn | RunLessons | None,
    settings: Settings,
    now: datetime,
    rng: random.Random | None,
    time_left: TimeLeft | None,
) -> RunLessons:
    """The run's lessons: from memory unless the caller gives a source or a ``domain -> selection`` function."""
    if lessons is None:
        return default_lessons(settings, now=now, rng=rng or random.Random(), time_left=time_left)
    return lessons if isinstance(lessons, RunLessons) else FixedLessons(lessons)


def _default_model(settings: Settings, ticker: Ticker) -> ChatModel:
    from ..llm import OpenAIChatModel

    return OpenAIChatModel.from_settings(settings, ticker=ticker)


async def _sdk_loaded() -> None:
    """Until the model client's SDK is imported (:func:`research_agent.llm.client.sdk.sdk_loaded`): then the
    first request is on its way, and the corpus index refreshes beside it instead of delaying it."""
    from ..llm.client.sdk import sdk_loaded

    await sdk_loaded()


def _default_reader(settings: Settings) -> SourceReader:
    from ..fetch import Fetcher

    return Fetcher.from_settings(settings)


def _reads_web_pages(settings: Settings, providers: Sequence[SearchProvider] | None) -> bool:
    """Whether the run's providers find web pages (which a page reader then fetches)."""
    if providers is not None:
        return any(p.name != "local" for p in providers)
    return any(name != "local" for name in _provider_names(settings))


def _provider_names(settings: Settings) -> tuple[str, ...]:
    from ..search.registry import provider_names

    return tuple(provider_names(settings))


# --- checks before any model call ------------------------------------------------------------


def _read_inputs(settings: Settings) -> tuple[str, tuple[Rule, ...]]:
    """The context block and the custom rules (a bad file fails before any work); the
    report folders checked and cleared of temp files that crashed runs left behind; an
    ``--output`` that another run owns refused first."""
    if settings.output is not None:
        check_output_path(settings.output, reports_dir=settings.reports_dir, cache_dir=settings.cache_dir)
    context_block = load_context(
        settings.context_path,
        required=settings.context_path is not None and settings.context_path != Path("research_context.md"),
    )
    rules = _load_rules(settings)
    check_folder_inside(settings.meta_dir, settings.reports_dir)  # reports/meta must not lead elsewhere
    for folder in (settings.reports_dir, settings.meta_dir):
        remove_stale_temps(folder)
    return context_block, rules


def _load_rules(settings: Settings) -> tuple[Rule, ...]:
    if settings.rules_path is not None:
        return load_rules(settings.rules_path)
    if settings.context_path is not None:
        beside = settings.context_path.parent / "rules.yaml"
        if beside.is_file():
            return load_rules(beside)
    return ()


def _check_outputs(settings: Settings) -> None:
    """Fail before spending tokens on a report that cannot be saved; refuse an output file
    that is a directory, FIFO, device or symlink."""
    for folder in (settings.reports_dir, settings.meta_dir):
        ensure_writable_dir(folder)
    if settings.output is None:
        return
    try:
        existing_file_mode(settings.output)
    except StorageError as exc:
        raise InputError(f"output file: {exc}") from None
    ensure_writable_dir(Path(settings.output).parent)


def _unique_id(settings: Settings, query: str, now: datetime) -> str:
    run_id = make_run_id(query, now)
    while (settings.reports_dir / f"{run_id}.md").exists() or entry_path(settings.meta_dir, run_id).exists():
        now = datetime.now(UTC)
        run_id = make_run_id(query, now)
    return run_id


# --- what the run owns ------------------------------------------------------------------------


def _owned(owned: list[Any], resource: Any) -> Any:
    owned.append(resource)
    return resource


async def _close(owned: Sequence[Any]) -> None:
    """Close what the run made: its model, page reader and search client, each declaring ``aclose``."""
    for resource in owned:
        try:
            await resource.aclose()
        except Exception as exc:  # closing must never hide the run's own outcome
            log.debug("closing %r failed: %s", resource, exc)
