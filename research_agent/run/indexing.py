"""The run's search providers, with the local corpus indexed while the first model call runs.

Refreshing a corpus index reads every file's metadata (and re-extracts what changed):
a tenth of a second for a thousand unchanged files, minutes for a new corpus. None of
it is needed before the first search, so :func:`start_indexing` builds and checks the
providers at once (a missing corpus folder or a bad provider setting is refused before
any model call) and refreshes the index in a worker thread; the story waits for it
alongside its first model call (:meth:`Indexing.alongside`). The refresh starts once ``after``
is done (the run's first request on its way: its CPU would otherwise delay that request), or
as soon as the index is waited for (:meth:`Indexing.ready`). Ctrl-C and the deadline
stop the worker at the next file. A folder indexed for the first time (with files enough to take
a while) is announced with its file count and the command that indexes it ahead of the next run; what indexing skipped goes
to the log (``-v``), as ``corpus index`` shows it.
"""

from __future__ import annotations

import asyncio
import logging
import shlex
import threading
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from ..config import Settings
from ..errors import Cancelled, InputError
from ..progress import Progress
from ..record import CorpusRecord
from ..search.base import SearchProvider

__all__ = ["Indexing", "start_indexing", "search_client", "first_index_note", "FIRST_INDEX_NOTE_FILES"]

log = logging.getLogger(__name__)

# A folder indexed for the first time says so from this many files to read: about half a minute of
# work on a laptop (the Python documentation, 500 pages, takes minutes); a few files take no time.
FIRST_INDEX_NOTE_FILES = 50

T = TypeVar("T")
_Prepared = tuple[tuple[SearchProvider, ...], tuple[CorpusRecord, ...]]


class Indexing:
    """The providers of a run, ready once the corpus index is; see the module docstring."""

    def __init__(self, work: asyncio.Future[_Prepared], wanted: asyncio.Event | None = None) -> None:
        self._work = work
        self._wanted = wanted  # set: the index is waited for, so the refresh starts now

    @classmethod
    def ready_with(cls, providers: Sequence[SearchProvider]) -> Indexing:
        """Providers the caller prepared (nothing to index)."""
        done: asyncio.Future[_Prepared] = asyncio.get_running_loop().create_future()
        done.set_result((tuple(providers), ()))
        return cls(done)

    @property
    def done(self) -> bool:
        return self._work.done()

    @property
    def providers(self) -> tuple[SearchProvider, ...]:
        """The providers; only once :meth:`ready` has returned."""
        return self._work.result()[0]

    @property
    def corpus(self) -> tuple[CorpusRecord, ...]:
        """What indexing did to each corpus folder (empty while it runs or without a corpus)."""
        if not self._work.done() or self._work.cancelled() or _failed(self._work):
            return ()
        return self._work.result()[1]

    async def ready(self) -> None:
        """Wait for the index (starting its refresh now if it has not started); its error (a
        corpus with nothing indexable...) is raised here."""
        if self._wanted is not None:
            self._wanted.set()
        await self._work

    async def alongside(self, work: Awaitable[T]) -> T:
        """``work``'s result; should indexing fail first, ``work`` is cancelled and the
        indexing error raised at once. Indexing may still run when this returns."""
        task = asyncio.ensure_future(work)
        try:
            either: set[asyncio.Future[Any]] = {task, self._work}
            await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
            if not task.done() and _failed(self._work):
                task.cancel()
                await self.ready()
            return await task
        finally:
            if not task.done():
                task.cancel()

    async def stop(self) -> None:
        """Stop indexing (the worker thread ends at its next file) and wait for that."""
        if not self._work.done():
            self._work.cancel()
        await asyncio.gather(self._work, return_exceptions=True)


def _failed(work: asyncio.Future[Any]) -> bool:
    return work.done() and not work.cancelled() and work.exception() is not None


