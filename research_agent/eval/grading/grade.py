"""The grade of one report against its world: a pure function of (world, report, run record).

Nothing here asks a model. The report's body is what :mod:`research_agent.text.report_body` reads
(no front matter, headings, Sources, Lessons Applied or Adversarial Analysis), without the note
the tool puts under the title of a report its review rejected; the tool's own counts in it (the
claim check's line, the gate's and the review's numbers), citation marks and "[Disputed]" marks are
blanked first, since no writer claimed them. Then, for the report's question:

* ``found``: a checkpoint's answer or an alias stands in the body (:func:`.mentions.answer_pattern`);
* ``cited``: a sentence that states it cites a source whose page is one of the checkpoint's
  ``sources`` (a citation's number is mapped to its source through the run record);
* ``stale``: the body states a superseded value and never its replacement;
* ``unsupported``: names and numbers (:mod:`.mentions`) that no page of the world and not the
  question hold, each with its sentence: facts the model made up. Read in the writer's sentences
  only: not in the lines the tool adds to Limitations & Gaps (:data:`TOOL_LINES`: what its review
  left open, its claim check, its notes on the run), and not at all in the short report of a run
  whose gate found too little (the tool wrote all of it);
* ``declined``: the run's gate found too little, or the Executive Summary says the sources do not
  answer (right for a question marked ``answerable: false``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ...record import RunRecord
from ...review.checks.claims import OWN_SCORE
from ...review.checks.text import CUT_SHORT_NOTE
from ...review.markdown import REJECTION_MARK
from ...shapes import Plain
from ...text.citations import CITED, blank, find_citations, mask_code_and_urls, sentence_spans
from ...text.controls import one_line
from ...text.report_body import body_blocks
from ..world import Question, World
from .mentions import Corpus, MentionKind, answer_pattern, names_in, normalized, numbers_in

__all__ = ["CheckpointGrade", "Unsupported", "Grade", "grade", "GATE_DECLINED", "TOOL_LINES"]

GATE_DECLINED = ("insufficient_data", "no_new_findings")
# How the lines the tool adds to Limitations & Gaps begin (run/finish.py, review/feedback.py, the
# claim check, run/report.py): its own findings, beside the writer's; not read for unsupported facts.
TOOL_LINES = (
    "Unresolved after review:", "Claims checked against their sources:", "Claims not checked:", "Short report:",
    "Not replanned:", "Some sources could only be read from their search snippets", CUT_SHORT_NOTE,
    "Search provider(s) failed during the run:", "The skeptic rated viability", "The skeptic's answers could not be used",
    "The run reached its", "Some citations pointed to sources that do not exist",
)  # fmt: skip
_NOTICE = re.compile(rf"^> {re.escape(REJECTION_MARK)}[^\n]*$", re.M)
_DISPUTED = re.compile(r"\[disputed\]", re.I)
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.*?)[ \t#]*$", re.M)
_DECLINE = re.compile(
    r"\b(?:(?:do|does|did|could|can)(?:\s+not|n['\u2019]t)|cannot|unable to|fail(?:s|ed)? to)\s+(?:\w+\s+){0,3}?"
    r"(?:answer|say|state|mention|give|provide|contain|report|specify|disclose|include|show|list|offer|find"
    r"|establish|determine|reveal|cover)\b"
    r"|\bno (?:information|data|figures?|mention|record|details?)\b"
    r"|\b(?:not|never) (?:stated|given|mentioned|reported|disclosed|specified|provided|published)\b"
    r"|\binsufficient\b|\bnot enough (?:data|information|evidence)\b|\bunanswer(?:ed|able)\b",
    re.I,
)  # fmt: skip


@dataclass(frozen=True)
class CheckpointGrade(Plain):
    id: str
    answer: str
    found: bool
    cited: bool


@dataclass(frozen=True)
class Unsupported(Plain):
    """A name or number (``token``, of ``kind``) that no page holds, in its sentence."""

    sentence: str
    token: str
    kind: MentionKind


@dataclass(frozen=True)
class Grade:
    """One report's grade (see the module docstring)."""

    question_id: str
    answerable: bool
    checkpoints: tuple[CheckpointGrade, ...]
    stale: tuple[str, ...]
    unsupported: tuple[Unsupported, ...]
    declined: bool
    words: int

    @property
    def found(self) -> int:
        return sum(c.found for c in self.checkpoints)

    @property
    def cited(self) -> int:
        return sum(c.cited for c in self.checkpoints)

    @property
    def recall(self) -> float | None:
        """Found over checkpoints (None for a question without any)."""
        return self.found / len(self.checkpoints) if self.checkpoints else None

    @property
    def cited_precision(self) -> float | None:
        """Cited over found (None when nothing was found)."""
        return self.cited / self.found if self.found else None

    def as_dict(self) -> dict[str, object]:
        return {
            "checkpoints": [c.as_dict() for c in self.checkpoints], "stale": list(self.stale),
            "unsupported": [u.as_dict() for u in self.unsupported], "declined": self.declined,
            "answerable": self.answerable, "found": self.found, "cited": self.cited, "words": self.words,
        }  # fmt: skip


