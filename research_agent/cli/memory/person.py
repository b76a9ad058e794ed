"""``research-agent memory`` commands for lessons a person writes or approves.

* ``add-lesson TEXT``   write a ``user:`` lesson into ``reports/meta/lessons.yaml`` (and trust it)
* ``trust-lessons``     print the file's lessons, then trust the file as it stands
* ``proposals``         the critic's proposed lessons, quarantined, with the critiques behind each
* ``approve KEY``       make a proposal an ``approved:`` lesson (its text may be edited first)
* ``reject KEY``        drop a proposal; the same text is not proposed again

Approving is a person's act at a terminal: these commands exist only in the CLI, never as
MCP tools (an agent must not approve its own lessons). The trusted hashes and the decisions
live in the user state folder (``Settings.state_dir``), outside ``reports/``.
"""

from __future__ import annotations

from collections.abc import Sequence

import typer

from ...config import Settings
from ...domains import DOMAINS, parse_domain
from ...errors import InputError
from ...memory.store.files import load_all
from ...memory.store.person.file import ANY_DOMAIN, PersonLesson, slug_of, text_problem
from ...memory.store.person.lessons import LessonsFile, add_lesson, read_lessons_file, trust_lessons_file
from ...memory.store.person.proposals import (
    PROPOSAL_PREFIX,
    Proposal,
    collect_proposals,
    decide_proposal,
    decided_texts,
)
from ...memory.store.schema import STAGES
from ...memory.store.targets import PERSON_TARGET, TARGETS
from ..boundary import guarded
from ..terminal import echo
from .group import ReportsDirOption, app, echo_json, memory_deps, memory_settings

__all__ = ["add_lesson_command", "trust_lessons_command", "proposals_command", "approve_command", "reject_command"]

_NAME_HELP = "A short name for the key user:<name> (default: made from the text)."


def _domain(value: str) -> str:
    return ANY_DOMAIN if value.strip().lower() == ANY_DOMAIN else parse_domain(value)


def _stage(value: str) -> str:
    if value not in STAGES:
        raise InputError(f"unknown stage {value[:40]!r}: choose one of {', '.join(STAGES)}")
    return value


def _target(value: str | None) -> str:
    if value is None:
        return PERSON_TARGET
    if value not in TARGETS:
        raise InputError(f"unknown target {value[:60]!r}: choose one of {', '.join(TARGETS)}")
    return value


def _text(value: str) -> str:
    problem = text_problem(value)
    if problem is not None:
        raise InputError(f"the lesson text {problem}")
    return value


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
    settings = memory_settings(ctx, reports_dir)
    current = read_lessons_file(settings.meta_dir, settings.state_dir)
    taken = [lesson.key.split(":", 1)[1] for lesson in current.lessons]
    key = f"user:{name if name is not None else slug_of(text, taken)}"
    lesson = PersonLesson(key, _stage(stage), _domain(domain), _text(text), _target(target))
    _added(add_lesson(settings.meta_dir, settings.state_dir, lesson), lesson)


@app.command("trust-lessons")
@guarded
def trust_lessons_command(ctx: typer.Context, reports_dir: ReportsDirOption = None) -> None:
    """Print the lessons in reports/meta/lessons.yaml, then trust the file as it stands (after you have read it)."""
    settings = memory_settings(ctx, reports_dir)
    current = read_lessons_file(settings.meta_dir, settings.state_dir)
    if not current.exists:
        raise InputError(f"no lessons file at {current.path}")
    if current.digest is None:
        raise InputError(f"{current.path}: {current.parsed.problems[0]}")
    echo(f"{current.path}: {len(current.lessons)} lesson(s)")
    for number, lesson in enumerate(current.lessons, start=1):
        _show_lesson(lesson, number)
    for problem in current.parsed.problems:
        echo(f"skipped (not trusted into any prompt): {problem}")
    trusted = trust_lessons_file(settings.meta_dir, settings.state_dir, expected_digest=current.digest)
    echo(f"trusted {trusted.path} as it stands; a later edit needs trust-lessons again")


def _proposals(ctx: typer.Context, settings: Settings) -> tuple[Sequence[Proposal], dict[str, str]]:
    loaded = load_all(settings.meta_dir, now=memory_deps(ctx).clock())
    decided = decided_texts(settings.state_dir)
    critiques = [item.critique for item in loaded if item.critique is not None]
    return collect_proposals(critiques, decided), decided


def _find(ctx: typer.Context, settings: Settings, key: str) -> Proposal:
    wanted = key if key.startswith(PROPOSAL_PREFIX) else PROPOSAL_PREFIX + key
    found, _ = _proposals(ctx, settings)
    for proposal in found:
        if proposal.key == wanted:
            return proposal
    raise InputError(f"no undecided proposal {wanted[:60]!r} (see `research-agent memory proposals`)")


@app.command("proposals")
@guarded
def proposals_command(
    ctx: typer.Context,
    json_output: bool = typer.Option(False, "--json", help="Print JSON."),
    reports_dir: ReportsDirOption = None,
) -> None:
    """The lessons critics proposed, quarantined until you approve or reject each (none reaches a prompt before)."""
    found, _ = _proposals(ctx, memory_settings(ctx, reports_dir))
    if json_output:
        echo_json({"proposals": [p.as_dict() for p in found]})
        return
    if not found:
        echo("no undecided proposals")
        return
    for proposal in found:
        echo(f"{proposal.key} ({proposal.stage}; {', '.join(proposal.domains)})")
        echo(f"   {proposal.text}")
        echo(f"   proposed by: {', '.join(proposal.critique_ids)}")
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
    settings = memory_settings(ctx, reports_dir)
    proposal = _find(ctx, settings, key)
    chosen = _text(text if text is not None else proposal.text)
    where, aim = (_domain(domain) if domain is not None else proposal.domains[0]), _target(target)

    def lesson(current: LessonsFile) -> PersonLesson:  # named from the file as it stands under the lock
        taken = [lesson.key.split(":", 1)[1] for lesson in current.lessons]
        return PersonLesson(f"approved:{slug_of(chosen, taken)}", proposal.stage, where, chosen, aim)

    now = memory_deps(ctx).clock()
    added = decide_proposal(settings.meta_dir, settings.state_dir, proposal.text, "approved", lesson, now=now)
    _added(read_lessons_file(settings.meta_dir, settings.state_dir), added)


@app.command("reject")
@guarded
def reject_command(
    ctx: typer.Context,
    key: str = typer.Argument(..., help="The proposal's key, proposal:<hash>."),
    reports_dir: ReportsDirOption = None,
) -> None:
    """Drop a proposed lesson; the same text (ignoring case, spaces and punctuation) is not proposed again."""
    settings = memory_settings(ctx, reports_dir)
    proposal = _find(ctx, settings, key)
    decide_proposal(settings.meta_dir, settings.state_dir, proposal.text, "rejected", now=memory_deps(ctx).clock())
    echo(f"rejected {proposal.key}: {proposal.text}")