def start_indexing(
    settings: Settings, progress: Progress, owned: list[Any], *, after: Callable[[], Awaitable[None]] | None = None
) -> Indexing:
    """Build and check the providers Settings ask for now; index the corpus in the background,
    from when ``after()`` is done or the index is waited for, whichever comes first.

    Raises ConfigError or InputError (a missing corpus folder) at once. ``owned`` gets
    what must be closed after the run (the web search client).
    """
    from ..search.local import LocalSearchProvider
    from ..search.registry import build_providers, provider_names

    local = None
    if "local" in provider_names(settings):
        _check_folders(settings.corpus_dirs)
        local = LocalSearchProvider(
            settings.corpus_dirs, settings.cache_dir, token_budget=settings.mode.source_tokens,
            exclude=(settings.reports_dir,), query_exclude=settings.corpus_exclude,
        )  # fmt: skip
    providers = tuple(build_providers(settings, http_client=search_client(settings, owned), local_provider=local))
    wanted = asyncio.Event()
    return Indexing(asyncio.ensure_future(_refresh(providers, local, progress, lambda: _either(after, wanted))), wanted)


async def _either(after: Callable[[], Awaitable[None]] | None, wanted: asyncio.Event) -> None:
    """Until ``after()`` is done (at once without one) or ``wanted`` is set."""
    if after is None or wanted.is_set():
        return
    waits = {asyncio.ensure_future(after()), asyncio.ensure_future(wanted.wait())}
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for wait in waits:
            wait.cancel()


def _check_folders(folders: Sequence[Path]) -> None:
    for folder in folders:
        if not folder.exists():
            raise InputError(f"corpus folder {folder} does not exist")
        if not folder.is_dir():
            raise InputError(f"corpus folder {folder} is not a folder")


async def _refresh(
    providers: tuple[SearchProvider, ...], local: Any, progress: Progress, start: Callable[[], Awaitable[None]]
) -> _Prepared:
    """Refresh the local corpus index (once ``start()`` is done) in a worker thread that stops when
    this is cancelled."""
    if local is None:
        return providers, ()
    await start()
    stop = threading.Event()
    first = {index.root for index in local.indexes if not index.exists()}

    def on_index(root: Path, done: int, total: int) -> None:
        if stop.is_set():  # Ctrl-C or the deadline: the worker thread stops at the next file
            raise Cancelled("indexing stopped")
        if root in first:
            first.discard(root)
            if total >= FIRST_INDEX_NOTE_FILES:
                progress.note(first_index_note(root, total))
        if done in (1, total) or done % 25 == 0:
            progress.stage("index", f"{root.name}: {done}/{total} files read")

    try:
        corpus_stats = await asyncio.to_thread(local.prepare, progress=on_index)
    except asyncio.CancelledError:
        stop.set()  # else asyncio.run waits for the whole corpus to be read
        raise
    for stats in corpus_stats:  # `corpus index` shows these too; on every run they would be noise
        if stats.skipped:
            skipped = ", ".join(f"{n} {why}" for why, n in stats.skipped.items())
            log.info("corpus %s: skipped %s", stats.root, skipped)
    return providers, tuple(_corpus_record(s) for s in corpus_stats)


def first_index_note(root: Path, files: int) -> str:
    """What a run says when it indexes a folder that has no index yet: the work, and how to do it
    before the next run instead."""
    return (
        f"indexing {files} file(s) in {root} for the first time (later runs read only what changed); "
        f"to do this before a run, use: research-agent corpus index {shlex.quote(str(root))}"
    )


def search_client(settings: Settings, owned: list[Any]) -> Any:
    """The HTTP client of the web search APIs (SearXNG, Tavily, the scholarly ones), or None when
    the run uses none: building one costs a TLS context, and a corpus-only run never needs it."""
    from ..search.registry import WEB_PROVIDERS, provider_names

    if not (WEB_PROVIDERS - {"ddgs"}) & set(provider_names(settings)):
        return None
    import httpx

    from ..fetch.fetcher import DEFAULT_USER_AGENT

    client = httpx.AsyncClient(timeout=settings.fetch_timeout, headers={"User-Agent": DEFAULT_USER_AGENT})
    owned.append(client)
    return client


def _corpus_record(stats: Any) -> CorpusRecord:
    return CorpusRecord(
        root=str(stats.root),
        documents=stats.documents,
        indexed=stats.indexed,
        unchanged=stats.unchanged,
        removed=stats.removed,
        skipped=dict(stats.skipped),
    )
