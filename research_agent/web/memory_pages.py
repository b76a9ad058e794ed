"""``/memory``: what the memory learned, per domain, and a person's acts on the lessons.

The page shows each domain's lessons with their measured effect (the effects API's numbers and
statuses, as data: no status is named here), a small SVG of each delta and its interval, the
score and pass-rate history, the critiques (a failed one can be retried), the critic's
proposals, and the person's ``lessons.yaml``. A lesson's text is the one
:func:`~research_agent.memory.lessons.effects_view.lesson_effects` gives: a person's own text,
or a built lesson's text regenerated now, never text read from a critique.

A decided lesson shows its decision as the trial ledger recorded it: the run of its domain, the
measure that decided it and by how much; a retired one has a "Reinstate" button.

Approving, rejecting, adding, trusting and reinstating are a person's acts, from a loopback client only, in
two steps: the first (a GET, which writes nothing; a POST without ``confirm`` does the same) shows
exactly what prompts would carry and asks for confirmation; only the second, a POST with the CSRF
token and ``confirm=1``, writes, through the functions the CLI's ``memory`` commands use
(:mod:`research_agent.service.person`), then redirects to the memory page, which says what was
done (so Back and reload never send it again). A lesson text that is refused comes back on the
memory page as it was typed, with the reason beside it.
"""

from __future__ import annotations

import asyncio
import functools
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from ..config import Settings
from ..domains import DOMAINS, parse_domain
from ..errors import InputError
from ..memory.critique.schedule import critique_now
from ..memory.effects.lesson_effects import STATUSES, LessonEffect, decision_words
from ..memory.store.critique_types import Critique
from ..memory.store.failures import FailedCritique, load_failures
from ..memory.store.person.file import ANY_DOMAIN, PersonLesson
from ..memory.store.person.lessons import LessonsFile, read_lessons_file
from ..memory.store.person.proposals import Proposal
from ..memory.store.schema import STAGES
from ..memory.store.targets import PERSON_TARGET, TARGETS
from ..memory.store.trials import TrialEvent, open_ledger, reinstate_lesson, retired_in
from ..run_refs import Runs, run_file
from ..service import person
from ..service.memory import Memory
from ..text.controls import one_line
from .app import Workbench, answered, bench_of
from .charts import DeltaBar, History, delta_bars, history
from .forms import Form, RequestRefused, from_loopback, read_form, run_ref

__all__ = ["MEMORY_ROUTES", "MemoryView", "memory_view"]

MAX_TYPED = 2000  # characters of a refused field shown back (the form's own limits are lower)


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
    memory = Memory(settings)
    effects = memory.effects(now=now)
    loaded = memory.critiques(now=now)
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
        list(views.values()), load_failures(memory.meta_dir),
        [(i.name, i.error or "invalid") for i in loaded if i.critique is None],
        person.undecided_proposals(memory.place, now=now), memory.lessons_file(), runs.shorts(), set(runs.ids("report")),
    )  # fmt: skip


def _place(settings: Settings) -> person.LessonPlace:
    return Memory(settings).place


def _choices() -> dict[str, Any]:
    return {"stages": STAGES, "domains": (*DOMAINS, ANY_DOMAIN), "targets": TARGETS, "person_target": PERSON_TARGET}


@dataclass(frozen=True)
class Typed:
    """A lesson form refused: which one (``add``, or a proposal's digest), why, and what was typed."""

    form: str
    message: str
    values: dict[str, str]


async def _memory_page(request: Request, *, status: int = 200, typed: Typed | None = None) -> Response:
    bench = bench_of(request)
    settings = bench.settings()
    view = await asyncio.to_thread(memory_view, settings, bench.now())
    said = _said(request, view) if typed is None else None
    return bench.page("memory.html", status=status, here="memory", view=view, statuses=STATUSES, typed=typed,
                      said=said, decision_words=decision_words, **_choices())  # fmt: skip


def _said(request: Request, view: MemoryView) -> dict[str, Any] | None:
    """What the act that redirected here did, from its query (a key the lessons file holds, a
    proposal's digest): a heading, a line and the lesson, if any; None for a plain visit."""
    query = request.query_params
    for act, heading in (("approved", "Approved"), ("added", "Added")):
        key = query.get(act, "")
        lesson = next((held for held in view.lessons_file.lessons if key and held.key == key), None)
        if lesson is not None:
            return {"heading": heading, "lesson": lesson, "message": f"{lesson.key} is in lessons.yaml (trusted); "
                    "runs get it from now on."}  # fmt: skip
    digest = query.get("rejected", "")
    if len(digest) == 10 and all(c in "0123456789abcdef" for c in digest):
        return {"heading": "Rejected", "message": f"proposal:{digest} is rejected; the same text is not proposed again."}
    domain, _, key = query.get("reinstated", "").partition(":")
    if key:
        return {"heading": "Reinstated", "message": f"{key} is reinstated in {domain}: runs may be given it again, in a "
                "new trial of its own; the evidence that retired it is not counted again."}  # fmt: skip
    if query.get("trusted") == "1" and view.lessons_file.trusted:
        return {"heading": "Trusted", "message": f"lessons.yaml is trusted as it stands: {len(view.lessons_file.lessons)} "
                "lesson(s) reach the prompts; a later edit needs trusting again."}  # fmt: skip
    return None


@answered
async def memory(request: Request) -> Response:
    return await _memory_page(request)


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
    """A person's act: loopback client checked; a POST's form read and its CSRF token checked, a
    GET's query read (a GET only asks for the confirmation: it writes nothing)."""
    bench = bench_of(request)
    from_loopback(request)
    if request.method == "GET":
        return bench, Form(list(request.query_params.multi_items())), _place(bench.settings())
    form = await read_form(request, bench.csrf)
    return bench, form, _place(bench.settings())


