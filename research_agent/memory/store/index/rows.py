"""What the summary index keeps of one critique file, made only by the real loader.

A :class:`FileRow` is the outcome of :func:`~research_agent.memory.store.files.load_entry` for
one file, keyed by the file's *signature* (inode, size, mtime, ctime and mode, from
``lstat``): a valid file gives its id, domain, run time, model, mean, pass and whether
it was adaptive, why it is suspect (:attr:`~..critique_types.Critique.suspect_reason`: it then
feeds no lesson, no effect and no suspension), whether its run could read its memory, and its
*evidence*: the critique as JSON with every piece of free text left out (query,
weaknesses, suggestions, flags, sub-query wording, lesson texts), which is all that
building lessons reads (:func:`evidence_json`, :func:`critique_from_evidence`). A refused
file gives the loader's reason. A :class:`UseRow` records a lesson key the critique applied
or withheld (and why, and at which trial probability), with the value of that key's target and
the critique's mean score (:mod:`..targets`; None where it does not apply) and its normalized
question, so that effects are read from one table; a critique that is not
:attr:`~..critique_types.Critique.measurable` has none. Every use row is kept (they say which
lessons were on), but only those :func:`in_trial` accepts enter a lesson's effect. Checks that depend on the time of
asking (expiry, a date in the future) are made when the index is read, never stored.

A person's lesson (``user:``, ``approved:``) takes its target from its entry in
``lessons.yaml``, which the critique does not hold: its use rows carry the default target's
value, and a critique with such a use also gives a :class:`MeasureRow` per target, so that
the lesson can be measured on whichever target its entry names.

The whole critique is kept too, as JSON (:class:`Rows` ``body``), for ``memory list``.
``stored()`` gives each row's values as SQLite hands them back (0/1 for booleans, floats
for REAL columns); a row's MAC (:mod:`.sign`) covers its ``stored()`` values (a use
row's, its ``signed()`` ones; a file's evidence has a MAC of its own).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from pathlib import Path
from typing import NamedTuple

from ....record.lessons import probability
from ..critique_types import Critique
from ..files import CritiqueEntry, load_entry
from ..schema import LESSON_KEY
from ..targets import PERSON_TARGET, TARGETS, is_person_key, measure, target_of

__all__ = [
    "FileRow",
    "UseRow",
    "MeasureRow",
    "in_trial",
    "use_rows",
    "Rows",
    "signature",
    "rows_for",
    "ARMS",
    "MAX_VALUE",
    "question_key",
    "evidence_json",
    "critique_from_evidence",
]

ARMS = ("applied", "withheld")
MAX_VALUE = 10_000_000  # no target reaches this; anything beyond is not a measurement


class FileRow(NamedTuple):
    """One critique file as the index holds it (``ok`` False: refused, with ``reason``;
    ``ok`` True with a ``reason``: valid but suspect)."""

    name: str
    sig: str
    ok: bool
    reason: str
    run_id: str
    stamp: str  # from the file name: sortable UTC time
    created: float | None  # the critique's own timestamp (seconds since the epoch)
    domain: str
    model: str
    mean: float | None
    passed: bool
    adaptive: bool
    suspect: str  # why the critique is suspect ('' when it is not): it then teaches nothing
    available: bool  # False: its run could not read its memory
    evidence: str  # the critique without free text, as JSON ('' for a refused file)
    nuses: int = 0  # how many use rows the file has (a use row added or deleted shows here)
    nmeasures: int = 0  # how many measure rows
    baseline: bool = False  # a whole-run baseline: a control run or a suspended domain's
    digest: str = ""  # a hash of the scores (:func:`~..derived.scores_digest`; '' for a refused file)

    def stored(self) -> tuple[object, ...]:
        """The row as SQLite hands it back, without its evidence (what its MAC covers)."""
        return (
            self.name, self.sig, int(self.ok), self.reason, self.run_id, self.stamp, _real(self.created),
            self.domain, self.model, _real(self.mean), int(self.passed), int(self.adaptive), self.suspect,
            int(self.available), int(self.nuses), int(self.nmeasures), int(self.baseline), self.digest,
        )  # fmt: skip


def _real(value: float | None) -> float | None:
    """A REAL column's value as read back (an int becomes a float; -0.0 is stored as 0)."""
    return None if value is None else float(value) + 0.0


class UseRow(NamedTuple):
    """A lesson ``key`` one critique ``applied`` (its run was given it) or ``withheld`` (its run
    was eligible and did not get it, for ``reason``: trial, control, no_lessons, suspended,
    retired), the value of the key's target and the mean score in that critique, the run's
    question (:func:`question_key`), so that runs of one question can be paired, and ``p``: the
    probability with which its trial draw withheld the lesson (None when not recorded: files
    written before it was, and lessons withheld for another reason)."""

    name: str
    key: str
    arm: str
    stage: str
    domain: str
    stamp: str
    created: float
    value: float | None
    reason: str  # why it was withheld ('' for applied)
    question: str
    mean: float | None = None  # the critique's mean score
    p: float | None = None  # the trial probability of the run's draw for this lesson

    def stored(self) -> tuple[object, ...]:
        """The row as SQLite hands it back."""
        return (
            *self[:6], _real(self.created), _real(self.value), self.reason, self.question, _real(self.mean),
            _real(self.p),
        )  # fmt: skip

    def signed(self) -> tuple[object, ...]:
        """What the row's MAC covers: its own values. Its domain and times are its file's,
        whose row is signed; a use row moved to another domain or time changes its file's
        count of rows there, which is checked (see :mod:`.store`)."""
        return (
            self.name, self.key, self.arm, self.stage, _real(self.value), self.reason, self.question,
            _real(self.mean), _real(self.p),
        )  # fmt: skip


