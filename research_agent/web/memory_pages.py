"""``/memory``: what the memory learned, per domain, and a person's acts on the lessons.

The page shows each domain's lessons with their measured effect (the effects API's numbers and
statuses, as data: no status is named here), a small SVG of each delta and its interval, the
score and pass-rate history, the critiques (a failed one can be retried), the critic's
proposals, and the person's ``lessons.yaml``. A lesson's text is the one
:func:`~research_agent.memory.lessons.effects_view.lesson_effects` gives: a person's own text,
or a built lesson's text regenerated now, never text read from a critique.

A decided lesson shows its decision as the trial ledger recorded it: the run of its domain, the
measure that decided it and by how much; a retired one has a "Reinstate" button.

Approving, rejecting, adding, trusting and reinstating are a person's acts: POSTs with the CSRF token, from a
loopback client only, in two steps: the first shows exactly what prompts would carry and asks
for confirmation; only the second (``confirm=1``) writes, through the functions the CLI's
``memory`` commands use (:mod:`research_agent.service.person`).
"""

from __future__ import annotations

import asyncio
import functools
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from ..config import Settings
from ..domains import DOMAINS, parse_domain
from ..errors import InputError
from ..memory.critique.schedule import critique_now
from ..memory.effects.lesson_effects import STATUSES, LessonEffect, decision_words
from ..memory.lessons.effects_view import lesson_effects
from ..memory.store.critique_types import Critique
from ..memory.store.failures import FailedCritique, load_failures
from ..memory.store.index.summary import list_critiques
from ..memory.store.person.file import ANY_DOMAIN, PersonLesson
from ..memory.store.person.lessons import LessonsFile, read_lessons_file
from ..memory.store.person.proposals import Proposal
from ..memory.store.schema import STAGES
from ..memory.store.targets import PERSON_TARGET, TARGETS
from ..memory.store.trials import TrialEvent, open_ledger, reinstate_lesson, retired_in
from ..run_refs import Runs, run_file
from ..service import person
from .app import Workbench, bench_of
from .charts import DeltaBar, History, delta_bars, history
from .forms import Form, Refused, from_loopback, read_form, run_ref
from .pages import answered

__all__ = ["MEMORY_ROUTES", "MemoryView", "memory_view"]


@dataclass
class DomainView:
    """One domain: its lessons' effects and bars, its critiques (newest first) and their history."""

    domain: str
    effects: list[LessonEffect] = field(default_factory=list)
    bars: dict[str, DeltaBar] = field(default_factory=dict)
    critiques: list[Critique] = field(default_factory=list)
    history: History | None = None


@dataclass
class MemoryView:
    """Everything the memory page shows."""

    domains: list[DomainView]
    failed: list[FailedCritique]
    invalid: list[tuple[str, str]]
    proposals: tuple[Proposal, ...]
    lessons_file: LessonsFile
    shorts: dict[str, str]
    reports: set[str]


def memory_view(settings: Settings, now: datetime) -> MemoryView:
    """The memory page's data for ``settings`` at ``now`` (blocking: call it in a thread)."""
    meta, state = settings.meta_dir, settings.state_dir
    effects = lesson_effects(meta, now=now, ttl_days=settings.lesson_ttl_days, state_dir=state)
    loaded = list_critiques(meta, state_dir=state, now=now)
    critiques = [item.critique for item in loaded if item.critique is not None]
    runs = Runs.scan(settings.reports_dir)
    views = {name: DomainView(name) for name in sorted({e.domain for e in effects} | {c.query_domain for c in critiques})}
    for effect in effects:
        views[effect.domain].effects.append(effect)
    for critique in sorted(critiques, key=lambda c: c.timestamp, reverse=True):
        views[critique.query_domain].critiques.append(critique)
    for view in views.values():
        view.bars = delta_bars(view.effects)
        view.history = history(view.critiques) if view.critiques else None
    return MemoryView(
        list(views.values()), load_failures(meta), [(i.name, i.error or "invalid") for i in loaded if i.critique is None],
        person.undecided_proposals(_place(settings), now=now), read_lessons_file(meta, state), runs.shorts(),
        set(runs.ids("report")),
    )  # fmt: skip


