"""The critic's proposed lessons: quarantined in the critiques until a person decides.

A critique may carry up to :data:`MAX_PROPOSALS` ``proposed_lessons`` (``{stage, text}``).
They never reach a prompt: a proposal is known by a short key made from its text,
``proposal:<short hash>`` (never a lesson key), and becomes a lesson only when a person runs
``memory approve``, which writes it into ``lessons.yaml`` as ``approved:<name>``.

Texts are compared after :func:`normalize_text` (case, whitespace and punctuation
ignored), so the same idea worded the same way is one proposal, whichever critiques
proposed it. A person's decision (approved or rejected) is kept in the user state folder by
that normalized text's hash: a decided text is no longer listed, and a later critique does
not propose it again (:func:`clean_proposals`). :func:`decide_proposal` makes the decision under
the lessons lock, the check that it is still undecided included: of two people (or one person
twice) approving the same proposal at once, one writes the lesson and the other is told it is
already decided.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ....errors import InputError
from ....files.state_records import read_record, update_record
from ....shapes import Plain
from ....text.controls import one_line
from ..critique_types import Critique, ProposedLesson
from ..schema import STAGES
from .file import PersonLesson, text_problem
from .instructions import lesson_text
from .lessons import LessonsFile, add_lesson_locked, lessons_lock

__all__ = [
    "MAX_PROPOSALS",
    "PROPOSAL_PREFIX",
    "DECISIONS_RECORD",
    "Proposal",
    "normalize_text",
    "text_hash",
    "proposal_key",
    "collect_proposals",
    "clean_proposals",
    "decided_texts",
    "record_decision",
    "decide_proposal",
]

MAX_PROPOSALS = 2
PROPOSAL_PREFIX = "proposal:"
DECISIONS_RECORD = "proposal-decisions.json"
DECISIONS = ("approved", "rejected")
_KEY_HEX = 10
_HASH = re.compile(r"^[0-9a-f]{64}$")
_NOT_WORD = re.compile(r"[\W_]+")


def normalize_text(text: str) -> str:
    """``text`` with case, whitespace and punctuation ignored: what makes two proposals the same."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return one_line(_NOT_WORD.sub(" ", folded))


def text_hash(text: str) -> str:
    """The sha256 (hex) of :func:`normalize_text` of ``text``."""
    return hashlib.sha256(normalize_text(text).encode("utf-8")).hexdigest()


def proposal_key(text: str) -> str:
    """``proposal:<short hash>``: the key a person names a proposal by."""
    return PROPOSAL_PREFIX + text_hash(text)[:_KEY_HEX]


@dataclass(frozen=True)
class Proposal(Plain):
    """One proposed lesson, with the critiques that proposed it (newest first) and their domains."""

    key: str
    stage: str
    text: str  # as the newest critique proposing it worded it
    critique_ids: tuple[str, ...]
    domains: tuple[str, ...]

    @property
    def hash(self) -> str:
        return text_hash(self.text)


def collect_proposals(critiques: Iterable[Critique], decided: Collection[str] = ()) -> tuple[Proposal, ...]:
    """The undecided proposals in ``critiques`` (newest first), one per normalized text and
    stage; ``decided``: hashes (:func:`text_hash`) a person approved or rejected. Each text is
    as a prompt would carry it (:func:`.instructions.lesson_text`); one that could not be a
    lesson's text (a critique written by hand, or by an older version) is not listed. A suspect
    critique, or one of a report its own review rejected, proposes nothing (an older version
    wrote their proposals all the same): neither teaches."""
    found: dict[tuple[str, str], Proposal] = {}
    for critique in sorted(critiques, key=lambda c: c.timestamp, reverse=True):
        if not critique.teaches or critique.review == "rejected":
            continue
        for proposed in critique.proposed_lessons:
            text = lesson_text(proposed.text)
            digest = text_hash(text)
            if digest in decided or text_problem(text) is not None:
                continue
            seen = found.get((digest, proposed.stage))
            if seen is None:
                key = PROPOSAL_PREFIX + digest[:_KEY_HEX]
                found[(digest, proposed.stage)] = Proposal(
                    key, proposed.stage, text, (critique.id,), (critique.query_domain,)
                )
            elif critique.id not in seen.critique_ids:
                domains = tuple(dict.fromkeys((*seen.domains, critique.query_domain)))
                found[(digest, proposed.stage)] = Proposal(
                    seen.key, seen.stage, seen.text, (*seen.critique_ids, critique.id), domains
                )
    return tuple(found.values())


