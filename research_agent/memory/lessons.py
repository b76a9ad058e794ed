"""Lessons for a new run, drawn from the critiques of earlier runs in the same domain.

Selection (:func:`select_lessons`) takes the newest ``limit`` critiques that validate,
pass, match the domain and are younger than the TTL; with fewer than ``min_critiques``
there are no lessons at all. Candidate files are ordered by the timestamp in their
*names*: expired files, files named with a future time and files beyond the scan window
are never opened; a file whose own timestamp lies in the future is refused, and junk
does not use up the scan window.

Lessons are written only from templates filled with counts, dimension names, tags and
host names that match a strict hostname pattern and that the run's own record and
report back up (see :mod:`.evidence`). Critique free text (weaknesses,
suggestions, skeptic details, queries) never reaches a lesson, so never a prompt.

Safeguards: a control fraction of eligible runs goes without lessons (the baseline),
lessons are suspended for a domain whose adaptive runs score worse than its baseline
runs (see :mod:`.stats`), and a mode-collapse warning is raised when recent scores
stop spreading.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from ..domains import DOMAINS
from ..errors import ConfigError, InputError
from .critique_types import Critique
from .evidence import dominant_hosts, valid_hostname
from .schema import DIMENSION_LABELS, DIMENSIONS, MAX_TEXT, TAG_LABELS, InvalidCritique
from .stats import collapse_check, compare_adaptive
from .store import (
    FUTURE_SLACK,
    CritiqueEntry,
    future_problem,
    parse_critique,
    read_critique_text,
    scan_critiques,
    stamp_of,
)

__all__ = [
    "Lesson",
    "LessonSelection",
    "select_lessons",
    "build_lessons",
    "lessons_prompt_block",
    "lessons_markdown",
    "valid_hostname",
    "SCAN_WINDOW",
    "MAX_LESSONS",
]

SCAN_WINDOW = 50  # newest critique files read per selection (the default retention)
MAX_LESSONS = 5
MAX_TTL_DAYS = 36_500

DOMAIN_LABELS = {
    "policy_law": "policy and law",
    "history_culture": "history and culture",
    "other": "general",
}

DIMENSION_ADVICE = {
    "source_diversity": "draw sources from more distinct sites and kinds of publisher",
    "claim_support": "keep sources that state the key facts directly, and prefer primary evidence",
    "coverage": "give each part of the question its own sub-query",
    "geographic_balance": "include at least one sub-query aimed at non-US sources",
    "actionability": "favour sources with concrete figures, dates and practical guidance",
}

TAG_ADVICE = {
    "geographic_bias": "include at least one sub-query aimed at non-US sources",
    "single_site": "spread sub-queries so that no single site dominates",
    "weak_primary_sources": "add a sub-query for primary sources (studies, official data, original documents)",
    "outdated_sources": "prefer recent sources and add a sub-query for the latest developments",
    "unsupported_claims": "score sources that assert without evidence lower",
    "low_coverage": "give each part of the question its own sub-query",
    "press_release_heavy": "score press releases and marketing pages lower than independent sources",
    "few_sources": "use broader sub-queries so that more sources survive",
    "missing_counterarguments": "include a sub-query for criticism and opposing views",
    "vague_recommendations": "favour sources with specific, practical guidance",
    "unanswered_sub_queries": "phrase sub-queries as questions that sources can answer directly",
    "snippet_only_sources": "prefer sources whose full text can be read",
}

# Each lesson's stable key (kind:subject); see schema.KEY_KINDS.
DIMENSION_KEY = {
    "source_diversity": "breadth:source_diversity",
    "claim_support": "primary:claim_support",
    "coverage": "coverage:low_score",
    "geographic_balance": "geography:low_score",
    "actionability": "primary:actionability",
}
TAG_KEY = {tag: f"{'geography' if tag == 'geographic_bias' else 'coverage'}:{tag}" for tag in TAG_LABELS}

# A tag that says the same as a dimension lesson is not repeated.
TAG_DIMENSION = {
    "geographic_bias": "geographic_balance",
    "single_site": "source_diversity",
    "low_coverage": "coverage",
    "unsupported_claims": "claim_support",
    "vague_recommendations": "actionability",
}


@dataclass(frozen=True)
class Lesson:
    """One templated lesson and the ids of the critiques behind it. ``kind``: dimension or tag."""

    text: str
    critique_ids: tuple[str, ...]
    kind: str
    key: str = ""
    stage: str = "decompose"
    target: str = ""


@dataclass(frozen=True)
class LessonSelection:
    """What memory gives one run, and why.

    ``considered``: ids of the eligible critiques the lessons were drawn from.
    ``excluded``: ``(file name, reason)`` for every other critique file.
    """

    domain: str
    lessons: tuple[Lesson, ...]
    adaptive: bool
    reason: str
    considered: tuple[str, ...] = ()
    excluded: tuple[tuple[str, str], ...] = ()
    warnings: tuple[str, ...] = ()

    @classmethod
    def none(cls, domain: str = "", reason: str = "lessons disabled") -> LessonSelection:
        """A selection with no lessons, for runs that use no memory."""
        return cls(domain=domain, lessons=(), adaptive=False, reason=reason)

    def as_record(self) -> dict[str, Any]:
        """The run record's ``lessons:`` block."""
        return {
            "adaptive": self.adaptive,
            "reason": self.reason,
            "applied": [
                {
                    "key": lesson.key,
                    "stage": lesson.stage,
                    "target": lesson.target,
                    "text": lesson.text,
                    "critique_ids": list(lesson.critique_ids),
                }
                for lesson in self.lessons
            ],
            "excluded": [{"file": name, "reason": why} for name, why in self.excluded],
        }


