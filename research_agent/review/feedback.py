"""The review as text: what the writer model gets on revision and what ``-v`` shows.

The shape (issues grouped by type, critical groups marked ``X``, warning groups ``!``)::

    REJECTED - Issues Found:

    X Unsupported claims (2 issues):
      - Line 14: "cut energy use by 40%" - numeric claim without a citation
        FIX: cite the source that gives this figure, or remove it
    ! Length (380 words, target 1200):
        FIX: ...

    Summary:
      - Critical issues: 2
      - Warnings: 1
      - Viability: 44/100
      - Words of prose: 380

Quoted draft text passes :func:`~research_agent.text.sanitize.sanitize`, so a leaked
delimiter is named by its line, never repeated into the next prompt.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from ..text.sanitize import sanitize
from .issues import Issue
from .review import Review, open_critical_issues, order_issues

__all__ = ["format_feedback", "issue_title", "open_issue_lines", "ISSUE_TITLES"]

ISSUE_TITLES: dict[str, str] = {
    "structure": "Report structure",
    "unsupported_claim": "Unsupported claims",
    "missing_source": "Citations to missing sources",
    "sources_list": "Sources list",
    "empty_section": "Empty sections",
    "placeholder": "Placeholder text",
    "prompt_leak": "Leaked prompt text",
    "debris": "Text without words",
    "url_heading": "Headings that are web addresses",
    "no_citation": "No citations",
    "duplicate_section": "Repeated sections",
    "duplicate_paragraph": "Duplicated paragraphs",
    "unknown_address": "Web addresses no source has",
    "length": "Length",
}
# Types whose single issue is summed up in the group title, e.g. "Length (380 words, target 1200)".
_DETAIL_IN_TITLE = {"length"}


def issue_title(issue_type: str) -> str:
    """A human title for an issue type: "Unsupported claims", "Skeptic: evidence", "Rule no-hype"."""
    if issue_type in ISSUE_TITLES:
        return ISSUE_TITLES[issue_type]
    if issue_type.startswith("skeptic:"):
        return "Skeptic: " + issue_type.partition(":")[2].replace("_", " ")
    if issue_type.startswith("rule:"):
        return "Rule " + issue_type.partition(":")[2]
    text = issue_type.replace("_", " ").strip()
    return text[:1].upper() + text[1:] if text else "Other"


def _clean(text: str) -> str:
    return sanitize(text, single_line=True, max_chars=300)


def _groups(issues: Iterable[Issue]) -> list[tuple[str, str, list[Issue]]]:
    groups: dict[tuple[str, str], list[Issue]] = {}
    for issue in order_issues(issues):
        groups.setdefault((issue.severity, issue.type), []).append(issue)

    def key(item: tuple[tuple[str, str], list[Issue]]) -> tuple[bool, bool, int, str]:
        (severity, kind), members = item
        lines = [i.line for i in members if i.line is not None]
        return (severity != "critical", not lines, min(lines) if lines else 0, issue_title(kind))

    return [(severity, kind, members) for (severity, kind), members in sorted(groups.items(), key=key)]


def _item(issue: Issue) -> str:
    parts = []
    if issue.line is not None:
        parts.append(f"Line {issue.line}:")
    matched = _clean(issue.matched)
    if matched:
        parts.append(f'"{matched}" -')
    parts.append(_clean(issue.reason) or "flagged by review")
    return "  - " + " ".join(parts)


def _header(review: Review) -> str:
    if review.approved:
        return "APPROVED - Warnings:" if review.issues else "APPROVED - No Issues Found"
    if review.issues:
        return "REJECTED - Issues Found:"
    return f"REJECTED - Viability Too Low ({review.viability}/100, minimum {review.min_viability})"


def format_feedback(review: Review) -> str:
    """The review as grouped, line-numbered text with a fix for every issue and a summary."""
    out = [_header(review), ""]
    for severity, kind, members in _groups(review.issues):
        mark = "X" if severity == "critical" else "!"
        title = issue_title(kind)
        if kind in _DETAIL_IN_TITLE and len(members) == 1 and members[0].matched:
            out.append(f"{mark} {title} ({_clean(members[0].matched)}):")
            out.append(f"    FIX: {_clean(members[0].fix)}")
            continue
        count = len(members)
        out.append(f"{mark} {title} ({count} issue{'s' if count != 1 else ''}):")
        for issue in members:
            out.append(_item(issue))
            if issue.fix:
                out.append(f"    FIX: {_clean(issue.fix)}")
    if review.issues:
        out.append("")
    viability = "unscored" if review.viability is None else f"{review.viability}/100"
    out += [
        "Summary:",
        f"  - Critical issues: {review.critical_count}",
        f"  - Warnings: {review.warning_count}",
        f"  - Viability: {viability}",
    ]
    if review.words is not None:
        out.append(f"  - Words of prose: {review.words}")
    return "\n".join(out)


_LINE_SHOWN = 5  # line numbers listed per kind of open issue; the rest are counted
_LINE_REF = re.compile(r"\bline (\d+)\b")


def open_issue_lines(review: Review, *, line_of: Callable[[int], int] | None = None) -> tuple[str, ...]:
    """One line per kind of critical issue left open (whatever its confidence), for the report's
    Limitations & Gaps: every kind, how many, where, and the first one's text and reason.

    ``line_of`` maps a line of the markdown the review read to the same line of the published
    report (lines in the lint's reasons too). Citation issues are left out: the final report
    settles them."""
    moved = line_of or (lambda line: line)
    kinds: dict[str, list[Issue]] = {}
    for issue in open_critical_issues(review, min_confidence=0.0):
        kinds.setdefault(issue_title(issue.type).lower(), []).append(issue)
    return tuple(_kind_line(kind, issues, moved) for kind, issues in kinds.items())


def _kind_line(kind: str, issues: list[Issue], moved: Callable[[int], int]) -> str:
    """``Unresolved after review: KIND (N issue(s), at lines ...), the first "TEXT": REASON.``"""
    first = issues[0]
    at = sorted({moved(i.line) for i in issues if i.line is not None})
    where = ", ".join(str(n) for n in at[:_LINE_SHOWN])
    if len(at) > _LINE_SHOWN:
        where += f" and {len(at) - _LINE_SHOWN} more"
    quoted = f'"{_clean(first.matched)}"' if first.matched else ""
    if len(issues) == 1:
        head = (f"{kind} at line {where}" if at else kind) + (f": {quoted}" if quoted else "")
    else:
        head = f"{kind} ({len(issues)} issue(s)" + (f", at lines {where})" if at else ")") + f", the first {quoted}"
    reason = _clean(first.reason).rstrip(".")
    if first.origin == "lint":
        reason = _LINE_REF.sub(lambda m: f"line {moved(int(m.group(1)))}", reason)
    return f"Unresolved after review: {head.rstrip()}: {reason}."
