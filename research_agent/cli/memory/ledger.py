"""``memory ledger`` and ``memory reinstate``: the trial ledger, and a person taking back a retirement.

``memory ledger`` shows the ledger (:mod:`research_agent.memory.store.trials`): how many runs it
holds and what they cost on disk, per domain and kind, each decision recorded and the newest
rows; ``--clear`` deletes it on purpose, after saying what that forgets. ``memory reinstate KEY``
gives a retired lesson back to runs, in a new trial of its own.
"""

from __future__ import annotations

from typing import Any

import typer

from ...domains import DOMAINS, parse_domain
from ...errors import InputError
from ...memory.store.schema import DIMENSIONS, mean_of
from ...memory.store.trials import (
    LEDGER_NAME,
    Grade,
    TrialEvent,
    TrialLedger,
    TrialRow,
    retired_in,
)
from ...run_refs import short_id
from ...service.memory import Memory
from ..boundary import guarded
from ..terminal import echo
from .group import ReportsDirOption, app, echo_json, memory_deps, memory_settings

__all__ = ["ledger_command", "reinstate_command", "event_words", "row_words", "edit_words", "grade_words"]

_KIND_WORDS = {"ordinary": "ordinary", "control": "whole-run control", "no_lessons": "--no-lessons", "ab": "memory ab"}


def event_words(event: TrialEvent) -> str:
    """One recorded event in words, with its domain and key."""
    return f"{event.domain} {event.key}: {event.words()}"


def row_words(row: TrialRow) -> str:
    """One run's row in words."""
    outcome = "not critiqued" if row.mean is None else f"mean {row.mean:.2f} {'pass' if row.passed else 'fail'}"
    if row.review:
        outcome += " (report rejected by its own review)"
    if row.suspect:
        outcome += " (suspect critique)"
    given = [u.key for u in row.uses if u.arm == "applied"]
    held = [f"{u.key} ({u.reason})" for u in row.uses if u.arm == "withheld"]
    parts = [f"{short_id(row.run)}  {row.domain}  {_KIND_WORDS[row.kind]}"
             + (", plan by a person" if row.plan_by_person else "") + f"  {outcome}"]  # fmt: skip
    if given:
        parts.append(f"given {', '.join(given)}")
    if held:
        parts.append(f"withheld {', '.join(held)}")
    if row.excluded:
        parts.append(f"left out {', '.join(key for key, _ in row.excluded)}")
    if row.edit is not None:
        parts.append(edit_words(row))
    if row.grade is not None:
        parts.append(grade_words(row.grade))
    return "; ".join(parts)


def edit_words(row: TrialRow) -> str:
    """How a run's scores differ from those first recorded, e.g. "scores edited by hand since first
    recorded: coverage 2 → 5 (mean 3.60 → 4.20)"."""
    edit = row.edit
    if edit is None or row.scores is None:
        return ""
    moved = [f"{d.replace('_', ' ')} {_score(a)} \u2192 {_score(b)}"
             for d, a, b in zip(DIMENSIONS, edit.was, row.scores, strict=True) if a != b]  # fmt: skip
    was = dict(zip(DIMENSIONS, edit.was, strict=True))
    how = "edited by hand" if edit.how == "hand" else "changed by a later critique"
    mean = f" (mean {mean_of(was):.2f} \u2192 {row.mean:.2f})" if row.mean is not None else ""
    return f"scores {how} since first recorded: {', '.join(moved)}{mean}"


def _score(value: int | None) -> str:
    return "n/a" if value is None else str(value)


def grade_words(grade: Grade) -> str:
    """An eval's grade of a run in words."""
    if grade.fact_recall is None:
        return f"graded by eval {grade.eval_id}: a question the pages cannot answer, {'declined' if grade.declined else 'not declined'}"
    return f"graded by eval {grade.eval_id}: fact recall {grade.fact_recall:.2f}"


def _summary(ledger: TrialLedger) -> dict[str, Any]:
    by_domain: dict[str, dict[str, int]] = {}
    for row in ledger.rows.values():
        counts = by_domain.setdefault(row.domain, {kind: 0 for kind in _KIND_WORDS} | {"graded": 0, "critiqued": 0,
                                                                                         "edited": 0})
        counts[row.kind] += 1
        counts["graded"] += row.grade is not None
        counts["critiqued"] += row.mean is not None
        counts["edited"] += row.edit is not None
    return {
        "path": str(ledger.path) if ledger.path is not None else None,
        "runs": len(ledger.rows),
        "bytes": ledger.size,
        "ignored_lines": ledger.refused,
        "domains": dict(sorted(by_domain.items())),
        "events": [event.as_json() for event in ledger.events],
        "lesson_texts": [text.as_json() for text in ledger.texts.values()],
        "problem": ledger.problem or None,
    }