def _domain_label(domain: str) -> str:
    return DOMAIN_LABELS.get(domain, domain.replace("_", " "))


def _need(n: int, fraction: float) -> int:
    return max(2, math.ceil(n * fraction))


def _fit(text: str) -> str:
    """Templates are sized to fit; this only guards the 200-character limit of stored text."""
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1].rsplit(" ", 1)[0] + "…"


def build_lessons(
    critiques: Sequence[Critique],
    domain: str,
    *,
    meta_dir: Path | None = None,
    max_lessons: int = MAX_LESSONS,
) -> tuple[Lesson, ...]:
    """Templated lessons from eligible critiques (newest first): weak dimensions, then frequent tags."""
    n = len(critiques)
    if n == 0:
        return ()
    label = _domain_label(domain)
    ranked: list[tuple[float, int, Lesson]] = []
    covered: set[str] = set()
    for order, dimension in enumerate(DIMENSIONS):
        scored = [(c.id, c.scores.get(dimension)) for c in critiques]
        very_low = [cid for cid, score in scored if score is not None and score <= 2]
        low = [cid for cid, score in scored if score is not None and score <= 3]
        if len(very_low) >= _need(n, 1 / 3):
            ids, threshold = very_low, 2
        elif len(low) >= _need(n, 2 / 3):
            ids, threshold = low, 3
        else:
            continue
        text = (
            f"In {len(ids)} of the last {n} {label} reports {DIMENSION_LABELS[dimension]} scored "
            f"{threshold} or lower: {DIMENSION_ADVICE[dimension]}."
        )
        weight = len(ids) / n + (1.0 if threshold == 2 else 0.0)
        lesson = Lesson(_fit(text), tuple(ids), "dimension", key=DIMENSION_KEY[dimension], target=dimension)
        ranked.append((weight, order, lesson))
        covered.add(dimension)
    tag_ids: dict[str, list[str]] = {}
    for critique in critiques:
        for tag in critique.tags:
            tag_ids.setdefault(tag, []).append(critique.id)
    for order, tag in enumerate(TAG_LABELS):
        ids = tag_ids.get(tag, [])
        if len(ids) < _need(n, 1 / 3) or TAG_DIMENSION.get(tag) in covered:
            continue
        what = TAG_LABELS[tag]
        if tag == "single_site" and meta_dir is not None:
            hosts = dominant_hosts(meta_dir, [c for c in critiques if c.id in ids])
            if hosts:
                what = f"{what} ({', '.join(hosts)})"
        text = f"In {len(ids)} of the last {n} {label} reports {what}: {TAG_ADVICE[tag]}."
        if len(text) > MAX_TEXT:
            text = f"In {len(ids)} of the last {n} {label} reports {TAG_LABELS[tag]}: {TAG_ADVICE[tag]}."
        lesson = Lesson(_fit(text), tuple(ids), "tag", key=TAG_KEY[tag], target=tag)
        ranked.append((len(ids) / n, len(DIMENSIONS) + order, lesson))
    ranked.sort(key=lambda item: (-item[0], item[1]))
    return tuple(lesson for _, _, lesson in ranked[:max_lessons])


