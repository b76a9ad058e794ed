"""``research-agent batch FILE``: research many questions, bounded by the endpoint's limits, resumable.

The command reads as its steps: the file is read and every row checked before any model call
(:mod:`research_agent.batch.questions`, :mod:`research_agent.batch.plan`); the newest batch of
that file is continued (or the one ``--resume ID`` names), else a new one starts (``--again``:
always a new one); a batch with nothing left to do says so and costs no call; the questions run (:mod:`research_agent.batch.session`) with one bar on stderr
(:mod:`.view`); the batch page's path is printed on stdout (or one JSON object). Ctrl-C or
SIGTERM stops the running questions cleanly, keeps the finished ones, writes the state and the
page, and exits 130 or 143 with the command that continues it (the options a stored batch does not
keep, such as --reports-dir, included); a second Ctrl-C stops at once. The exit code is 1 when a question
failed. Collaborators come from a :class:`BatchDeps` found as the Click context ``obj`` (tests
pass fakes that way).
"""

from __future__ import annotations

import asyncio
import logging
import shlex
from collections.abc import Callable, Coroutine, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ... import interrupts
from ...config import Settings, load_settings
from ...errors import InputError
from .. import run_options as opt
from ..boundary import guarded, json_failures, stderr_console
from ..startup import importing
from ..terminal import dumps_json, echo, markup

if TYPE_CHECKING:
    from ...batch.plan import Batch
    from ...batch.session import ModelFactory, SessionOptions
    from ...batch.state import BatchState
    from .view import BatchView

__all__ = ["app", "batch_command", "BatchDeps", "resume_command", "run_locked", "finish", "quiet_logs"]

app = typer.Typer(add_completion=False, rich_markup_mode=None)

QuestionsFile = Annotated[
    Path | None,
    typer.Argument(metavar="FILE", help="Questions: text (one a line), CSV with a question column, or JSONL "
                                        "(.jsonl) with a question key; rows may set mode, corpus, search, max_sources.",
                   show_default=False),
]  # fmt: skip
Resume = Annotated[str | None, typer.Option("--resume", metavar="ID", help="Continue the batch ID (FILE optional).")]
Again = Annotated[
    bool, typer.Option("--again", help="Research FILE's questions anew in a new batch, even those already done.")
]
Parallel = Annotated[
    int | None,
    typer.Option("--parallel", min=1, max=64, metavar="N", help="Questions at once.",
                 show_default="the endpoint's slots + 1, at most 8"),
]  # fmt: skip
Rpm = Annotated[int | None, typer.Option("--rpm", min=1, metavar="N", help="At most N model requests a minute.")]
Tpm = Annotated[int | None, typer.Option("--tpm", min=1, metavar="N", help="At most N model tokens a minute.")]
Retries = Annotated[
    int, typer.Option("--retries", min=0, max=10, metavar="N", help="Tries again of a question that failed transiently.")
]
PageFormat = Annotated[
    str, typer.Option("--format", "-f", metavar="md|html", help="html: the page and each report as HTML too.")
]


@dataclass(frozen=True)
class BatchDeps:
    """Collaborators of ``batch``; pass one as ``obj`` to replace any of them."""

    load_settings: Callable[[Mapping[str, Any]], Settings] = load_settings
    make_model: ModelFactory | None = None  # None: the OpenAI-compatible client of the settings
    research: Callable[..., Any] | None = None  # None: the pipeline's research
    sleep: Callable[[float], Any] = asyncio.sleep


@app.command()
@guarded
@opt.with_options((("quick", opt.Quick, False), *opt.PIPELINE_SETTINGS, ("no_critique", opt.NoCritique, False),
                   ("no_lessons", opt.NoLessons, False)))  # fmt: skip