def _clean_text(value: Any) -> str | None:
    """A proposal's text as a prompt would carry it (whitespace tidied, look-alike letters made
    Latin: :func:`.instructions.lesson_text`), or None when that is not a text a person could
    approve as it stands (:func:`.file.text_problem`: too long, holding what sanitizing would
    change, or reading as an instruction to the model)."""
    if not isinstance(value, str):
        return None
    text = lesson_text(value)
    return text if text_problem(text) is None else None


def clean_proposals(raw: Any, *, skip: Collection[str] = ()) -> tuple[ProposedLesson, ...]:
    """At most :data:`MAX_PROPOSALS` proposals from a critic's answer (``[{stage, text}]``):
    a known stage, a clean text, not one of the hashes in ``skip`` (decided, or already a
    lesson), each text once."""
    out: list[ProposedLesson] = []
    seen = set(skip)
    for item in raw if isinstance(raw, list) else []:
        if not isinstance(item, dict) or item.get("stage") not in STAGES:
            continue
        text = _clean_text(item.get("text"))
        if text is None or text_hash(text) in seen:
            continue
        seen.add(text_hash(text))
        out.append(ProposedLesson(item["stage"], text))
        if len(out) == MAX_PROPOSALS:
            break
    return tuple(out)


def decided_texts(state_dir: Path) -> dict[str, str]:
    """``{text hash: "approved" | "rejected"}``: the person's decisions on proposals so far."""
    decisions = read_record(state_dir, DECISIONS_RECORD).get("decisions")
    if not isinstance(decisions, Mapping):
        return {}
    return {
        digest: entry["decision"]
        for digest, entry in decisions.items()
        if isinstance(digest, str) and _HASH.match(digest)
        and isinstance(entry, Mapping) and entry.get("decision") in DECISIONS
    }  # fmt: skip


def record_decision(state_dir: Path, text: str, decision: str, *, now: datetime | None = None) -> None:
    """Remember that a person ``decision``-ed (approved or rejected) the proposal ``text``."""
    if decision not in DECISIONS:
        raise ValueError(f"unknown decision {decision!r}")
    when = (now or datetime.now(UTC)).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

    def change(data: dict[str, Any]) -> None:
        decisions = data.get("decisions")
        decisions = dict(decisions) if isinstance(decisions, Mapping) else {}
        decisions[text_hash(text)] = {"decision": decision, "when": when}
        data["decisions"] = decisions

    update_record(state_dir, DECISIONS_RECORD, change)


def decide_proposal(
    meta_dir: Path,
    state_dir: Path,
    text: str,
    decision: str,
    lesson: Callable[[LessonsFile], PersonLesson] | None = None,
    *,
    now: datetime | None = None,
) -> PersonLesson | None:
    """Decide the proposal ``text``: for ``approved``, add the lesson ``lesson`` makes from the
    lessons file as it stands; then record the decision. All under the lessons lock, the check
    that the proposal is still undecided included; InputError when it was decided meanwhile.
    Returns the lesson added (None for a rejection)."""
    if decision not in DECISIONS or (decision == "approved") != (lesson is not None):
        raise ValueError(f"decision {decision!r} with{'' if lesson else 'out'} a lesson")
    with lessons_lock(state_dir):
        done = decided_texts(state_dir).get(text_hash(text))
        if done is not None:
            raise InputError(f"{proposal_key(text)} is already decided ({done})")
        added = add_lesson_locked(meta_dir, state_dir, lesson) if lesson is not None else None
        record_decision(state_dir, text, decision, now=now)
    return added