_DOMAIN_LINE = re.compile(r"^query_domain:[ \t]*['\"]?([a-z_]+)['\"]?[ \t]*$", re.MULTILINE)


def _other_domain(text: str, domain: str) -> str | None:
    """The file's domain when one plain top-level line shows it is another known domain.

    Only ever used to *exclude* a file early; anything unclear is parsed in full.
    """
    found = _DOMAIN_LINE.findall(text)
    if len(found) == 1 and found[0] in DOMAINS and found[0] != domain:
        return found[0]
    return None


@dataclass(frozen=True)
class _Scan:
    """What the critique files offer a run: eligible critiques, all in its domain, the rest."""

    eligible: list[Critique]
    in_domain: list[Critique]
    excluded: list[tuple[str, str]]


def _read_one(entry: CritiqueEntry, meta_dir: Path, domain: str, now: datetime) -> Critique | str:
    """The critique in ``entry`` if it is valid, present and in ``domain``; else why not."""
    try:
        text = read_critique_text(entry.path, meta_dir=meta_dir)
        other = _other_domain(text, domain)
        if other:  # plainly another domain: no need to parse it
            return f"other domain ({other})"
        critique = parse_critique(text, name=entry.name)
    except InvalidCritique as exc:
        return f"invalid: {exc}"
    problem = future_problem(critique, now)
    if problem is not None:
        return problem
    if critique.query_domain != domain:
        return f"other domain ({critique.query_domain})"
    return critique


def _check_ttl(ttl_days: float) -> None:
    if isinstance(ttl_days, bool) or not isinstance(ttl_days, int | float) or not 0 < ttl_days <= MAX_TTL_DAYS:
        raise ConfigError(f"lesson_ttl_days must be a number above 0 and at most {MAX_TTL_DAYS}, not {ttl_days!r}")


def _scan(meta_dir: Path, domain: str, *, now: datetime, ttl_days: float, limit: int, scan_window: int) -> _Scan:
    """Read the newest unexpired files, newest first by file name, until ``scan_window`` of
    them proved to be critiques; junk does not count, so it never crowds real files out
    (at most ``4 * scan_window`` files are opened)."""
    _check_ttl(ttl_days)
    entries, misnamed = scan_critiques(meta_dir)
    scan = _Scan([], [], [(p.name, "invalid: file name is not critique-<run id>.yaml") for p in misnamed])
    cutoff, future = stamp_of(now - timedelta(days=ttl_days)), stamp_of(now + FUTURE_SLACK)
    counted = opened = 0
    for entry in entries:
        if entry.stamp < cutoff:
            scan.excluded.append((entry.name, f"expired (older than {ttl_days:g} days)"))
            continue
        if entry.stamp > future:
            scan.excluded.append((entry.name, "dated in the future"))
            continue
        if counted >= scan_window or opened >= scan_window * 4:
            scan.excluded.append((entry.name, f"beyond the newest {scan_window} critique files (not read)"))
            continue
        opened += 1
        found = _read_one(entry, meta_dir, domain, now)
        if isinstance(found, str):
            counted += found.startswith("other domain")
            scan.excluded.append((entry.name, found))
            continue
        counted += 1
        scan.in_domain.append(found)
        if not found.overall_pass:
            scan.excluded.append((entry.name, f"failing (mean {found.mean_score:.2f})"))
        elif len(scan.eligible) >= limit:
            scan.excluded.append((entry.name, f"older than the newest {limit} eligible critiques"))
        else:
            scan.eligible.append(found)
    return scan