def batch_command(
    ctx: typer.Context,
    file: QuestionsFile = None,
    resume: Resume = None,
    again: Again = False,
    parallel: Parallel = None,
    rpm: Rpm = None,
    tpm: Tpm = None,
    retries: Retries = 2,
    fmt: PageFormat = "md",
    json_output: opt.JsonOutput = False,
    **run_settings: Any,  # --quick, PIPELINE_SETTINGS, --no-critique, --no-lessons: read from ctx.params
) -> None:
    """Research every question of FILE (reports/<id>.md each), critique each report as it finishes,
    and write the batch page reports/batch-<id>.md; the state in reports/meta/batch-<id>.yaml lets
    the same command (or --resume ID) continue where it stopped."""
    with json_failures(json_output):
        if fmt not in ("md", "html"):
            raise InputError(f"--format {fmt[:20]!r}: choose md or html")
        deps = ctx.find_root().obj if isinstance(ctx.find_root().obj, BatchDeps) else BatchDeps()
        given = {k: v for k, v in opt.settings_overrides(ctx.params).items() if v is not None}
        with importing():  # what a batch needs, loaded only when one runs
            from ...batch.session import SessionOptions, default_parallel

        batch, base = _plan(file, resume, given, deps, again=again)
        if not batch.new and not batch.todo():
            _print(_nothing_to_do(batch), json_output, fmt)
            return
        options = SessionOptions(parallel or default_parallel(base), retries, rpm, tpm, html=fmt == "html")
        data, stopped = _run(batch, base, options, deps)
        _print(data, json_output, fmt)
    finish(batch.state, stopped, resume_command("research-agent batch", batch.state.id, given))


def _plan(
    file: Path | None, resume: str | None, given: dict[str, Any], deps: BatchDeps, *, again: bool
) -> tuple[Batch, Settings]:
    """The batch to run and its base settings; every problem refused here, before any model call."""
    from ...batch.plan import plan_batch
    from ...batch.questions import read_batch_file
    from ...batch.start import resumed
    from ...batch.state import BatchState, find_latest
    from ...files.atomic import ensure_writable_dir
    from ...files.safefile import check_folder_inside

    if file is None and resume is None:
        raise InputError("give a questions FILE, or --resume ID")
    if again and (resume is not None or file is None):
        raise InputError("--again researches a questions FILE anew in a new batch: give the FILE, without --resume")
    base = deps.load_settings(given)
    check_folder_inside(base.meta_dir, base.reports_dir)
    previous = BatchState.load(base.meta_dir, resume) if resume else None
    used = given
    if previous is not None and file is None:  # the options it was started with, then those given now
        rows, used, base = resumed(previous, base, given, deps.load_settings)
        where = previous.file
    else:
        assert file is not None  # without a batch to resume, a FILE was given (checked above)
        rows = list(read_batch_file(file))
        where = str(file.resolve())
    if previous is None and not again:
        ensure_writable_dir(base.meta_dir)
        previous = find_latest(base.meta_dir, where)
    batch = plan_batch(rows, base, file=where, overrides=used, previous=previous)
    ensure_writable_dir(base.meta_dir)
    return batch, base


def _run(batch: Batch, base: Settings, options: SessionOptions, deps: BatchDeps) -> tuple[dict[str, Any], int | None]:
    """Run the batch with its progress on stderr; the page's content, and the exit code when a
    signal stopped it (None: it ran to its end)."""
    from ...batch.session import default_model, run_session
    from ...pipeline import research
    from .view import BatchView

    state = batch.state
    view = BatchView(stderr_console(), len(state.entries), done=state.count("done"), parallel=options.parallel)
    session = run_session(batch, base, options=options, research=deps.research or research,
                          make_model=deps.make_model or default_model, watcher=view, sleep=deps.sleep)  # fmt: skip
    stopped = run_locked(session, state, view)
    return batch.page, stopped


