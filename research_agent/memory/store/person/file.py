"""``reports/meta/lessons.yaml``: the lessons a person wrote or approved, as a file.

The file holds one top-level ``lessons:`` list; each entry is ``{key, stage, domain, text,
target}`` (see :data:`HEADER`, the comment every written file starts with). It is read
with the same safe loader as the critiques (size cap, nesting depth checked before any
parser sees it, plain YAML only) and checked entry by entry: :func:`parse_lessons_file`
returns the valid entries and every problem as ``"<where>: <problem>"``. A bad entry is
left out and named; a file that cannot be read at all gives no entries. Nothing here is
fatal to a run.

The text of an entry is the only free text that may reach a prompt, so it must pass
:func:`~research_agent.text.sanitize.sanitize` unchanged: a text that sanitizing would
alter (control characters, data delimiters, instruction-like phrases, several lines) is
refused with the reason, so that what reaches the prompt is exactly what the person wrote.
So is a text holding letters of another script that look like Latin ones, and a text that
reads as an instruction to the model rather than guidance for the research
(:mod:`.instructions`: role markers, overrides, imperatives aimed at the output, in English,
French, German and Spanish).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ....domains import DOMAINS
from ....files.safeyaml import UnsafeYaml, dump_yaml, load_yaml_text
from ....shapes import Plain
from ....text.sanitize import why_sanitize_changes
from ..schema import MAX_LESSON_TEXT, PERSON_KINDS, STAGES, key_kind, shown_value
from ..targets import PERSON_TARGET, TARGETS
from .instructions import instruction_problem, lookalikes_problem

__all__ = [
    "LESSONS_FILE",
    "MAX_LESSONS_FILE_BYTES",
    "MAX_PERSON_LESSONS",
    "ANY_DOMAIN",
    "HEADER",
    "PersonLesson",
    "ParsedLessons",
    "parse_lessons_file",
    "lessons_file_text",
    "text_problem",
    "slug_of",
]

LESSONS_FILE = "lessons.yaml"
MAX_LESSONS_FILE_BYTES = 64 * 1024
MAX_PERSON_LESSONS = 100
ANY_DOMAIN = "any"
_FIELDS = ("key", "stage", "domain", "text", "target")
_REQUIRED = ("key", "stage", "domain", "text")

HEADER = f"""\
# research-agent lessons: guidance from you to later runs, measured like the tool's own lessons.
#
# Each entry under `lessons:` has
#   key:    user:<a short name> for a lesson you wrote (approved:<name> for a critic's
#           proposal you approved with `research-agent memory approve`)
#   stage:  decompose (planning the search queries) or relevance (judging each source)
#   domain: {", ".join(DOMAINS)},
#           or {ANY_DOMAIN} (every domain)
#   text:   the guidance, one line of at most {MAX_LESSON_TEXT} characters. It reaches the prompt exactly as
#           written, so it may not hold control characters, data delimiters (<<<DATA), look-alike
#           letters of another script, or words addressed to the model (role markers such as
#           system:, "ignore the above", "print ..."); `research-agent memory validate` names any
#           entry refused.
#   target: optional: what the lesson should improve, by default {PERSON_TARGET} (the mean of the
#           applicable critique scores); or a score such as scores.coverage, or a measured
#           fact such as facts.unanswered
#
# Trust: this file reaches a prompt only while it is exactly what you trusted. Its hash is
# kept outside reports/, in your state folder: `memory add-lesson` and `memory approve`
# record it when they write the file; after editing it by hand, read it and run
# `research-agent memory trust-lessons`. Until then runs skip it (and say so).
#
# Measurement: your lessons are given from the first run in their domain and stage, before
# the tool's own, and withheld at random in some runs like every lesson, so that
# `memory effects` can show each one's effect on its target. A lesson whose effect is
# clearly harmful is retired (no longer given); runs never edit this file: remove a
# retired lesson when you choose. Comments other than this header are not kept when
# research-agent writes the file.
"""


@dataclass(frozen=True)
class PersonLesson(Plain):
    """One entry of ``lessons.yaml``: a lesson a person wrote (``user:``) or approved (``approved:``)."""

    key: str
    stage: str
    domain: str  # a domain of the taxonomy, or ``any``
    text: str
    target: str = PERSON_TARGET

    @property
    def origin(self) -> str:
        """``user`` or ``approved``."""
        return self.key.split(":", 1)[0]

    def applies_to(self, domain: str) -> bool:
        return self.domain in (domain, ANY_DOMAIN)


@dataclass(frozen=True)
class ParsedLessons:
    """The valid entries of a lessons file, and every problem found (``"<where>: <problem>"``)."""

    lessons: tuple[PersonLesson, ...] = ()
    problems: tuple[str, ...] = ()


def text_problem(text: Any) -> str | None:
    """Why ``text`` cannot be a lesson's text (see the module docstring); None when it can."""
    if not isinstance(text, str):
        return f"expected text, got {type(text).__name__} {shown_value(text)}"
    if not text.strip():
        return "must not be empty"
    if len(text) > MAX_LESSON_TEXT:
        return f"text is {len(text)} characters; the limit is {MAX_LESSON_TEXT}"
    return why_sanitize_changes(text) or lookalikes_problem(text) or instruction_problem(text)