@functools.lru_cache(maxsize=8)
def _pages(world: World) -> Corpus:
    return Corpus.of(world.pages.values())


def _masked(block: str) -> str:
    """A body block with what no writer claimed blanked (offsets kept)."""
    text = blank(mask_code_and_urls(block), OWN_SCORE)
    return blank(blank(text, _DISPUTED), CITED)


def _sentences(blocks: list[str]) -> Iterator[tuple[str, str]]:
    """(sentence as written, the same with what no writer claimed blanked) of each block."""
    for block in blocks:
        masked = _masked(block)
        for start, end in sentence_spans(masked):
            if masked[start:end].strip():
                yield block[start:end].strip(), masked[start:end]


def _page_of(location: str, world: World) -> str | None:
    """The path under ``pages/`` of a source's location, or None for a source outside the world."""
    path = Path(location.removeprefix("file://"))
    try:
        return path.resolve().relative_to(world.pages_dir.resolve()).as_posix()
    except (ValueError, OSError):
        parts = PurePosixPath(path.as_posix()).parts
        return next(("/".join(parts[i:]) for i in range(len(parts)) if "/".join(parts[i:]) in world.pages), None)


def _cited_pages(sentence: str, record: RunRecord, world: World) -> set[str]:
    by_number = {s.n: s.location for s in record.sources if s.n is not None}
    numbers = {n for c in find_citations(sentence) for n in c.numbers}
    return {page for n in numbers if n in by_number and (page := _page_of(by_number[n], world)) is not None}


def _checkpoints(
    question: Question, body: str, sentences: list[str], record: RunRecord, world: World
) -> tuple[CheckpointGrade, ...]:
    out: list[CheckpointGrade] = []
    for point in question.checkpoints:
        patterns = [answer_pattern(spelling) for spelling in point.spellings]
        found = any(p.search(body) for p in patterns)
        cited = found and any(
            any(p.search(normalized(s)) for p in patterns) and _cited_pages(s, record, world) & set(point.sources)
            for s in sentences
        )
        out.append(CheckpointGrade(point.id, point.answer, found, bool(cited)))
    return tuple(out)


def _unsupported(world: World, question: Question, report: str, record: RunRecord) -> tuple[Unsupported, ...]:
    if record.gate_decision in GATE_DECLINED:
        return ()
    pages, asked = _pages(world), Corpus.of([question.question])
    found: dict[tuple[str, str], Unsupported] = {}
    writers = [block for block in body_blocks(report) if not block.startswith(TOOL_LINES)]
    for sentence, masked in _sentences(writers):
        for match in numbers_in(masked):
            token = match.group(0)
            if not pages.has_number(token) and not asked.has_number(token):
                found.setdefault((sentence, token), Unsupported(sentence, token, "number"))
        for mention in names_in(masked, pages):
            if not pages.has_phrase(mention.token) and not asked.has_phrase(mention.token):
                found.setdefault((sentence, mention.token), Unsupported(sentence, mention.token, "name"))
    return tuple(found.values())


def _summary(report: str) -> str:
    """The text under the report's Executive Summary (or Summary) heading."""
    headings = list(_HEADING.finditer(report))
    for n, heading in enumerate(headings):
        if heading.group(1).strip().lower() in ("executive summary", "summary"):
            end = headings[n + 1].start() if n + 1 < len(headings) else len(report)
            return report[heading.end() : end]
    return ""


def _question_of(world: World, record: RunRecord) -> Question:
    asked = normalized(record.query)
    for question in world.questions:
        if normalized(question.question) == asked:
            return question
    raise ValueError(f"the run {record.id} asked no question of world {world.name}")


def grade(world: World, report: str, record: RunRecord, *, question: Question | None = None) -> Grade:
    """The grade of ``report`` (the markdown of run ``record``) against ``world`` (see the module
    docstring). ``question``: the world's question the run answered (default: the one the record asked)."""
    question = question or _question_of(world, record)
    report = _NOTICE.sub("", report)
    blocks = body_blocks(report)
    body = normalized(" ".join(blocks))
    sentences = [sentence for sentence, _ in _sentences(blocks)]
    stale = tuple(
        s.answer for s in question.superseded
        if answer_pattern(s.answer).search(body) and not answer_pattern(s.by).search(body)
    )  # fmt: skip
    declined = record.gate_decision in GATE_DECLINED or bool(_DECLINE.search(one_line(_summary(report))))
    words = record.review.words if record.review is not None and record.review.words is not None else len(body.split())
    return Grade(question.id, question.answerable, _checkpoints(question, body, sentences, record, world), stale,
                 _unsupported(world, question, report, record), declined, words)  # fmt: skip
