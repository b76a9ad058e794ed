"""Deterministic lint of a markdown report: the first of the two critics of a draft.

``lint_report`` parses the report once (:mod:`.markdown`: front matter, headings, prose
blocks, the Sources list) and runs small checks over it, each returning :class:`Issue`
objects with ``origin="lint"`` and a 1-based line number in the full markdown (front
matter included):

- :mod:`.checks.citations`: citations to sources that do not exist, the Sources list;
- :mod:`.checks.claims`: numeric claims without a citation;
- :mod:`.checks.text`: structure, empty sections, placeholders, leaked prompt text, length;
- :mod:`.checks.debris`: debris (headings that are web addresses, text with no real
  word) and a report written from sources that cites none;
- :mod:`.checks.repeats`: repeated sections and paragraphs;
- :mod:`.checks.addresses`: web addresses in the prose that no source has;
- :mod:`.checks.rules`: the user's custom rules, under their time budget.

Front matter, the Sources list and the "Lessons Applied" section are not prose: they
are never checked for numeric claims, duplicates or length. Code (fenced or indented
blocks, and inline spans) is never prose either, and neither are the parts the tool adds
to a report itself (Adversarial Analysis, Limitations & Gaps, the rejection note): one
rule, so that the run's review of its draft and ``review`` of the written file agree.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from .checks.addresses import check_addresses
from .checks.citations import check_citations, check_sources_list
from .checks.claims import check_numeric_claims
from .checks.debris import check_debris, check_no_citation
from .checks.repeats import check_repeats
from .checks.rules import check_rules
from .checks.text import (
    check_empty_sections,
    check_leaks,
    check_length,
    check_placeholders,
    check_structure,
)
from .issues import Issue
from .markdown import ParsedReport, parse_report
from .rules import Rule, RuleLimits

__all__ = ["CHECKS", "lint_report", "lint_parsed"]

CHECKS = (
    "structure",
    "missing_source",
    "sources_list",
    "unsupported_claim",
    "empty_section",
    "placeholder",
    "prompt_leak",
    "debris",
    "url_heading",
    "no_citation",
    "duplicate_section",
    "duplicate_paragraph",
    "length",
)


def _order(issue: Issue) -> tuple[int, int, int, str]:
    return (
        0 if issue.severity == "critical" else 1,
        issue.line is None,
        issue.line or 0,
        issue.type,
    )


def lint_report(markdown: str, **options: Any) -> list[Issue]:
    """Lint ``markdown`` (the ``options`` of :func:`lint_parsed`); issues ordered critical first,
    then warnings, each by line."""
    return lint_parsed(parse_report(markdown), **options)


def lint_parsed(
    doc: ParsedReport,
    *,
    target_words: int | None,
    rules: Sequence[Rule] = (),
    sources: Collection[int] | None = None,
    rule_limits: RuleLimits | None = None,
    short_reason: str = "",
) -> list[Issue]:
    """Lint a parsed report; issues ordered critical first, then warnings, each by line.

    ``target_words`` (None or 0: no length check) is the mode's target length;
    ``short_reason`` is the program's own reason for a short draft (it was cut short),
    which spares it the critical length issue.
    ``sources`` gives the valid citation numbers for a draft that has no Sources list
    of its own (the pipeline's draft before rendering); a Sources section in the
    markdown always takes precedence. ``rule_limits`` bounds the time of custom rules
    (see :func:`.checks.rules.check_rules`).
    """
    issues = [
        *check_structure(doc, sources),
        *check_citations(doc, sources),
        *check_sources_list(doc),
        *check_numeric_claims(doc),
        *check_empty_sections(doc),
        *check_placeholders(doc),
        *check_leaks(doc),
        *check_debris(doc),
        *check_no_citation(doc),
        *check_repeats(doc),
        *check_addresses(doc),
        *check_length(doc, target_words, short_reason=short_reason),
        *check_rules(doc, rules, limits=rule_limits),
    ]
    return sorted(issues, key=_order)