def _place(settings: Settings) -> person.LessonPlace:
    return person.LessonPlace(settings.meta_dir, settings.state_dir)


def _choices() -> dict[str, Any]:
    return {"stages": STAGES, "domains": (*DOMAINS, ANY_DOMAIN), "targets": TARGETS, "person_target": PERSON_TARGET}


@answered
async def memory(request: Request) -> Response:
    bench = bench_of(request)
    view = await asyncio.to_thread(memory_view, bench.settings(), bench.now())
    return bench.page("memory.html", here="memory", view=view, statuses=STATUSES, decision_words=decision_words,
                      **_choices())  # fmt: skip


@answered
async def retry(request: Request) -> Response:
    bench = bench_of(request)
    await read_form(request, bench.csrf)
    ref = run_ref(request.path_params["ref"])
    settings = bench.settings()
    runs = await asyncio.to_thread(Runs.scan, settings.reports_dir)
    run_id = runs.resolve(ref, "failed")
    record = run_file(settings.reports_dir, "record", run_id)
    if not record.is_file():
        raise InputError(f"cannot retry {runs.short(run_id)}: its run record is gone")
    work = functools.partial(critique_now, record, settings, now=bench.now())
    job = bench.board.critique(run_id, runs.short(run_id), work)
    return RedirectResponse(f"/runs/{job.key}", status_code=303)


async def _act(request: Request) -> tuple[Workbench, Form, person.LessonPlace]:
    """A person's act: loopback client and CSRF token checked, the form read."""
    bench = bench_of(request)
    from_loopback(request)
    form = await read_form(request, bench.csrf)
    return bench, form, _place(bench.settings())


def _proposal(request: Request, place: person.LessonPlace) -> Proposal:
    digest = request.path_params["digest"]
    if not (len(digest) == 10 and all(c in "0123456789abcdef" for c in digest)):
        raise Refused(404, "no such proposal")
    return person.find_proposal(place, digest, now=bench_of(request).now())


def _confirm(bench: Workbench, *, action: str, heading: str, lesson: PersonLesson | None, fields: dict[str, str],
             button: str, **more: Any) -> Response:  # fmt: skip
    return bench.page("confirm.html", here="memory", action=action, heading=heading, lesson=lesson,
                      fields=fields, button=button, targets=TARGETS, **more)  # fmt: skip


def _done(bench: Workbench, heading: str, message: str, lesson: PersonLesson | None = None) -> Response:
    return bench.page("confirm.html", here="memory", heading=heading, done=message, lesson=lesson, targets=TARGETS)


@answered
async def approve(request: Request) -> Response:
    bench, form, place = await _act(request)
    proposal = await asyncio.to_thread(_proposal, request, place)
    lesson = await asyncio.to_thread(
        person.approved_lesson, place, proposal, text=form.get("text", proposal.text), domain=form.get("domain"),
        target=form.get("target"),
    )  # fmt: skip
    if not form.flag("confirm"):
        fields = {"text": lesson.text, "domain": lesson.domain, "target": lesson.target}
        return _confirm(bench, action=request.url.path, heading="Approve this proposal?", lesson=lesson,
                        fields=fields, button="Approve", proposal=proposal)  # fmt: skip
    added = await asyncio.to_thread(person.approve_proposal, place, proposal, lesson, now=bench.now())
    return _done(bench, "Approved", f"{proposal.key} is now the lesson {added.key} in lessons.yaml (trusted).", added)


