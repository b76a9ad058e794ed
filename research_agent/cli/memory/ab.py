"""``research-agent memory ab QUESTIONS.txt``: a learning A/B on the user's own endpoint.

Every question runs twice through the pipeline, as a baseline (no lessons) and as an
adaptive run (lessons on), both are critiqued here, and the paired differences are
printed and saved to ``reports/meta/ab-<stamp>.yaml`` (the work is
:mod:`research_agent.memory.effects.ab`'s; this module reads the options, shows progress on
stderr and prints). The options are ``run``'s, turned into settings the same way;
``--timeout`` bounds each question's pair, critiques included. The file is always
written. Ctrl-C keeps the pairs already finished: they are saved, summarised, and the exit
code is 130; SIGTERM (``timeout``, ``docker stop``, CI cancellation) does the same with exit
code 143. Collaborators (settings, model, clock) come from the memory commands'
:class:`~research_agent.cli.memory.group.MemoryDeps`; the command registers itself on the memory group.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from ... import interrupts
from ...config import Settings
from ...errors import ResearchError
from ...files.atomic import ensure_writable_dir
from ...files.safefile import check_folder_inside
from ...llm import ChatModel
from ...memory.effects.ab import AbLedger, ab_path, ab_result, run_ab, save_ab
from ...memory.effects.ab_questions import read_questions
from ...memory.effects.ab_types import AbFailure, AbPair, AbResult, ArmUsage, Measure
from ...memory.store.schema import DIMENSION_LABELS
from ...progress import Progress
from .. import run_options
from ..boundary import guarded, stderr_console
from ..progress import RichProgress, cost_text
from ..terminal import markup, visible_line
from .group import MemoryDeps, app, chosen_reports_dir, echo_json, memory_deps
from .group import console as stdout_console

__all__ = ["ab_command"]

log = logging.getLogger(__name__)

QuestionsFile = Annotated[
    Path,
    typer.Argument(
        metavar="QUESTIONS.txt",
        help="One question per line; blank lines and # comments are skipped (at most 200).",
    ),
]
JsonOutput = Annotated[
    bool, typer.Option("--json", help="Print one JSON object (pairs, dimensions, facts) on stdout.")
]

Quick = Annotated[
    bool, typer.Option("--quick", help="Fewer sources, no skeptic (both runs are still critiqued).")
]

FACT_LABELS = {
    "citations.weakly_supported_share": "weakly supported citations (share; lower is better)",
    "unanswered": "unanswered sub-queries (lower is better)",
    "sites.distinct": "distinct sites",
}


@app.command("ab")
@guarded
@run_options.with_options(run_options.PIPELINE_SETTINGS)
def ab_command(
    ctx: typer.Context,
    questions_file: QuestionsFile,
    quick: Quick = False,
    json_output: JsonOutput = False,
    **run_settings: Any,  # PIPELINE_SETTINGS, read from ctx.params
) -> None:
    """Run each question without lessons and with them, critique both runs, and compare.

    Prints, per critique dimension and per measured fact, the paired difference (adaptive - baseline, signed so that + is better) with a 90% interval, and the tokens and cost of each arm; saves it all to reports/meta/ab-<stamp>.yaml. Both runs are critiqued in every mode, --quick included.
    """
    from ...run.assembly import MAX_QUERY_CHARS

    deps = memory_deps(ctx)
    questions = read_questions(questions_file, max_chars=MAX_QUERY_CHARS)  # before anything else
    settings = _settings(ctx, deps)
    check_folder_inside(settings.meta_dir, settings.reports_dir)
    ensure_writable_dir(settings.meta_dir)
    started = deps.clock()
    path = ab_path(settings.meta_dir, started)
    ledger = AbLedger(len(questions))
    try:
        stopped_by = _run(questions, settings, deps, ledger)
    except Exception:  # an error stopped it: keep what finished, then let the boundary report the error
        _keep_partial(ledger, path, started, questions_file, settings)
        raise
    result = ab_result(
        ledger, ab_id=path.stem, started=started, questions_file=str(questions_file), settings=settings,
        complete=stopped_by is None,
    )  # fmt: skip
    saved = save_ab(path, result) if ledger.pairs or ledger.failed else None  # nothing ended: nothing to keep
    _print(result, saved, json_output)
    _finish(result, saved, stopped_by)


def _settings(ctx: typer.Context, deps: MemoryDeps) -> Settings:
    """``run``'s options as settings; ``--reports-dir`` here, else ``memory --reports-dir``."""
    overrides = run_options.settings_overrides(ctx.params)
    overrides["reports_dir"] = chosen_reports_dir(ctx, overrides.get("reports_dir"))
    return deps.load_settings({key: value for key, value in overrides.items() if value is not None})