def in_trial(arm: str, reason: str) -> bool:
    """Whether a use enters its lesson's effect: the run was given the lesson, or withheld it by
    the lesson's own trial draw. Whole-run controls, ``--no-lessons``, suspended domains and
    retired lessons withhold every lesson together, or on no draw at all: counted as "without",
    they would make the other lessons' presence differ between the two arms."""
    return arm == "applied" or reason == "trial"


_WORD = re.compile(r"\w+")


def question_key(query: str) -> str:
    """The normalized question: its words, case-folded, hashed short (punctuation, spacing and
    case do not make two questions different)."""
    words = " ".join(_WORD.findall(query.casefold()))
    return hashlib.sha256(words.encode("utf-8")).hexdigest()[:16]


def evidence_json(critique: Critique) -> str:
    """``critique`` as JSON with no free text: what lessons are built from (see the module docstring)."""
    data = critique.as_dict()
    data.update(query="", report_path="", weaknesses=[], suggestions=[], skeptic_flags=[], proposed_lessons=[])
    data.pop("suspect", None)
    data["lessons_applied"] = [
        {"key": lesson.key, "stage": lesson.stage or "", "text": ""} for lesson in critique.lessons_applied if lesson.key
    ]
    facts = data.get("facts")
    if facts is not None:
        facts["sub_queries"] = [{**q, "query": ""} for q in facts["sub_queries"]]
        facts["citations"]["weak_pairs"] = []
    return json.dumps(data, separators=(",", ":"))


def critique_from_evidence(text: str) -> Critique:
    """The critique :func:`evidence_json` stored (free text empty)."""
    return Critique._from_valid(json.loads(text))


class MeasureRow(NamedTuple):
    """The value of one ``target`` in one critique (None where it does not apply)."""

    name: str
    target: str
    value: float | None

    def stored(self) -> tuple[object, ...]:
        return (self.name, self.target, _real(self.value))


class Rows(NamedTuple):
    """What the index keeps of one file (``body``: the critique as JSON, None for a refused file)."""

    file: FileRow
    uses: list[UseRow]
    measures: list[MeasureRow]
    body: str | None = None


def signature(info: os.stat_result) -> str:
    """What changes whenever a file is replaced, edited (even with its mtime put back) or swapped for a link."""
    return f"{info.st_ino}:{info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}:{info.st_mode}"


def _checked(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) and abs(value) <= MAX_VALUE else None


def _value(critique: Critique, key: str) -> float | None:
    return _checked(measure(critique, target_of(key)))


def _measures(name: str, critique: Critique, uses: list[UseRow]) -> list[MeasureRow]:
    """Every target's value, for a critique that applied or withheld a person's lesson."""
    if not any(is_person_key(use.key) for use in uses):
        return []
    return [MeasureRow(name, target, _checked(measure(critique, target))) for target in TARGETS]


def use_rows(name: str, critique: Critique) -> list[UseRow]:
    """Each key the critique applied or withheld, once (applied wins); none for a critique that
    does not count in effects (suspect, or its run's lessons were unavailable)."""
    if not critique.measurable:
        return []
    created = critique.created_at.timestamp()
    stamp = name.removesuffix(".yaml").rsplit("_", 1)[-1]
    question = question_key(critique.query)
    mean = _checked(measure(critique, PERSON_TARGET))
    found: dict[str, UseRow] = {}
    for lesson in critique.lessons_applied:
        if lesson.key and LESSON_KEY.match(lesson.key) and lesson.key not in found:
            found[lesson.key] = UseRow(
                name, lesson.key, "applied", lesson.stage or "", critique.query_domain, stamp, created,
                _value(critique, lesson.key), "", question, mean, probability(lesson.p),
            )  # fmt: skip
    for withheld in critique.lessons_withheld:
        if LESSON_KEY.match(withheld.key) and withheld.key not in found:
            found[withheld.key] = UseRow(
                name, withheld.key, "withheld", "", critique.query_domain, stamp, created,
                _value(critique, withheld.key), withheld.reason, question, mean, probability(withheld.p),
            )  # fmt: skip
    return list(found.values())


def rows_for(entry: CritiqueEntry, sig: str, meta_dir: Path) -> Rows:
    """Load ``entry`` with the real loader and summarise it (or record why it was refused)."""
    loaded = load_entry(entry, meta_dir=meta_dir)
    critique = loaded.critique
    if critique is None:
        reason = loaded.error or "invalid"
        refused = FileRow(
            entry.name, sig, False, reason, entry.run_id, entry.stamp, None, "", "", None, False, False, "", True, ""
        )
        return Rows(refused, [], [], None)
    suspect = critique.suspect_reason
    row = FileRow(
        entry.name,
        sig,
        True,
        f"suspect: {suspect}" if suspect else "",  # valid, but it teaches nothing
        critique.id,
        entry.stamp,
        critique.created_at.timestamp(),
        critique.query_domain,
        critique.model_version,
        critique.mean_score,
        critique.overall_pass,
        critique.adaptive,
        "" if critique.teaches else f"suspect: {critique.suspect_reason}",
        critique.lessons_available,
        evidence_json(critique),
        baseline=critique.whole_run_baseline,
        digest=critique.scores.digest,
    )
    uses = [] if suspect else use_rows(entry.name, critique)
    measures = _measures(entry.name, critique, uses)
    row = row._replace(nuses=len(uses), nmeasures=len(measures))
    return Rows(row, uses, measures, json.dumps(critique.as_dict(), separators=(",", ":")))