@answered
async def reject(request: Request) -> Response:
    bench, form, place = await _act(request)
    proposal = await asyncio.to_thread(_proposal, request, place)
    if not form.flag("confirm"):
        return _confirm(bench, action=request.url.path, heading="Reject this proposal?", lesson=None, fields={},
                        button="Reject", proposal=proposal)  # fmt: skip
    await asyncio.to_thread(person.reject_proposal, place, proposal, now=bench.now())
    return _done(bench, "Rejected", f"{proposal.key} is rejected; the same text is not proposed again.")


@answered
async def add(request: Request) -> Response:
    bench, form, place = await _act(request)
    lesson = await asyncio.to_thread(
        person.new_lesson, place, form.get("text"), stage=form.get("stage"), domain=form.get("domain"),
        target=form.get("target"), name=form.get("name").strip() or None,
    )  # fmt: skip
    if not form.flag("confirm"):
        fields = {"text": lesson.text, "stage": lesson.stage, "domain": lesson.domain, "target": lesson.target,
                  "name": lesson.key.split(":", 1)[1]}  # fmt: skip
        return _confirm(bench, action=request.url.path, heading="Add this lesson?", lesson=lesson, fields=fields,
                        button="Add the lesson")  # fmt: skip
    await asyncio.to_thread(person.add_person_lesson, place, lesson)
    return _done(bench, "Added", f"{lesson.key} is in lessons.yaml (trusted); runs get it from now on.", lesson)


@answered
async def trust(request: Request) -> Response:
    bench, form, place = await _act(request)
    current = await asyncio.to_thread(read_lessons_file, place.meta_dir, place.state_dir)
    if not current.exists or current.digest is None:
        raise InputError(f"no readable lessons file at {current.path}")
    if not form.flag("confirm"):
        return _confirm(bench, action=request.url.path, heading="Trust lessons.yaml as it stands?", lesson=None,
                        fields={"digest": current.digest}, button="Trust the file", current=current)  # fmt: skip
    trusted = await asyncio.to_thread(person.trust_lessons, place, form.get("digest") or "-")
    return _done(bench, "Trusted", f"{trusted.path} is trusted as it stands: {len(trusted.lessons)} lesson(s) reach "
                                   "the prompts; a later edit needs trusting again.")  # fmt: skip


def _retired(place: person.LessonPlace, key: str, domain: str) -> TrialEvent:
    """The decision that retired ``key`` in ``domain`` (InputError when it is not retired there)."""
    where = parse_domain(domain)
    found = retired_in(open_ledger(place.meta_dir, place.state_dir), key).get((where, key))
    if found is None:
        raise InputError(f"{key[:120]} is not retired in {where}: there is nothing to reinstate")
    return found


@answered
async def reinstate(request: Request) -> Response:
    """Give a retired lesson back to runs, in a new trial (what ``memory reinstate`` does)."""
    bench, form, place = await _act(request)
    key, domain = form.get("key").strip(), form.get("domain").strip()
    decision = await asyncio.to_thread(_retired, place, key, domain)
    if not form.flag("confirm"):
        return _confirm(bench, action=request.url.path, heading="Reinstate this lesson?", lesson=None,
                        fields={"key": key, "domain": decision.domain}, button="Reinstate",
                        reinstating=decision)  # fmt: skip
    event = await asyncio.to_thread(
        reinstate_lesson, place.meta_dir, place.state_dir, key, domain=decision.domain, now=bench.now()
    )
    return _done(bench, "Reinstated", f"{event.key} is reinstated in {event.domain}: runs may be given it again, "
                                      "in a new trial of its own; the evidence that retired it is not counted again.")  # fmt: skip


MEMORY_ROUTES = [
    Route("/memory", memory, methods=["GET"]),
    Route("/memory/retry/{ref}", retry, methods=["POST"]),
    Route("/memory/proposals/{digest}/approve", approve, methods=["POST"]),
    Route("/memory/proposals/{digest}/reject", reject, methods=["POST"]),
    Route("/memory/lessons/add", add, methods=["POST"]),
    Route("/memory/lessons/trust", trust, methods=["POST"]),
    Route("/memory/lessons/reinstate", reinstate, methods=["POST"]),
]
