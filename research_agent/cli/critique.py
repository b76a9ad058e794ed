"""``research-agent critique --run RECORD``, and how a run's critique is told on the terminal.

The work is memory's (:func:`research_agent.memory.critique.schedule.critique_now`, the same
function ``--wait-critique`` and the detached worker use); this module only prints:
:func:`print_scheduled` what became of a run's critique (a background one in one line: where it
will be written and how to see it), and :func:`tell_failed_critiques` the background critiques
that failed since the last command told of them (``run`` and ``memory show`` call it), with the
``memory retry`` that completes them. What was told is kept in the user state folder
(:data:`TOLD_RECORD`: per reports folder, the newest failure told), so each failure is told once.
"""

from __future__ import annotations

import logging
import shlex
from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console

from ..config import Settings
from ..errors import InputError, ResearchError
from ..files.state_records import update_record
from ..memory.store.failures import FailedCritique, load_failures
from ..memory.store.files import critique_path
from ..run_refs import Runs, named_run_id, resolve_run, run_file, short_id
from .boundary import guarded
from .memory import echo_json, memory_deps, memory_settings
from .memory.group import ReportsDirOption
from .terminal import echo, markup, visible, visible_line

if TYPE_CHECKING:
    from ..memory.critique.schedule import Scheduled

__all__ = ["critique_command", "print_scheduled", "record_path", "tell_failed_critiques", "TOLD_RECORD"]

log = logging.getLogger(__name__)

TOLD_RECORD = "told-critique-failures.json"  # in the state folder: meta folder -> the newest failed_at told
_TOLD_FOLDERS = 200  # reports folders remembered; the least recently failed are forgotten first
_REASON_CHARS = 160


def record_path(run: str, settings: Settings) -> Path:
    """The run record ``--run`` names: a record file, or a run reference resolved in the reports folder.

    A report (``.md``) is refused with the record to pass instead.
    """
    path = Path(run)
    if path.suffix.lower() in (".md", ".markdown", ".html", ".pdf"):
        hint = ""
        run_id = named_run_id(path.name)
        if run_id is not None:
            hint = f", or its id: research-agent critique --run {short_id(run_id, Runs.scan(settings.reports_dir).ids())}"
        raise InputError(f"{run} is a report: pass its run record (reports/meta/run-<id>.yaml){hint}")
    if path.exists() or path.is_symlink() or len(path.parts) > 1 or path.suffix.lower() in (".yaml", ".yml"):
        return path  # a file (read_run_record says what is wrong with it)
    return run_file(settings.reports_dir, "record", resolve_run(settings.reports_dir, run, "record"))


@guarded
def critique_command(
    ctx: typer.Context,
    run: str = typer.Option(
        ..., "--run", metavar="RUN",
        help="A run record (reports/meta/run-<id>.yaml), or a run's id, short id, unique prefix, latest or latest~N.",
    ),
    json_output: bool = typer.Option(False, "--json", help="Print the critique as JSON."),
    reports_dir: ReportsDirOption = None,
) -> None:
    """Critique a finished run and store reports/meta/critique-<id>.yaml next to its record."""
    deps = memory_deps(ctx)
    settings = memory_settings(ctx, reports_dir)
    record = record_path(run, settings)
    from ..memory.critique.judgement import summarize  # imported when used: every command starts lighter
    from ..memory.critique.schedule import critique_now

    critique = critique_now(record, settings, make_model=deps.make_model, now=deps.clock())
    path = critique_path(record.parent, critique.id)
    if json_output:
        echo_json({**critique.as_dict(), "short_id": short_id(critique.id, Runs.scan(settings.reports_dir).ids()),
                   "path": str(path)})  # fmt: skip
    else:
        echo(summarize(critique, path=path))


def _reports_flag(settings: Settings) -> str:
    """`` --reports-dir DIR`` for a hint that must work as printed, unless the folder is the default."""
    return "" if Path(settings.reports_dir) == Path("reports") else f" --reports-dir {shlex.quote(str(settings.reports_dir))}"