def select_lessons(
    meta_dir: Path,
    domain: str,
    *,
    now: datetime,
    ttl_days: float = 30,
    limit: int = 10,
    min_critiques: int = 3,
    control_fraction: float = 0.2,
    rng: random.Random,
    force_control: bool = False,
    scan_window: int = SCAN_WINDOW,
    max_lessons: int = MAX_LESSONS,
) -> LessonSelection:
    """Choose the lessons for a run in ``domain`` at ``now`` (see the module docstring).

    ``scan_window`` bounds how many of the newest unexpired critiques are read (junk
    does not count; see :func:`_scan`); they also feed the suspension and collapse
    checks. Never raises for a bad file; a meta folder that is a symlink leading out of
    its reports folder, or a ``ttl_days`` out of range, raises.
    """
    if domain not in DOMAINS:
        raise InputError(f"unknown domain {domain!r}: choose one of {', '.join(DOMAINS)}")
    meta_dir = Path(meta_dir)
    scan = _scan(meta_dir, domain, now=now, ttl_days=ttl_days, limit=limit, scan_window=scan_window)
    eligible, in_domain, excluded = scan.eligible, scan.in_domain, scan.excluded
    collapse = collapse_check(domain, in_domain)
    warnings = (collapse.warning,) if collapse.collapsed else ()
    considered = tuple(c.id for c in eligible)

    def outcome(reason: str, lessons: tuple[Lesson, ...] = ()) -> LessonSelection:
        return LessonSelection(domain, lessons, bool(lessons), reason, considered, tuple(excluded), warnings)

    if force_control:
        return outcome("control run (baseline): lessons turned off (--no-lessons)")
    if len(eligible) < min_critiques:
        return outcome(
            f"no lessons: {len(eligible)} eligible {domain} critique(s); {min_critiques} are needed"
        )
    comparison = compare_adaptive(domain, in_domain)
    if comparison.suspended:
        return outcome(comparison.reason)
    if control_fraction > 0 and rng.random() < control_fraction:
        return outcome(f"control run (baseline): chosen at random (control fraction {control_fraction:g})")
    lessons = build_lessons(eligible, domain, meta_dir=meta_dir, max_lessons=max_lessons)
    if not lessons:
        return outcome(
            f"no lessons: no recurring weakness in the {len(eligible)} eligible {domain} critiques"
        )
    return outcome(f"{len(lessons)} lesson(s) from {len(eligible)} eligible {domain} critiques", lessons)


def lessons_prompt_block(selection: LessonSelection) -> str:
    """Guidance text for the decompose and relevance prompts; empty when no lessons."""
    if not selection.lessons:
        return ""
    lines = [
        f"Lessons from critiques of earlier {_domain_label(selection.domain)} reports "
        "(written by research-agent from stored scores and tags; use them as guidance):"
    ]
    lines += [f"- {lesson.text}" for lesson in selection.lessons]
    return "\n".join(lines)


def lessons_markdown(selection: LessonSelection) -> str:
    """The report's closing "## Lessons Applied" section; empty when no lessons."""
    if not selection.lessons:
        return ""
    lines = [
        "## Lessons Applied",
        "",
        f"This run used lessons drawn from critiques of earlier {_domain_label(selection.domain)} reports:",
        "",
    ]
    for number, lesson in enumerate(selection.lessons, start=1):
        ids = ", ".join(f"`{i}`" for i in lesson.critique_ids)
        lines.append(f"{number}. {lesson.text} (critiques: {ids})")
    return "\n".join(lines) + "\n"