def _run(questions: Sequence[str], settings: Settings, deps: MemoryDeps, ledger: AbLedger) -> int | None:
    """Run the A/B into ``ledger``; the exit code when Ctrl-C (130) or SIGTERM (143, which
    :mod:`research_agent.interrupts` turns into Ctrl-C) stopped it (the finished pairs stay), None when it ran
    to the end."""
    model = deps.make_model(settings)
    watcher = _Watcher(stderr_console())
    try:
        interrupts.run_interruptibly(_ab(questions, settings, model, ledger, deps, watcher))
    except KeyboardInterrupt:  # run_interruptibly's answer to Ctrl-C, once the cancelled task has ended
        return interrupts.interrupt_exit_code()
    return None


async def _ab(
    questions: Sequence[str],
    settings: Settings,
    model: ChatModel,
    ledger: AbLedger,
    deps: MemoryDeps,
    watcher: Any,
) -> None:
    """The A/B in the event loop; the model client is closed however it ends."""
    from ...pipeline import research

    try:
        await run_ab(
            questions,
            settings,
            model=model,
            research=research,
            ledger=ledger,
            watcher=watcher,
            clock=deps.clock,
        )
    finally:
        try:
            await model.aclose()
        except Exception as exc:  # closing a client must not hide the A/B's own outcome
            log.debug("closing the model client failed: %s", exc)


def _keep_partial(
    ledger: AbLedger, path: Path, started: datetime, questions_file: Path, settings: Settings
) -> None:
    """An error stopped the A/B: save the pairs it finished, and say where, before the error line."""
    if not (ledger.pairs or ledger.failed):
        return
    result = ab_result(
        ledger, ab_id=path.stem, started=started, questions_file=str(questions_file), settings=settings,
        complete=False,
    )  # fmt: skip
    save_ab(path, result)
    stderr_console().print(
        f"stopped after {len(ledger.pairs)} finished pair(s) of {ledger.total}; saved to {markup(path)}",
        soft_wrap=True,
    )


def _finish(result: AbResult, saved: Path | None, stopped_by: int | None) -> None:
    """Exit as the A/B ended: 130 after Ctrl-C, 143 after SIGTERM, 1 when no pair is
    complete, else 0."""
    console = stderr_console()
    if stopped_by is not None:
        what = interrupts.interrupt_word()
        where = f"; saved to {markup(saved)}" if saved else ""
        console.print(f"{what}: kept {len(result.pairs)} finished pair(s){where}", soft_wrap=True)
        raise typer.Exit(stopped_by)
    if not result.complete_pairs:
        raise ResearchError(f"no question has a complete pair ({result.failed_count} failed); see {saved}")