def print_scheduled(
    scheduled: Scheduled, console: Console, *, record: Path | None = None, settings: Settings | None = None
) -> None:
    """Tell what became of a run's critique: its summary when waited for, why there is none, or
    (started in the background for the run ``record``) where it will be written and how to see it."""
    if scheduled.state == "started" and record is not None and settings is not None:
        run_id = named_run_id(record.name) or record.stem
        short = short_id(run_id, Runs.scan(settings.reports_dir).ids())
        console.print(
            f"critique: running in the background on the model endpoint, written to "
            f"{markup(critique_path(record.parent, run_id))}; see it with: "
            f"research-agent memory show {short}{markup(_reports_flag(settings))}",
            markup=True, highlight=False, soft_wrap=True,
        )  # fmt: skip
    elif scheduled.state == "done" and scheduled.critique is not None:
        from ..memory.critique.judgement import summarize

        summary = summarize(scheduled.critique, path=scheduled.path)
        console.print(visible(summary), highlight=False, markup=False, soft_wrap=True)
    elif scheduled.state == "failed":
        console.print(
            f"[yellow]critique failed:[/yellow] {markup(visible_line(scheduled.error))}", markup=True, soft_wrap=True
        )
    elif scheduled.state == "not_started":
        console.print(
            f"[yellow]could not start the critique:[/yellow] {markup(visible_line(scheduled.error))}",
            markup=True,
            soft_wrap=True,
        )


def tell_failed_critiques(settings: Settings, console: Console, *, told: Collection[str | None] = ()) -> None:
    """One line when background critiques in ``settings``' reports folder failed since a command last
    told of them, with the ``memory retry`` that completes them; runs in ``told`` were told already
    (this command's own critique). Nothing here ever fails the command it ends."""
    try:
        failed = load_failures(settings.meta_dir)
    except ResearchError as exc:
        log.debug("cannot list the failed critiques: %s", exc)
        return
    if not failed:
        return
    seen = _told_before(settings, max(f.failed_at for f in failed))
    fresh = [f for f in failed if f.failed_at > seen and f.run_id not in told]
    if fresh:
        console.print(markup(_failed_line(fresh, Runs.scan(settings.reports_dir), settings)), soft_wrap=True)


def _told_before(settings: Settings, newest: str) -> str:
    """The newest failure time told before in this reports folder ("" for none), now ``newest``."""
    folder = str(Path(settings.meta_dir).resolve())

    def change(data: dict[str, Any]) -> str:
        before = data.get(folder)
        data[folder] = max(newest, before) if isinstance(before, str) else newest
        for stale in sorted(data, key=lambda k: str(data[k]))[: max(0, len(data) - _TOLD_FOLDERS)]:
            del data[stale]
        return before if isinstance(before, str) else ""

    try:
        return update_record(settings.state_dir, TOLD_RECORD, change)
    except ResearchError as exc:  # told again next time rather than never
        log.debug("cannot keep what was told of failed critiques: %s", exc)
        return ""


def _failed_line(fresh: list[FailedCritique], runs: Runs, settings: Settings) -> str:
    """The notice: the newest failure's run and reason, and the retry that completes them."""
    flag = _reports_flag(settings)
    short = runs.short(fresh[0].run_id)
    reason = visible_line(fresh[0].reason)
    reason = reason if len(reason) <= _REASON_CHARS else reason[: _REASON_CHARS - 1].rstrip() + "…"
    if len(fresh) == 1:
        return f"! the background critique of {short} failed: {reason}; research-agent memory retry {short}{flag} completes it"
    return (
        f"! {len(fresh)} background critiques failed since the last command (the newest, {short}: {reason}); "
        f"research-agent memory retry --all{flag} completes them (memory list{flag} shows them)"
    )
