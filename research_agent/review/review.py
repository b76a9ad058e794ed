"""The review of a draft: lint issues plus the skeptic's findings, and the verdict.

The skeptic stage returns structured findings; this module maps them onto issues by
their ``severity`` field only (critical -> critical, concern -> warning, observation ->
nothing). Words in a finding's text, such as "no critical findings", never change its
severity.
"""

from __future__ import annotations

import bisect
import logging
import math
import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from ..claims.sentences import is_disputed
from ..text.controls import one_line
from ..text.sanitize import sanitize
from .checks.text import prose_word_count
from .issues import Issue, Severity
from .lint import lint_parsed
from .markdown import ParsedReport, parse_report
from .rules import Rule, RuleLimits

__all__ = [
    "SkepticFindingLike",
    "Review",
    "issues_from_findings",
    "review_draft",
    "Linted",
    "lint_draft",
    "review_linted",
    "needs_revision",
    "read_viability",
    "cap_viability",
    "open_critical_issues",
    "order_issues",
    "still_open",
    "counted",
    "MIN_CONFIDENCE",
]

log = logging.getLogger(__name__)

_SEVERITY: dict[str, Severity] = {"critical": "critical", "concern": "warning"}
_TEXT_CAP = 300
VIABILITY_CAP = 50  # the most a draft with open critical lint issues is shown with
MIN_CONFIDENCE = 0.7  # a critical issue less sure than this is neither revised for nor rejects a report


class SkepticFindingLike(Protocol):
    """What review needs from one skeptic finding (the skeptic stage's SkepticFinding)."""

    @property
    def lens(self) -> str: ...
    @property
    def severity(self) -> str: ...
    @property
    def claim(self) -> str: ...
    @property
    def reason(self) -> str: ...
    @property
    def fix(self) -> str: ...
    @property
    def confidence(self) -> float: ...


_Finding = TypeVar("_Finding", bound=SkepticFindingLike)


@dataclass(frozen=True)
class Review:
    """The verdict on one draft. ``viability`` None means the skeptic gave no usable score;
    ``words`` is its prose word count as the length check counts it (None: not counted)."""

    issues: tuple[Issue, ...]
    viability: int | None
    viability_note: str
    approved: bool
    critical_count: int
    warning_count: int
    min_viability: int = 51
    words: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "approved": self.approved,
            "critical": self.critical_count,
            "warnings": self.warning_count,
            "words": self.words,
            "viability": self.viability,
            "viability_note": self.viability_note,
            "min_viability": self.min_viability,
            "issues": [issue.as_dict() for issue in self.issues],
        }


# ---------------------------------------------------------------------------------------
# Skeptic findings -> issues
# ---------------------------------------------------------------------------------------


def _normalize_with_map(text: str) -> tuple[str, list[int]]:
    """Lower-case ``text`` with citations, emphasis and whitespace runs folded.

    Returns the normalized text and, for each of its characters, the offset in ``text``.
    """
    text_chars: list[str] = []
    offsets: list[int] = []
    skip = _ignorable_spans(text)
    pending_space = False
    for i, ch in enumerate(text):
        if i in skip or ch in "*_`":
            continue
        if ch.isspace():
            pending_space = bool(text_chars)
            continue
        if pending_space:
            text_chars.append(" ")
            offsets.append(i)
            pending_space = False
        text_chars.append(_QUOTES.get(ch, ch).lower())
        offsets.append(i)
    return "".join(text_chars), offsets


_QUOTES = {"“": '"', "”": '"', "‘": "'", "’": "'", "–": "-", "—": "-"}
# Starts only where a whitespace run starts: a search from inside a long run would rescan it.
_CITATION = re.compile(r"(?<!\s)\s*+\[\d{1,4}(?:\s*[-–,]\s*\d{1,4})*\]")


def _ignorable_spans(text: str) -> set[int]:
    return {i for m in _CITATION.finditer(text) for i in range(m.start(), m.end())}


def _line_of_claim(
    markdown: str, claim: str, body_offset: int, normalized: tuple[str, list[int]]
) -> int | None:
    needle, _ = _normalize_with_map(claim.strip().strip("\"'“”‘’").strip())
    needle = needle.strip(" .")
    if len(needle) < 3:
        return None
    haystack, offsets = normalized
    position = -1
    for start in (_first_index_at_or_after(offsets, body_offset), 0):
        position = haystack.find(needle, start)
        if position >= 0:
            break
    if position < 0:
        return None
    return markdown.count("\n", 0, offsets[position]) + 1


def _first_index_at_or_after(offsets: list[int], offset: int) -> int:
    return bisect.bisect_left(offsets, offset)


