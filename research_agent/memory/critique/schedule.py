"""When a run's critique happens: now, or after its report (waited for, or detached).

:func:`critique_now` critiques a run record in this process: the ``critique`` command,
``--wait-critique`` and the detached worker (:mod:`research_agent.memory.critique.worker`) all
call it. :func:`after_report` is what a front end calls once the user has the report:
it does what the settings say (nothing, wait, or start the detached worker) and returns
a :class:`Scheduled` that says what became of the critique, for the front end to tell.
Nothing here prints; every failure is logged to ``critique.log`` next to the record and
leaves a failure record there (:mod:`research_agent.memory.store.failures`) until a retry succeeds.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Literal

from ...config import Settings
from ...errors import ResearchError, RunTimeout
from ...interrupts import run_interruptibly
from ...llm import ChatModel
from ...run_refs import named_run_id
from ...shapes import shape
from ..store.critique_types import Critique
from ..store.failures import log_failure
from ..store.files import check_log_file, critique_path
from .spawn import spawn_critique

__all__ = ["Scheduled", "after_report", "critique_now", "critique_within"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Scheduled:
    """What became of a run's critique after its report.

    ``state`` is ``skipped`` (quick mode or critiques off), ``started`` (a detached process
    ``pid`` runs it), ``not_started`` (it could not be started: ``error``), ``done``
    (waited for: ``critique``, saved at ``path``) or ``failed`` (waited for: ``error``). Written
    (:func:`~research_agent.shapes.plain`) as the MCP research tool answers it: state, pid, path, error.
    """

    state: Literal["skipped", "started", "not_started", "done", "failed"]
    pid: int | None = None
    path: Path | None = None
    error: str = ""
    critique: Critique | None = field(default=None, metadata=shape(omit=True))  # not written: it is at ``path``


def after_report(
    run_record_path: Path,
    settings: Settings,
    *,
    model: ChatModel | None = None,
    spawn: Callable[..., int] = spawn_critique,
    time_left: float | None = None,
) -> Scheduled:
    """Critique a run whose report the user already has, as ``settings`` say.

    Skipped in quick mode or with critiques off; with ``wait_critique`` it runs here
    (with ``model``, or one built from ``settings``), for at most ``time_left`` seconds (what
    is left of the command's deadline; None: no limit); otherwise a detached process is
    started through ``spawn`` and this returns at once. A failure never raises: the
    report is written, so it is only logged and told (KeyboardInterrupt still stops it).
    """
    if not (settings.mode.critiqued and settings.critique):
        return Scheduled("skipped")
    if settings.wait_critique:
        try:
            critique = critique_now(run_record_path, settings, model=model, timeout=time_left)
        except Exception as exc:
            return Scheduled("failed", error=str(exc))
        return Scheduled("done", critique=critique, path=critique_path(Path(run_record_path).parent, critique.id))
    try:
        pid = spawn(run_record_path, reports_dir=settings.reports_dir, settings=settings)
    except (OSError, ResearchError) as exc:
        _log_failure(run_record_path, exc)
        return Scheduled("not_started", error=str(exc))
    return Scheduled("started", pid=pid)


def critique_now(
    run_record_path: Path,
    settings: Settings | Callable[[], Settings],
    *,
    model: ChatModel | None = None,
    make_model: Callable[[Settings], ChatModel] | None = None,
    now: datetime | None = None,
    timeout: float | None = None,
) -> Critique:
    """Critique the run recorded at ``run_record_path`` here and now; return the critique.

    ``critique.log`` is checked before anything else (a FIFO there would block after the
    model call). ``settings`` may be a function, so that a failure to load them is logged
    too. The model is ``model``, else ``make_model(settings)``, else one built from the
    settings, and it is closed afterwards. A critique still running after ``timeout``
    seconds is stopped (a RunTimeout). Failures are logged to ``critique.log`` and raised.
    """
    record = Path(run_record_path)
    check_log_file(record.parent)
    with _failures_logged(record, now):
        chosen = settings() if callable(settings) else settings
        if model is None:
            from ...llm import OpenAIChatModel  # loaded with httpx by the critique that needs it

            model = (make_model or OpenAIChatModel.from_settings)(chosen)
    return run_interruptibly(_critique_and_close(record, model, chosen, now, timeout))


async def critique_within(
    run_record_path: Path, model: ChatModel, *, settings: Settings, now: datetime | None, timeout: float | None,
    held_out: str | None = None,
    run_kind: str = "",
) -> Critique:  # fmt: skip
    """:func:`critique_run` stopped after ``timeout`` seconds (None: no limit) with a
    RunTimeout, logged to ``critique.log`` like any failure. ``held_out``: the eval that holds the
    run out of learning (its critique builds no lesson); ``run_kind``: ``ab`` for an arm of
    ``memory ab`` (see :func:`critique_run`)."""
    from .judgement import critique_run  # a run that only spawns the detached critique never loads it

    try:
        async with asyncio.timeout(None if timeout is None else max(0.0, timeout)):
            return await critique_run(run_record_path, model, settings=settings, now=now, held_out=held_out,
                                      run_kind=run_kind)
    except TimeoutError:
        exc = RunTimeout(
            f"the critique did not finish within the {max(0.0, timeout or 0.0):.3g}s left of the deadline "
            "(raise it with --timeout)",
            stage="critique",
        )
    _log_failure(Path(run_record_path), exc)
    raise exc


@contextlib.contextmanager
def _failures_logged(run_record_path: Path, now: datetime | None = None) -> Iterator[None]:
    """Log a ResearchError raised inside the block to ``critique.log``, then let it go on."""
    try:
        yield
    except ResearchError as exc:
        _log_failure(run_record_path, exc, now=now)
        raise


def _log_failure(run_record_path: Path, exc: Exception, *, now: datetime | None = None) -> None:
    """A ``FAIL`` line for the record in its folder's ``critique.log`` and the run's failure
    record; one that cannot be written becomes a note on ``exc`` instead of hiding it."""
    record = Path(run_record_path)
    try:
        log_failure(record.parent, record.name, named_run_id(record.name), str(exc), now=now)
    except ResearchError as log_exc:
        exc.add_note(f"the failure could not be recorded either: {log_exc}")


async def _critique_and_close(
    record: Path, model: ChatModel, settings: Settings, now: datetime | None, timeout: float | None
) -> Critique:
    try:
        return await critique_within(record, model, settings=settings, now=now, timeout=timeout)
    finally:
        try:
            await model.aclose()
        except Exception as exc:  # closing a client must not mask the critique's outcome
            logger.debug("closing the model client failed: %s", exc)
