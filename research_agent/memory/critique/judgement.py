"""Critique one finished run: facts from its record, one model judgement, one YAML file.

:func:`critique_run` reads ``run-<id>.yaml`` into the typed run record (safely, size-capped,
schema-checked) and the report it names, computes facts the program knows exactly
(:class:`~research_agent.memory.critique.facts.RunFacts`), asks the fast
model once at temperature 0 against the rubric in ``prompts/critique.md``, cleans the
answer (scores clamped to 1-5, ``geographic_balance`` may be null: not applicable; free
text sanitized to one line of at most 200 characters, at most 5 items), writes
``critique-<id>.yaml`` (with the measured ``facts:`` block) next to the run record,
prunes to the retention limit and logs one line to ``critique.log``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ...config import Settings
from ...errors import InvalidModelOutput, ResearchError
from ...files.safefile import check_folder_inside
from ...llm import ChatModel, ChatRequest, UsageRecorder
from ...prompts import render
from ...record import RunRecord, WithheldLesson, read_run_record
from ...run_refs import named_run_id, short_id
from ...text.sanitize import sanitize, wrap_data
from ..store.critique_types import Critique, CritiqueUsage, LessonUse, Scores, SkepticFlag, tag_applies
from ..store.failures import clear_failure, log_failure
from ..store.files import append_log, critique_file_name, prune_critiques, write_critique
from ..store.person.proposals import clean_proposals
from ..store.schema import (
    DIMENSION_LABELS,
    DIMENSIONS,
    LESSON_KEY,
    MAX_ITEMS,
    MAX_LESSON_TEXT,
    MAX_TEXT,
    STAGES,
    TAGS,
    WITHHELD_REASONS,
    is_pass,
    mean_of,
    ramp_reason,
)
from ..store.trials import critique_lines, open_ledger
from ..store.trials.rows import excluded_lessons
from .evidence import MAX_REPORT_BYTES, locate_report, read_report_file
from .facts import RunFacts, compute_facts
from .proposing import not_to_propose

__all__ = [
    "ANSWER_SCHEMA",
    "MAX_REPORT_BYTES",
    "REPORT_PROMPT_CHARS",
    "read_report",
    "build_request",
    "critique_from_answer",
    "critique_run",
    "summarize",
]

REPORT_PROMPT_CHARS = 30_000  # about 7,500 tokens: a deep report fits whole
NULLABLE = frozenset({"geographic_balance"})  # the dimensions a critic may call not applicable


def _score_schema(dimension: str) -> dict[str, Any]:
    """A 1-5 enum (a grammar keeps it in range); null too where "not applicable" is allowed."""
    if dimension in NULLABLE:
        return {"type": ["integer", "null"], "enum": [1, 2, 3, 4, 5, None]}
    return {"type": "integer", "enum": [1, 2, 3, 4, 5]}


ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["scores", "weaknesses", "suggestions", "tags"],
    "properties": {
        "scores": {
            "type": "object",
            "additionalProperties": False,
            "required": list(DIMENSIONS),
            "properties": {d: _score_schema(d) for d in DIMENSIONS},
        },
        "weaknesses": {"type": "array", "items": {"type": "string"}},
        "suggestions": {"type": "array", "items": {"type": "string"}},
        "tags": {"type": "array", "items": {"type": "string", "enum": list(TAGS)}},
        # optional: lessons no template covers, quarantined until a person approves one
        "proposed_lessons": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["stage", "text"],
                "properties": {"stage": {"type": "string", "enum": list(STAGES)}, "text": {"type": "string"}},
            },
        },
    },
}

_LENS = re.compile(r"[^a-z0-9_]+")


def read_report(record_path: Path, record: RunRecord) -> tuple[Path, str]:
    """Find and read the report a run record names: a regular file (not a symlink) inside
    the reports folder the record sits in (``<reports>/meta/run-<id>.yaml``), as named or
    by its name there; anything else is an InputError."""
    reports_dir = Path(record_path).absolute().parent.parent
    path = locate_report(reports_dir, record.report_path, record.id)
    return path, read_report_file(path, reports_dir)


_FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.S)
_LESSONS_SECTION = re.compile(r"^## Lessons Applied\b.*\Z", re.S | re.M)


def _gradable(report: str) -> str:
    """The report without what the prompt already states (front matter) or what is not graded (lessons)."""
    return _LESSONS_SECTION.sub("", _FRONT_MATTER.sub("", report, count=1)).strip()


def build_request(facts: RunFacts, report: str) -> ChatRequest:
    """The one structured call: fast tier, temperature 0, outside text sanitized and wrapped as data."""
    prompt = render(
        "critique",
        query=sanitize(facts.query, single_line=True, max_chars=500),
        domain=facts.domain,
        mode=facts.mode,
        facts=wrap_data("run facts (computed by the program)", facts.as_text()),
        report=wrap_data("report to grade", sanitize(_gradable(report), max_chars=REPORT_PROMPT_CHARS)),
    )
    return ChatRequest(
        stage="critique",
        system=prompt.system,
        user=prompt.user,
        schema=ANSWER_SCHEMA,
        temperature=0.0,
        tier="fast",
        max_tokens=900,
    )


# What a weak model writes for "nothing": not a weakness or a suggestion (it was stored as 'null').
_NOTHING = frozenset({"null", "none", "nil", "n/a", "na", "undefined", "nothing", "-", "--", "..."})


def _clean_texts(values: Any) -> tuple[str, ...]:
    out: list[str] = []
    for value in values if isinstance(values, list) else []:
        if not isinstance(value, str):
            continue
        text = sanitize(value, single_line=True, max_chars=MAX_TEXT)
        if text.strip(" .'\"`").lower() in _NOTHING:
            continue
        if text and text not in out:
            out.append(text)
        if len(out) == MAX_ITEMS:
            break
    return tuple(out)


def _clamp_score(value: Any, dimension: str) -> int | None:
    if value is None and dimension in NULLABLE:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise InvalidModelOutput(f"critique answer: {dimension} is not a score", stage="critique")
    try:
        number = float(value)
    except ValueError:
        raise InvalidModelOutput(f"critique answer: {dimension} is not a score", stage="critique") from None
    if math.isnan(number):
        raise InvalidModelOutput(f"critique answer: {dimension} is not a score", stage="critique")
    return min(5, max(1, round(number)))


def _skeptic_flags(record: RunRecord) -> tuple[SkepticFlag, ...]:
    rank = {"critical": 0, "concern": 1}
    notable = sorted((f for f in record.skeptic.findings if f.severity in rank), key=lambda f: rank[f.severity])
    flags = []
    for finding in notable[:MAX_ITEMS]:
        lens = _LENS.sub("_", (finding.lens or "skeptic").lower()).strip("_")[:40] or "skeptic"
        if not lens[0].isalpha():
            lens = f"lens_{lens}"[:40]
        detail = f"{finding.severity}: {finding.claim} - {finding.reason}"
        flags.append(SkepticFlag(lens, sanitize(detail, single_line=True, max_chars=MAX_TEXT)))
    return tuple(flags)


def _applied(record: RunRecord) -> tuple[bool, tuple[LessonUse, ...]]:
    """The keyed lessons the run was given (a lesson without a valid key or stage is not recorded)."""
    applied = []
    for lesson in record.lessons.applied:
        text = sanitize(lesson.text, single_line=True, max_chars=MAX_LESSON_TEXT)
        if text and LESSON_KEY.match(lesson.key) and lesson.stage in STAGES:
            applied.append(LessonUse(text, key=lesson.key, stage=lesson.stage, p=lesson.p))
    return record.lessons.adaptive and bool(applied), tuple(applied[: MAX_ITEMS * 2])


def _withheld(record: RunRecord) -> tuple[WithheldLesson, ...]:
    """The record's withheld lessons that the critique file can hold: a valid key and reason,
    each key once."""
    first: dict[str, WithheldLesson] = {}
    for lesson in record.lessons.withheld:
        if LESSON_KEY.match(lesson.key) and lesson.reason in WITHHELD_REASONS:
            first.setdefault(lesson.key, lesson)
    return tuple(first.values())[:20]


def _answer_scores(answer: Any) -> dict[str, int | None]:
    """The answer's scores, each clamped to 1-5 (null where not applicable may be); InvalidModelOutput
    when there are none, or one is missing."""
    if not isinstance(answer, dict) or not isinstance(answer.get("scores"), dict):
        raise InvalidModelOutput("critique answer has no scores object", stage="critique")
    raw = answer["scores"]
    missing = [d for d in DIMENSIONS if d not in raw]
    if missing:
        raise InvalidModelOutput(f"critique answer has no score for {', '.join(missing)}", stage="critique")
    return {d: _clamp_score(raw[d], d) for d in DIMENSIONS}


def critique_from_answer(
    record: RunRecord,
    facts: RunFacts,
    answer: Any,
    *,
    timestamp: datetime,
    report_path: str,
    usage: CritiqueUsage | None = None,
    skip_proposals: Collection[str] = (),
    held_out: str | None = None,
    run_kind: str = "",
) -> Critique:
    """Turn the model's answer and the run's facts into a clean, valid Critique.

    ``usage``: what the critique's own model calls cost, stored in the file.
    ``skip_proposals``: hashes of texts not to propose again (decided by a person, or already
    a lesson; see :mod:`..store.proposals`). ``held_out``: the eval that holds the run out of
    learning (its critique builds no lesson). ``run_kind``: ``ab`` for an arm of ``memory ab``.
    A suspect critique (scores that are a ramp) and one of a report its own review rejected
    propose nothing: the critique types promise that neither teaches.
    """
    scores = _answer_scores(answer)
    model_tags = [t for t in answer.get("tags") or [] if isinstance(t, str) and t in TAGS]
    tags = tuple(t for t in dict.fromkeys([*facts.tags(), *model_tags]) if tag_applies(t, scores["geographic_balance"]))
    tags = tags[:MAX_ITEMS]
    adaptive, applied = _applied(record)
    review, suspect = "rejected" if record.review is not None and record.review.rejected else None, ramp_reason(scores)
    return Critique(
        id=record.id,
        query=sanitize(record.query, single_line=True, max_chars=500) or "(empty query)",
        query_domain=facts.domain,
        mode=facts.mode,
        timestamp=timestamp.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        model_version=sanitize(record.model, single_line=True, max_chars=200),
        report_path=sanitize(report_path, single_line=True, max_chars=1000),
        scores=Scores(**scores),  # type: ignore[arg-type]  # None only where valid
        mean_score=mean_of(scores),
        overall_pass=is_pass(scores, review),
        weaknesses=_clean_texts(answer.get("weaknesses")),
        suggestions=_clean_texts(answer.get("suggestions")),
        tags=tags,
        skeptic_flags=_skeptic_flags(record),
        gate_decision=facts.gate_decision,
        source_count=record.kept_count,  # the critique file keeps its names until its next version
        dropped_count=record.dropped_count,
        adaptive=adaptive,
        lessons_applied=applied,
        lessons_withheld=_withheld(record),
        lessons_available=record.lessons.available,
        facts=facts.measured,
        usage=usage,
        suspect=suspect,
        review=review,
        held_out=held_out,
        run_kind=run_kind,
        plan_by_person=record.plan_by_person,
        proposed_lessons=() if suspect or review else clean_proposals(answer.get("proposed_lessons"), skip=skip_proposals),
    )


async def critique_run(
    run_record_path: Path,
    model: ChatModel,
    *,
    settings: Settings,
    now: datetime | None = None,
    meta_dir: Path | None = None,
    held_out: str | None = None,
    run_kind: str = "",
) -> Critique:
    """Critique the run recorded at ``run_record_path``; write it, add its run's row to the trial
    ledger (:mod:`..store.trials`: the evidence retention never deletes), prune and log; return
    the critique. ``held_out`` and ``run_kind``: as for :func:`critique_from_answer`.

    The critique goes into ``meta_dir`` (default: the run record's folder), which must not lead out
    of its parent folder. Every model call is counted into its ``usage``. A failure is logged to
    ``critique.log`` there and re-raised."""
    run_record_path = Path(run_record_path)
    folder = Path(meta_dir) if meta_dir is not None else run_record_path.absolute().parent
    subject, run_id = run_record_path.name, named_run_id(run_record_path.name)
    when = (now or datetime.now(UTC)).astimezone(UTC)
    try:
        check_folder_inside(folder, folder.parent)
        record = read_run_record(run_record_path)
        subject, run_id = critique_file_name(record.id), record.id
        _, report = read_report(run_record_path, record)
        facts = compute_facts(record, report, now=when)
        recorder = UsageRecorder(model)
        response = await recorder.complete(build_request(facts, report))
        critique = critique_from_answer(
            record,
            facts,
            response.data,
            timestamp=when,
            report_path=record.report_path,
            usage=CritiqueUsage.from_usage(recorder.total),
            skip_proposals=not_to_propose(folder, settings.state_dir),
            held_out=held_out,
            run_kind=run_kind,
        )
        write_critique(folder, critique)
        ledger_note = _add_to_ledger(folder, settings.state_dir, critique, excluded_lessons(record.lessons.excluded))
        prune_critiques(folder, settings.max_critiques, protect=[critique.id], now=when)
    except Exception as exc:
        message = str(exc) or type(exc).__name__
        try:
            log_failure(folder, subject, run_id, message, now=when)
        except Exception as log_exc:  # the original error matters more than the log line
            exc.add_note(f"the failure could not be recorded either: {log_exc}")
        raise
    clear_failure(folder, critique.id)
    append_log(
        folder,
        "ok",
        subject,
        f"mean {critique.mean_score:.2f}, {'pass' if critique.overall_pass else 'fail'}"
        + (f", suspect: {critique.suspect}" if critique.suspect else "")
        + ledger_note,
    )
    return critique


def _add_to_ledger(folder: Path, state_dir: Path, critique: Critique, excluded: tuple[tuple[str, str], ...]) -> str:
    """Add the critique's row (and the texts of the built lessons it was given that the ledger lacks)
    to the trial ledger; '' when it was, else why not (the next run that
    reads memory adds it from the critique while the critique exists)."""
    try:
        ledger = open_ledger(folder, state_dir)
        ledger.add(critique_lines(ledger, critique, excluded))
    except ResearchError as exc:
        return f"; not in the trial ledger yet: {exc}"
    return ""


def summarize(critique: Critique, *, path: Path | None = None) -> str:
    """A short human summary of a critique."""
    verdict = "pass" if critique.overall_pass else f"fail: {critique.fail_reason}"
    shown = {d: critique.scores.get(d) for d in DIMENSIONS}
    scores = ", ".join(f"{DIMENSION_LABELS[d]} {'n/a' if v is None else v}" for d, v in shown.items())
    lines = [f"critique of {short_id(critique.id)}: mean {critique.mean_score:.2f}/5 ({verdict})", f"  {scores}"]
    if critique.suspect_reason:
        lines.append(f"  suspect: {critique.suspect_reason}; it makes and feeds no lesson")
    if critique.tags:
        lines.append(f"  tags: {', '.join(critique.tags)}")
    lines += [f"  weakness: {w}" for w in critique.weaknesses[:3]]
    if path is not None:
        lines.append(f"  saved to {path}")
    return "\n".join(lines)