def _field_problems(entry: dict[str, Any]) -> list[tuple[str, str]]:
    """``(field, problem)`` for each field of one entry that is missing or wrong."""
    problems = [(name, "missing") for name in _REQUIRED if name not in entry]
    problems += [(str(name)[:40], "unknown field") for name in entry if name not in _FIELDS]
    key, stage, domain = entry.get("key"), entry.get("stage"), entry.get("domain")
    if "key" in entry and not (isinstance(key, str) and key_kind(key) in PERSON_KINDS):
        problems.append(("key", f"{shown_value(key)} is not user:<name> or approved:<name> (letters, digits, ._/-)"))
    if "stage" in entry and stage not in STAGES:
        problems.append(("stage", f"{shown_value(stage)} is not one of: {', '.join(STAGES)}"))
    if "domain" in entry and domain not in (*DOMAINS, ANY_DOMAIN):
        problems.append(("domain", f"{shown_value(domain)} is not one of: {', '.join(DOMAINS)}, {ANY_DOMAIN}"))
    if "text" in entry and (why := text_problem(entry["text"])) is not None:
        problems.append(("text", why))
    target = entry.get("target", PERSON_TARGET)
    if target not in TARGETS:
        problems.append(("target", f"{shown_value(target)} is not a measured target ({', '.join(TARGETS)})"))
    return problems


def _entries(data: Any) -> tuple[list[Any], list[str]]:
    """The raw ``lessons:`` list of a parsed file, and problems with the file's shape."""
    if data is None:
        return [], []
    if not isinstance(data, dict):
        return [], [f"(top level): expected a mapping with a lessons: list, got {type(data).__name__}"]
    problems = [f"{shown_value(k)}: unknown top-level field (only lessons: is read)" for k in data if k != "lessons"]
    entries = data.get("lessons")
    if entries is None:
        return [], problems
    if not isinstance(entries, list):
        return [], [*problems, f"lessons: expected a list, got {type(entries).__name__}"]
    if len(entries) > MAX_PERSON_LESSONS:
        problems.append(f"lessons: {len(entries)} entries; only the first {MAX_PERSON_LESSONS} are read")
    return entries[:MAX_PERSON_LESSONS], problems


def parse_lessons_file(text: str) -> ParsedLessons:
    """The valid entries of a lessons file's ``text`` and every problem (see the module docstring)."""
    try:
        data = load_yaml_text(text)
    except UnsafeYaml as exc:
        return ParsedLessons(problems=(str(exc),))
    entries, problems = _entries(data)
    lessons: list[PersonLesson] = []
    seen: dict[str, int] = {}
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            problems.append(f"lessons[{i}]: expected a mapping of key, stage, domain, text, target")
            continue
        wrong = _field_problems(entry)
        if not wrong and entry["key"] in seen:
            wrong = [("key", f"{entry['key']!r} repeats lessons[{seen[entry['key']]}]")]
        if wrong:
            problems += [f"lessons[{i}].{name}: {why}" for name, why in wrong]
            continue
        seen[entry["key"]] = i
        values = {name: entry[name] for name in _FIELDS if name in entry}
        lessons.append(PersonLesson(**values))
    return ParsedLessons(tuple(lessons), tuple(problems))


def lessons_file_text(lessons: Sequence[PersonLesson]) -> str:
    """The whole file for ``lessons``: :data:`HEADER`, then the ``lessons:`` list."""
    return HEADER + "\n" + dump_yaml({"lessons": [lesson.as_dict() for lesson in lessons]})


_SLUG_WORDS = re.compile(r"[a-z0-9]+")


def slug_of(text: str, taken: Sequence[str] = (), *, words: int = 6) -> str:
    """A short key name made from ``text`` (``include-release-notes-of-the-version``), made
    unique against the names in ``taken`` by a number (``-2``, ``-3``...)."""
    base = "-".join(_SLUG_WORDS.findall(text.lower())[:words])[:48].strip("-") or "lesson"
    slug, n = base, 1
    while slug in taken:
        n += 1
        slug = f"{base}-{n}"
    return slug