def run_locked(session: Coroutine[Any, Any, Any], state: BatchState, view: BatchView) -> int | None:
    """Run ``session`` (a batch's, or an eval's) holding the lock of its ``state``, its progress in
    ``view``; the exit code when a signal stopped it (None: it ran to its end)."""
    from ...batch.start import holding

    try:
        with holding(state), quiet_logs():  # another process running it: refused before the session starts
            interrupts.run_interruptibly(session)
    except KeyboardInterrupt:  # the first Ctrl-C or SIGTERM, once the running questions have unwound
        return interrupts.interrupt_exit_code()
    finally:
        session.close()  # a no-op once it ran; one that never started is closed unawaited
        view.stop()
    return None


@contextmanager
def quiet_logs() -> Iterator[None]:
    """Without -v, the runs' warnings stay in their records, off the progress on stderr."""
    logger = logging.getLogger("research_agent")
    if logger.level and logger.level <= logging.DEBUG:
        yield
        return
    before = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(before)


def _print(data: dict[str, Any], json_output: bool, fmt: str) -> None:
    if not data:
        return
    page = Path(data["state_path"]).parent.parent / f"batch-{data['id']}.{'html' if fmt == 'html' else 'md'}"
    if json_output:
        typer.echo(dumps_json({**data, "page": str(page)}))
        return
    echo(page)
    t = data["totals"]
    stderr_console().print(
        markup(f"batch {data['id']}: {t['done']} done, {t['failed']} failed, {t['pending'] + t['running']} not run; "
               f"state {data['state_path']}"),
        soft_wrap=True,
    )  # fmt: skip


def _nothing_to_do(batch: Batch) -> dict[str, Any]:
    """What a batch whose every question is done prints, having called nothing."""
    from ...batch.summary import summary_data

    state = batch.state
    state.status = "finished"  # as it stands on disk: nothing is written
    stderr_console().print(
        markup(f"nothing to do: the {len(state.entries)} question(s) of batch {state.id} are done; "
               "--again researches them anew"),
        soft_wrap=True,
    )  # fmt: skip
    return {**summary_data(state, lessons_now=state.lessons_at_start), "nothing_to_do": True}


# What a stored batch does not keep (it may have been planted: see batch.plan), given again on resume.
_NOT_KEPT = {"reports_dir": "--reports-dir", "context_path": "--context", "rules_path": "--rules",
             "searxng_url": "--searxng-url"}  # fmt: skip
_NOT_KEPT_FLAGS = {"allow_private": ("--allow-private", True), "respect_robots": ("--ignore-robots", False)}


def resume_command(command: str, batch_id: str, given: Mapping[str, Any]) -> str:
    """The command (``research-agent batch``, ``research-agent eval run``) that continues batch
    ``batch_id`` as printed, from any folder: ``--resume`` with the options given now that the state
    does not keep (paths made absolute)."""
    words = [*command.split(), "--resume", batch_id]
    for setting, option in _NOT_KEPT.items():
        if given.get(setting) is not None:
            value = given[setting]
            words += [option, str(Path(value).resolve()) if setting.endswith(("_dir", "_path")) else str(value)]
    words += [option for setting, (option, value) in _NOT_KEPT_FLAGS.items() if given.get(setting) is value]
    return shlex.join(words)


def finish(state: BatchState, stopped: int | None, resume: str) -> None:
    """Exit as the batch (or eval) ended: 130/143 after Ctrl-C/SIGTERM, 1 when a question failed,
    else 0. Told from the state, which is up to date even when a second Ctrl-C cut the page short.
    ``resume``: the command that continues it, as printed (:func:`resume_command`)."""
    if stopped is not None:
        left = sum(1 for entry in state.entries if entry.state not in ("done", "failed"))
        stderr_console().print(
            markup(f"{interrupts.interrupt_word()}: {state.KIND} {state.id} stopped, {left} question(s) left; "
                   f"continue with: {resume}"),
            soft_wrap=True,
        )  # fmt: skip
        raise typer.Exit(stopped)
    if state.count("failed"):
        raise typer.Exit(1)