def _show(ledger: TrialLedger, limit: int) -> None:
    where = ledger.path if ledger.path is not None else "memory only (no ledger file is kept: the state folder is not usable)"
    per_run = f", about {ledger.size // max(1, ledger.lines)} bytes a line" if ledger.lines else ""
    texts = f", {len(ledger.texts)} lesson text(s)" if ledger.texts else ""
    echo(f"trial ledger {where}: {len(ledger.rows)} run(s), {len(ledger.events)} event(s){texts}{per_run}")
    for domain, counts in _summary(ledger)["domains"].items():
        kinds = ", ".join(f"{counts[k]} {_KIND_WORDS[k]}" for k in _KIND_WORDS if counts[k])
        edited = f", {counts['edited']} with scores edited since first recorded" if counts["edited"] else ""
        echo(f"  {domain}: {sum(counts[k] for k in _KIND_WORDS)} run(s) ({kinds}); {counts['critiqued']} critiqued, "
             f"{counts['graded']} graded by an eval{edited}")  # fmt: skip
    if ledger.events:
        echo("decisions and reinstatements, as recorded:")
        for event in ledger.events:
            echo(f"  {event_words(event)}")
    changed = [row for row in ledger.ordered() if row.edit is not None][-limit:] if limit else []
    if changed:
        echo("scores changed since first recorded (the rest of each run stays as first recorded):")
        for row in changed:
            echo(f"  {short_id(row.run)}  {row.domain}: {edit_words(row)}")
    newest = ledger.ordered()[-limit:] if limit else []
    if newest:
        echo(f"the newest {len(newest)} run(s):")
        for row in newest:
            echo(f"  {row_words(row)}")
    if ledger.refused:
        echo(f"{ledger.refused} line(s) ignored: their signature does not check (planted, edited, torn, or "
             "written under another user's key)")  # fmt: skip
    if ledger.problem:
        echo(f"note: {ledger.problem}")


def _forgets(ledger: TrialLedger, present: int) -> str:
    retired = sorted(f"{key} ({domain})" for domain, key in retired_in(ledger))
    words = (f"clearing forgets {len(ledger.rows)} run(s) of evidence ({max(0, len(ledger.rows) - present)} of them "
             f"no longer have a critique, so they cannot be rebuilt) and {len(ledger.events)} recorded event(s)")  # fmt: skip
    if ledger.texts:
        words += (f", and the text of {len(ledger.texts)} lesson(s) kept for their trial once their critiques are "
                  "removed")  # fmt: skip
    if retired:
        words += f"; retired lesson(s) would be given again and measured anew: {', '.join(retired)}"
    return words


@app.command("ledger")
@guarded
def ledger_command(
    ctx: typer.Context,
    limit: int = typer.Option(20, "--limit", min=0, metavar="N", help="Newest runs to list (0: none)."),
    clear: bool = typer.Option(False, "--clear", help="Delete the ledger, after saying what that forgets."),
    yes: bool = typer.Option(False, "--yes", "-y", help="With --clear: delete without asking (needed without a terminal)."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON only."),
    reports_dir: ReportsDirOption = None,
) -> None:
    """The trial ledger (reports/meta/trials.jsonl): every run's lessons and outcome, kept whatever
    retention deletes, and every decision as it was taken. Lessons' effects read it."""
    settings = memory_settings(ctx, reports_dir)
    with Memory(settings).index() as index:
        ledger, present = index.ledger(), len(index.present())
    if not clear:
        if json_output:
            echo_json({**_summary(ledger), "rows": [row.as_json() for row in ledger.ordered()[-limit:] if limit]})
        else:
            _show(ledger, limit)
        return
    if not ledger.rows and not ledger.events:
        echo(f"no trial ledger to clear in {settings.meta_dir}")
        return
    echo(_forgets(ledger, present))
    if not yes:
        answer = memory_deps(ctx).ask(f"delete {settings.meta_dir / LEDGER_NAME}?")
        if answer is None:
            raise InputError("memory ledger --clear deletes the evidence of every lesson's trial: pass --yes to "
                             "delete it without a question")  # fmt: skip
        if not answer:
            echo("nothing deleted")
            raise typer.Exit(1)
    ledger.clear()
    echo(f"deleted {settings.meta_dir / LEDGER_NAME}; the next run rebuilds it from the {present} critique(s) kept")


@app.command("reinstate")
@guarded
def reinstate_command(
    ctx: typer.Context,
    key: str = typer.Argument(..., help="The retired lesson's key, as `memory effects` shows it."),
    domain: str | None = typer.Option(None, "--domain", help=f"Its domain, where it is retired in several: one of {', '.join(DOMAINS)}."),
    reports_dir: ReportsDirOption = None,
) -> None:
    """Give a retired lesson back to runs: it starts a new, separate trial (its runs from now on;
    the evidence that retired it stays in the ledger and is not counted again)."""
    settings = memory_settings(ctx, reports_dir)
    chosen = parse_domain(domain) if domain else None
    event = Memory(settings).reinstate(key.strip(), domain=chosen, now=memory_deps(ctx).clock())
    echo(f"{event.key} is reinstated in {event.domain}: runs from now on may be given it again, in a new trial "
         "(`memory effects` shows it measuring)")  # fmt: skip
