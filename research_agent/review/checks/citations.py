"""Lint checks of the citations against the Sources list: numbers that point nowhere,
sources never cited, and numbers listed twice."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from ..issues import Issue
from ..markdown import ParsedReport
from .common import block_citations, lint_issue

__all__ = ["check_citations", "check_sources_list"]


def check_citations(doc: ParsedReport, sources: Collection[int] | None = None) -> list[Issue]:
    """Citations to source numbers that do not exist (critical).

    A Sources section in the report gives the valid numbers; without one, ``sources``
    does (a draft before rendering); with neither, citing anything is one issue.
    """
    cites = [c for block in doc.cited_blocks for c in block_citations(block)]
    if not cites:
        return []
    if doc.sources_heading is not None:
        valid: set[int] = {entry.number for entry in doc.sources}
    elif sources is not None:
        valid = set(sources)
    else:
        first = cites[0]
        return [
            lint_issue(
                "missing_source",
                "critical",
                first.line,
                first.text,
                "the report cites sources but has no Sources section",
                "add a numbered Sources list that matches the citations",
            )
        ]
    listed = _describe_numbers(sorted(valid))
    issues: list[Issue] = []
    seen: set[tuple[int, int]] = set()
    for cite in cites:
        for number in cite.numbers:
            if number in valid or (number, cite.line) in seen:
                continue
            seen.add((number, cite.line))
            issues.append(
                lint_issue(
                    "missing_source",
                    "critical",
                    cite.line,
                    cite.text,
                    f"cites source {number}, which is not in the Sources list ({listed})",
                    "cite a source that is in the list, or remove the claim",
                )
            )
    return issues


def _describe_numbers(numbers: Sequence[int]) -> str:
    if not numbers:
        return "it is empty"
    if list(numbers) == list(range(numbers[0], numbers[-1] + 1)):
        return f"it has {numbers[0]}-{numbers[-1]}" if len(numbers) > 1 else f"it has only {numbers[0]}"
    return "it has " + ", ".join(str(n) for n in numbers)


def check_sources_list(doc: ParsedReport) -> list[Issue]:
    """Sources entries never cited (warning) and source numbers listed twice (critical)."""
    if doc.sources_heading is None:
        return []
    cited = {n for block in doc.cited_blocks for c in block_citations(block) for n in c.numbers}
    issues: list[Issue] = []
    first_line: dict[int, int] = {}
    for entry in doc.sources:
        if entry.number in first_line:
            issues.append(
                lint_issue(
                    "sources_list",
                    "critical",
                    entry.line,
                    f"{entry.number}. {entry.text}",
                    f"source number {entry.number} is listed twice (first at line {first_line[entry.number]}),"
                    " so its citations are ambiguous",
                    "give every source its own number and renumber the citations to match",
                )
            )
            continue
        first_line[entry.number] = entry.line
        if entry.number not in cited:
            issues.append(
                lint_issue(
                    "sources_list",
                    "warning",
                    entry.line,
                    f"{entry.number}. {entry.text}",
                    f"source {entry.number} is listed but never cited",
                    "cite it where the report uses it, or drop it from the list",
                )
            )
    return issues