def _body_offset(markdown: str) -> int:
    """Offset of the first character after the YAML front matter (0 if none)."""
    if not markdown.startswith("---"):
        return 0
    match = re.search(r"\n(?:---|\.\.\.)[ \t]*(?:\n|$)", markdown[3:])
    return 3 + match.end() if match else 0


def _confidence(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 0.0
    if math.isnan(number):
        return 0.0
    return min(1.0, max(0.0, number))


def _clean(text: Any) -> str:
    return sanitize(str(text or ""), single_line=True, max_chars=_TEXT_CAP)


def issues_from_findings(markdown: str, findings: Iterable[SkepticFindingLike]) -> list[Issue]:
    """Map skeptic findings to issues: critical -> critical, concern -> warning.

    Observations (and unknown severities, which are logged) are not issues. The line is
    where the quoted claim appears in ``markdown`` (whitespace, case, emphasis and
    citation markers ignored), else None.
    """
    findings = list(findings)
    if not findings:
        return []
    markdown = markdown.replace("\r\n", "\n")
    body = _body_offset(markdown)
    normalized = _normalize_with_map(markdown)
    issues: list[Issue] = []
    for finding in findings:
        raw_severity = str(getattr(finding, "severity", "")).strip().lower()
        if raw_severity == "observation":
            continue
        severity = _SEVERITY.get(raw_severity)
        if severity is None:
            log.warning("skeptic finding with unknown severity %r ignored", raw_severity)
            continue
        lens = re.sub(r"[^a-z0-9]+", "_", str(getattr(finding, "lens", "") or "general").lower()).strip("_")
        claim = _clean(getattr(finding, "claim", ""))
        issues.append(
            Issue(
                type=f"skeptic:{lens or 'general'}",
                severity=severity,
                line=_line_of_claim(markdown, claim, body, normalized) if claim else None,
                matched=claim,
                reason=_clean(getattr(finding, "reason", "")) or "the skeptic flagged this claim",
                fix=_clean(getattr(finding, "fix", ""))
                or "support the claim with a cited source, or remove it",
                origin="skeptic",
                confidence=_confidence(getattr(finding, "confidence", 0.0)),
            )
        )
    return issues


# ---------------------------------------------------------------------------------------
# The verdict
# ---------------------------------------------------------------------------------------


def read_viability(viability: Any) -> tuple[int | None, str]:
    """(score in 0..100 or None, note). A viability is a whole number from 0 to 100: anything else
    (none, not a number, a fraction, out of range: ``1234567890`` is no judgement) is "unscored",
    and the note says what was given."""
    if viability is None or isinstance(viability, bool):
        return None, "unscored"
    try:
        number = float(viability)
    except (TypeError, ValueError):
        return None, f"unscored: {str(viability)[:40]!r} is not a number"
    shown = str(viability)[:40]
    if math.isnan(number) or math.isinf(number):
        return None, f"unscored: {shown} is not a number"
    if number != int(number):
        return None, f"unscored: the skeptic's viability {shown} is not a whole number from 0 to 100"
    if not 0 <= number <= 100:
        return None, f"unscored: the skeptic's viability {shown} is outside 0-100"
    return int(number), ""


def order_issues(issues: Iterable[Issue]) -> list[Issue]:
    """Critical first, then warnings; each by line (unknown lines last), lint before skeptic."""
    return sorted(
        issues,
        key=lambda i: (i.severity != "critical", i.line is None, i.line or 0, i.origin != "lint", i.type),
    )


@dataclass(frozen=True)
class Linted:
    """A draft's lint, made apart from its review: a run lints its draft while the skeptic reads it."""

    doc: ParsedReport
    issues: tuple[Issue, ...]


def lint_draft(
    markdown: str,
    *,
    target_words: int | None,
    rules: Sequence[Rule] = (),
    sources: Collection[int] | None = None,
    rule_limits: RuleLimits | None = None,
    short_reason: str = "",
) -> Linted:
    """Parse and lint ``markdown`` (see :func:`review_draft` for the arguments)."""
    doc = parse_report(markdown)
    issues = lint_parsed(
        doc, target_words=target_words, rules=rules, sources=sources, rule_limits=rule_limits, short_reason=short_reason
    )
    return Linted(doc, tuple(issues))


def review_draft(
    markdown: str,
    *,
    target_words: int | None,
    findings: Sequence[SkepticFindingLike] = (),
    viability: int | None = None,
    min_viability: int = 51,
    rules: Sequence[Rule] = (),
    sources: Collection[int] | None = None,
    rule_limits: RuleLimits | None = None,
    short_reason: str = "",
) -> Review:
    """Lint ``markdown``, add the skeptic's findings, and decide.

    Approved means no critical issue and a viability that is unscored or at least
    ``min_viability``. The viability shown is capped by open critical lint issues
    (:func:`cap_viability`); the skeptic's own score stays the caller's to act on. ``sources`` is passed to :func:`lint_report` (valid citation
    numbers for a draft without its own Sources list), and so is ``short_reason`` (the
    program's reason for a short draft).
    """
    linted = lint_draft(
        markdown, target_words=target_words, rules=rules, sources=sources, rule_limits=rule_limits,
        short_reason=short_reason,
    )  # fmt: skip
    return review_linted(markdown, linted, findings=findings, viability=viability, min_viability=min_viability)


def review_linted(
    markdown: str,
    linted: Linted,
    *,
    findings: Sequence[SkepticFindingLike] = (),
    viability: int | None = None,
    min_viability: int = 51,
) -> Review:
    """The review of ``markdown`` from its lint (:func:`lint_draft`) and the skeptic's findings."""
    issues = order_issues([*linted.issues, *issues_from_findings(markdown, findings)])
    score, note = read_viability(viability)
    score, note = cap_viability(score, note, issues)
    critical = sum(1 for i in issues if i.severity == "critical")
    approved = critical == 0 and (score is None or score >= min_viability)
    return Review(
        issues=tuple(issues),
        viability=score,
        viability_note=note,
        approved=approved,
        critical_count=critical,
        warning_count=len(issues) - critical,
        min_viability=min_viability,
        words=prose_word_count(linted.doc),
    )


def still_open(findings: Sequence[_Finding], markdown: str) -> tuple[_Finding, ...]:
    """Findings whose quoted claim still stands in ``markdown`` (on one line, not marked disputed),
    outside the parts the tool adds itself: the Adversarial Analysis quotes every claim it found."""
    if not findings:
        return ()
    doc = parse_report(markdown)
    lines = [one_line(line).lower() for n, line in enumerate(doc.lines, 1) if n not in doc.tool_lines]
    open_findings = []
    for finding in findings:
        claim = one_line(finding.claim).lower()
        if claim and any(claim in line and not is_disputed(line) for line in lines):
            open_findings.append(finding)
    return tuple(open_findings)


def counted(finding: SkepticFindingLike, *, min_confidence: float = MIN_CONFIDENCE) -> bool:
    """False for a critical finding too unsure to revise for or to reject a report
    (see :func:`needs_revision`): the run's verdict does not count it."""
    return finding.severity != "critical" or _confidence(finding.confidence) >= min_confidence


def needs_revision(review: Review, *, min_confidence: float = MIN_CONFIDENCE) -> bool:
    """True when a critical issue has confidence at least ``min_confidence``."""
    return any(i.severity == "critical" and i.confidence >= min_confidence for i in review.issues)


# The final report renumbers every citation and removes those that resolve to nothing, and takes
# out every web address no source has, so these issues never stand in it; their reasons quote the
# draft's numbering ("it has 1-12").
_SETTLED_BY_THE_FINAL_REPORT = {"missing_source", "sources_list", "unknown_address"}


def _open_critical(issues: Iterable[Issue]) -> list[Issue]:
    return [i for i in issues if i.severity == "critical" and i.type not in _SETTLED_BY_THE_FINAL_REPORT]


def cap_viability(score: int | None, note: str, issues: Iterable[Issue]) -> tuple[int | None, str]:
    """(score, note) with the score held to at most 50 while a critical lint issue is open.

    Debris is the writer's fault whatever the skeptic made of it: a draft the lint
    rejects is never shown as viable. Citation issues the final report settles do not cap.
    """
    lint = [i for i in _open_critical(issues) if i.origin == "lint"]
    if score is None or score <= VIABILITY_CAP or not lint:
        return score, note
    capped = f"viability capped at {VIABILITY_CAP} (the skeptic said {score}): {len(lint)} critical lint issue(s) open"
    return VIABILITY_CAP, f"{note}; {capped}" if note else capped


def open_critical_issues(review: Review, *, min_confidence: float = MIN_CONFIDENCE) -> tuple[Issue, ...]:
    """The critical issues that stand in the final report and that revision would act on
    (confidence at least ``min_confidence``, as :func:`needs_revision`): what rejects it.

    Citation issues are left out (the final report settles them), and so are claims
    marked "[Disputed]": the skeptic's findings on them are no longer passed to review,
    and the lint does not read a disputed sentence as a claim.
    """
    return tuple(i for i in _open_critical(review.issues) if i.confidence >= min_confidence)
