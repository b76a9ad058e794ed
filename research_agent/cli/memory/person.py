"""``research-agent memory`` commands for lessons a person writes or approves.

* ``add-lesson TEXT``   write a ``user:`` lesson into ``reports/meta/lessons.yaml`` (and trust it)
* ``trust-lessons``     print the file's lessons, then trust the file as it stands
* ``proposals``         the critic's proposed lessons, quarantined, with the critiques behind each
* ``approve KEY``       make a proposal an ``approved:`` lesson (its text may be edited first)
* ``reject KEY``        drop a proposal; the same text is not proposed again

Approving is a person's act: at a terminal with these commands, or in the web workbench from
this machine (``research-agent serve``), both through :mod:`research_agent.service.person`;
never as an MCP tool (an agent must not approve its own lessons). The trusted hashes and the
decisions live in the user state folder (``Settings.state_dir``), outside ``reports/``.
"""

from __future__ import annotations

from pathlib import Path

import typer

from ...domains import DOMAINS
from ...errors import InputError
from ...memory.store.person.file import ANY_DOMAIN, PersonLesson
from ...memory.store.person.lessons import LessonsFile, read_lessons_file
from ...memory.store.schema import STAGES
from ...memory.store.targets import PERSON_TARGET
from ...run_refs import Runs
from ...service import person
from ...service.memory import Memory
from ..boundary import guarded
from ..terminal import echo
from .group import ReportsDirOption, app, echo_json, memory_deps, memory_settings

__all__ = ["add_lesson_command", "trust_lessons_command", "proposals_command", "approve_command", "reject_command"]

_NAME_HELP = "A short name for the key user:<name> (default: made from the text)."


def _place(ctx: typer.Context, reports_dir: Path | None) -> person.LessonPlace:
    return Memory(memory_settings(ctx, reports_dir)).place


def _show_lesson(lesson: PersonLesson, number: int | None = None) -> None:
    head = f"{number}. " if number is not None else "  "
    echo(f"{head}{lesson.key} ({lesson.stage}; domain {lesson.domain}; target {lesson.target})")
    echo(f"   {lesson.text}")


def _added(written: LessonsFile, lesson: PersonLesson) -> None:
    echo(f"added {lesson.key} to {written.path} (trusted: its hash is kept in your state folder)")
    _show_lesson(lesson)


@app.command("add-lesson")
@guarded
def add_lesson_command(
    ctx: typer.Context,
    text: str = typer.Argument(..., help="The lesson: one line of at most 300 characters."),
    stage: str = typer.Option(..., "--stage", help=f"Which prompt it is for: {' or '.join(STAGES)}."),
    domain: str = typer.Option(..., "--domain", help=f"One of {', '.join(DOMAINS)}, or {ANY_DOMAIN}."),
    target: str | None = typer.Option(None, "--target", help=f"What it should improve (default {PERSON_TARGET})."),
    name: str | None = typer.Option(None, "--name", help=_NAME_HELP),
    reports_dir: ReportsDirOption = None,
) -> None:
    """Add a lesson of your own to reports/meta/lessons.yaml; runs get it from now on, measured like every lesson."""
    place = _place(ctx, reports_dir)
    lesson = person.new_lesson(place, text, stage=stage, domain=domain, target=target, name=name)
    _added(person.add_person_lesson(place, lesson), lesson)


@app.command("trust-lessons")
@guarded
def trust_lessons_command(ctx: typer.Context, reports_dir: ReportsDirOption = None) -> None:
    """Print the lessons in reports/meta/lessons.yaml, then trust the file as it stands (after you have read it)."""
    place = _place(ctx, reports_dir)
    current = read_lessons_file(place.meta_dir, place.state_dir)
    if not current.exists:
        raise InputError(f"no lessons file at {current.path}")
    if current.digest is None:
        raise InputError(f"{current.path}: {current.parsed.problems[0]}")
    echo(f"{current.path}: {len(current.lessons)} lesson(s)")
    for number, lesson in enumerate(current.lessons, start=1):
        _show_lesson(lesson, number)
    for problem in current.parsed.problems:
        echo(f"skipped (not trusted into any prompt): {problem}")
    trusted = person.trust_lessons(place, current.digest)
    echo(f"trusted {trusted.path} as it stands; a later edit needs trust-lessons again")


@app.command("proposals")
@guarded
def proposals_command(
    ctx: typer.Context,
    json_output: bool = typer.Option(False, "--json", help="Print JSON."),
    reports_dir: ReportsDirOption = None,
) -> None:
    """The lessons critics proposed, quarantined until you approve or reject each (none reaches a prompt before)."""
    settings = memory_settings(ctx, reports_dir)
    place = Memory(settings).place
    found = person.undecided_proposals(place, now=memory_deps(ctx).clock())
    if json_output:
        echo_json({"proposals": [p.as_dict() for p in found]})
        return
    if not found:
        echo("no undecided proposals")
        return
    shorts = Runs.scan(settings.reports_dir).shorts()  # the short ids every other command shows
    for proposal in found:
        echo(f"{proposal.key} ({proposal.stage}; {', '.join(proposal.domains)})")
        echo(f"   {proposal.text}")
        echo(f"   proposed by: {', '.join(shorts.get(i, i) for i in proposal.critique_ids)}")
    echo("approve one with `research-agent memory approve KEY [--text ...]`, or drop it with `memory reject KEY`")


@app.command("approve")
@guarded
def approve_command(
    ctx: typer.Context,
    key: str = typer.Argument(..., help="The proposal's key, proposal:<hash>."),
    text: str | None = typer.Option(None, "--text", help="Your edited text (default: the proposal's)."),
    domain: str | None = typer.Option(
        None, "--domain", help=f"One of {', '.join(DOMAINS)}, or {ANY_DOMAIN} (default: the proposing critique's)."
    ),
    target: str | None = typer.Option(None, "--target", help=f"What it should improve (default {PERSON_TARGET})."),
    reports_dir: ReportsDirOption = None,
) -> None:
    """Make a proposed lesson yours: it moves into reports/meta/lessons.yaml as approved:<name>."""
    place, clock = _place(ctx, reports_dir), memory_deps(ctx).clock
    proposal = person.find_proposal(place, key, now=clock())
    lesson = person.approved_lesson(place, proposal, text=text, domain=domain, target=target)
    added = person.approve_proposal(place, proposal, lesson, now=clock())  # dated when decided
    _added(read_lessons_file(place.meta_dir, place.state_dir), added)


@app.command("reject")
@guarded
def reject_command(
    ctx: typer.Context,
    key: str = typer.Argument(..., help="The proposal's key, proposal:<hash>."),
    reports_dir: ReportsDirOption = None,
) -> None:
    """Drop a proposed lesson; the same text (ignoring case, spaces and punctuation) is not proposed again."""
    place, clock = _place(ctx, reports_dir), memory_deps(ctx).clock
    proposal = person.find_proposal(place, key, now=clock())
    person.reject_proposal(place, proposal, now=clock())  # dated when decided
    echo(f"rejected {proposal.key}: {proposal.text}")