def _writes(request: Request, form: Form) -> bool:
    """Whether this step writes: a POST with ``confirm=1`` (a GET never does)."""
    return request.method == "POST" and form.flag("confirm")


def _proposal(request: Request, place: person.LessonPlace) -> Proposal:
    digest = request.path_params["digest"]
    if not (len(digest) == 10 and all(c in "0123456789abcdef" for c in digest)):
        raise RequestRefused(404, "no such proposal")
    return person.find_proposal(place, digest, now=bench_of(request).now())


def _confirm(bench: Workbench, *, action: str, heading: str, lesson: PersonLesson | None, fields: dict[str, str],
             button: str, **more: Any) -> Response:  # fmt: skip
    return bench.page("confirm.html", here="memory", action=action, heading=heading, lesson=lesson,
                      fields=fields, button=button, targets=TARGETS, **more)  # fmt: skip


def _done(act: str, value: str, anchor: str = "your-lessons") -> Response:
    """After a write: back to the memory page, which says what was done (so Back never sends it again)."""
    return RedirectResponse(f"/memory?{urlencode({act: value})}#{anchor}", status_code=303)


def _typed(form: Form, *names: str) -> dict[str, str]:
    return {name: form.get(name)[:MAX_TYPED] for name in names}


@answered
async def approve(request: Request) -> Response:
    bench, form, place = await _act(request)
    proposal = await asyncio.to_thread(_proposal, request, place)
    try:
        lesson = await asyncio.to_thread(
            person.approved_lesson, place, proposal, text=form.get("text", proposal.text), domain=form.get("domain"),
            target=form.get("target"),
        )  # fmt: skip
    except InputError as exc:  # the memory page again, the edit as it was typed beside the reason
        digest = proposal.key.split(":", 1)[1]
        typed = Typed(digest, one_line(exc), _typed(form, "text", "domain", "target"))
        return await _memory_page(request, status=400, typed=typed)
    if not _writes(request, form):
        fields = {"text": lesson.text, "domain": lesson.domain, "target": lesson.target}
        return _confirm(bench, action=request.url.path, heading="Approve this proposal?", lesson=lesson,
                        fields=fields, button="Approve", proposal=proposal)  # fmt: skip
    added = await asyncio.to_thread(person.approve_proposal, place, proposal, lesson, now=bench.now())
    return _done("approved", added.key)


@answered
async def reject(request: Request) -> Response:
    bench, form, place = await _act(request)
    proposal = await asyncio.to_thread(_proposal, request, place)
    if not _writes(request, form):
        return _confirm(bench, action=request.url.path, heading="Reject this proposal?", lesson=None, fields={},
                        button="Reject", proposal=proposal)  # fmt: skip
    await asyncio.to_thread(person.reject_proposal, place, proposal, now=bench.now())
    return _done("rejected", proposal.key.split(":", 1)[1], "proposals")


@answered
async def add(request: Request) -> Response:
    bench, form, place = await _act(request)
    try:
        lesson = await asyncio.to_thread(
            person.new_lesson, place, form.get("text"), stage=form.get("stage"), domain=form.get("domain"),
            target=form.get("target"), name=form.get("name").strip() or None,
        )  # fmt: skip
        if _writes(request, form):
            await asyncio.to_thread(person.add_person_lesson, place, lesson)
    except InputError as exc:  # the memory page again, the form as it was typed beside the reason
        typed = Typed("add", one_line(exc), _typed(form, "text", "stage", "domain", "target", "name"))
        return await _memory_page(request, status=400, typed=typed)
    if not _writes(request, form):
        fields = {"text": lesson.text, "stage": lesson.stage, "domain": lesson.domain, "target": lesson.target,
                  "name": lesson.key.split(":", 1)[1]}  # fmt: skip
        return _confirm(bench, action=request.url.path, heading="Add this lesson?", lesson=lesson, fields=fields,
                        button="Add the lesson")  # fmt: skip
    return _done("added", lesson.key)


@answered
async def trust(request: Request) -> Response:
    bench, form, place = await _act(request)
    current = await asyncio.to_thread(read_lessons_file, place.meta_dir, place.state_dir)
    if not current.exists or current.digest is None:
        raise InputError(f"no readable lessons file at {current.path}")
    if not _writes(request, form):
        return _confirm(bench, action=request.url.path, heading="Trust lessons.yaml as it stands?", lesson=None,
                        fields={"digest": current.digest}, button="Trust the file", current=current)  # fmt: skip
    await asyncio.to_thread(person.trust_lessons, place, form.get("digest") or "-")
    return _done("trusted", "1")


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
    if not _writes(request, form):
        return _confirm(bench, action=request.url.path, heading="Reinstate this lesson?", lesson=None,
                        fields={"key": key, "domain": decision.domain}, button="Reinstate",
                        reinstating=decision)  # fmt: skip
    event = await asyncio.to_thread(
        reinstate_lesson, place.meta_dir, place.state_dir, key, domain=decision.domain, now=bench.now()
    )
    return _done("reinstated", f"{event.domain}:{event.key}", anchor=f"domain-{event.domain}")


MEMORY_ROUTES = [
    Route("/memory", memory, methods=["GET"]),
    Route("/memory/retry/{ref}", retry, methods=["POST"]),
    Route("/memory/proposals/{digest}/approve", approve, methods=["GET", "POST"]),
    Route("/memory/proposals/{digest}/reject", reject, methods=["GET", "POST"]),
    Route("/memory/lessons/add", add, methods=["GET", "POST"]),
    Route("/memory/lessons/trust", trust, methods=["GET", "POST"]),
    Route("/memory/lessons/reinstate", reinstate, methods=["GET", "POST"]),
]