class _Watcher:
    """The A/B's progress on stderr: a line per step of each question, the run's own progress
    inside it (cli/progress.py), and a line per finished or failed question."""

    def __init__(self, console: Console) -> None:
        self.console = console

    @contextmanager
    def step(self, index: int, total: int, what: str, question: str) -> Iterator[Progress]:
        shown = question if len(question) <= 80 else question[:79] + "…"
        self.console.print(
            f"question {index}/{total} · {what}: {markup(shown)}", soft_wrap=True, highlight=False
        )
        progress = RichProgress(self.console)
        try:
            yield progress
        finally:
            progress.stop()

    def finished(self, pair: AbPair, total: int) -> None:
        if pair.incomplete:
            self.console.print(
                f"[yellow]question {pair.index}/{total} incomplete[/yellow]: {markup(visible_line(pair.incomplete))}",
                soft_wrap=True,
                highlight=False,
            )
            return
        lessons = len(pair.adaptive.lessons)
        self.console.print(
            f"[green]question {pair.index}/{total} done[/green]: mean score baseline "
            f"{pair.baseline.mean_score:.2f}, adaptive {pair.adaptive.mean_score:.2f} ({lessons} lesson(s))",
            soft_wrap=True,
            highlight=False,
        )

    def failed(self, failure: AbFailure, total: int) -> None:
        self.console.print(
            f"[yellow]question {failure.index}/{total} failed[/yellow]: {markup(visible_line(failure.error))}",
            soft_wrap=True,
            highlight=False,
        )


# --- printing -----------------------------------------------------------------------------


def _print(result: AbResult, saved: Path | None, json_output: bool) -> None:
    """One JSON object on stdout, or the table of measures and each arm's cost."""
    if json_output:
        echo_json({**result.as_dict(), "path": None if saved is None else str(saved)})
        return
    console = stdout_console()
    console.print(_table(result))
    for arm, usage in (("baseline", result.baseline_usage), ("adaptive", result.adaptive_usage)):
        console.print(f"{arm}: {_usage_text(usage)}", soft_wrap=True)
    console.print(result.summary(), soft_wrap=True)
    if saved is not None:
        console.print(f"saved to {markup(saved)}", soft_wrap=True)
    for warning in _warnings(result):
        stderr_console().print(f"[yellow]![/yellow] {markup(warning)}", soft_wrap=True)


def _table(result: AbResult) -> Table:
    table = Table(
        title=(
            f"learning A/B: {result.complete_pairs} complete pair(s) of {result.questions} question(s), "
            f"{result.mode} mode; "
            "delta = adaptive - baseline, + is better"
        )
    )
    for column in ("measure", "baseline", "adaptive", "delta", "90% interval", "n"):
        table.add_column(column, overflow="fold")
    table.add_row(*_row("mean score", result.overall))
    for measure in result.dimensions:
        table.add_row(*_row(DIMENSION_LABELS.get(measure.name, measure.name), measure))
    for measure in result.facts:
        table.add_row(*_row(FACT_LABELS.get(measure.name, measure.name), measure))
    return table


def _row(label: str, measure: Measure) -> tuple[str, ...]:
    d = measure.difference
    interval = "-" if d.interval is None else f"[{_signed(d.interval[0])}, {_signed(d.interval[1])}]"
    return (label, _number(d.mean_without), _number(d.mean_with), _signed(d.delta), interval, str(measure.n))


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _signed(value: float | None) -> str:
    """``+0.25``, ``-0.25``, and ``0.00`` for anything that rounds to zero (never ``-0.00``)."""
    if value is None:
        return "-"
    shown = f"{value:+.2f}"
    return "0.00" if float(shown) == 0 else shown


def _usage_text(usage: ArmUsage) -> str:
    return (
        f"{usage.tokens:,} tokens ({usage.run_tokens:,} in runs, {usage.critique_tokens:,} in critiques), "
        f"{cost_text(usage.cost_usd)}"
    )


def _warnings(result: AbResult) -> list[str]:
    """What makes the numbers mean less than they seem."""
    warnings = []
    complete = [pair for pair in result.pairs if pair.complete]
    if complete and not result.adaptive_pairs:
        reason = complete[-1].adaptive.lessons_reason
        warnings.append(f"no adaptive run was given lessons ({reason}): both arms ran as baselines")
    if complete and all(m.n == 0 for m in result.facts):
        warnings.append("no pair of critiques carried measured facts: the fact rows are empty")
    if result.failed_count:
        warnings.append(f"{result.failed_count} question(s) failed or are incomplete, and are left out")
    return warnings
