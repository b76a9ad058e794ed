"""The lint's run of the user's custom rules, each under its time budget."""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence

from ..issues import Issue
from ..markdown import ParsedReport
from ..rules import Rule, RuleDeadline, RuleLimits
from .common import lint_issue, short

__all__ = ["RULE_TIMEOUT", "check_rules"]

_MAX_MATCHES_PER_RULE = 50
RULE_TIMEOUT = "rule_timeout"  # the Issue.type of a rule stopped at its time budget


def _overrun(rule: Rule, budget: float) -> Issue:
    return lint_issue(
        RULE_TIMEOUT,
        "warning",
        None,
        rule.name,
        f"custom rule {rule.name!r} ran past its {budget:g}s time budget and was stopped; its matches are missing",
        "simplify the rule's pattern: nested quantifiers such as (\\w+\\s?)+ backtrack without end",
    )


def check_rules(doc: ParsedReport, rules: Sequence[Rule], *, limits: RuleLimits | None = None) -> list[Issue]:
    """Matches of the user's rules anywhere after the front matter (at most 50 per rule),
    except in the parts the tool adds itself (read as blank lines).

    Each rule runs within ``limits`` (default: :data:`RULE_TIME_BUDGET` seconds each). A
    rule stopped at its own budget becomes one ``rule_timeout`` warning naming it; one
    stopped by the overall deadline raises :class:`RuleDeadline`.
    """
    if not rules:
        return []
    limits = limits or RuleLimits()
    body = "\n".join(
        "" if number in doc.tool_lines else line
        for number, line in enumerate(doc.lines[doc.body_start :], start=doc.body_start + 1)
    )
    line_starts = [0]
    for m in re.finditer("\n", body):
        line_starts.append(m.end())
    issues: list[Issue] = []
    for rule in rules:
        budget, by_deadline = limits.next_budget()
        try:
            found = rule.find(body, timeout=budget, limit=_MAX_MATCHES_PER_RULE)
        except TimeoutError:
            if by_deadline:
                raise RuleDeadline(rule.name) from None
            issues.append(_overrun(rule, budget))
            continue
        for start, matched in found:
            line = doc.body_start + bisect.bisect_right(line_starts, start)
            issues.append(
                Issue(
                    rule.issue_type, rule.severity, line, short(matched), rule.reason, rule.fix, "lint", 1.0
                )
            )
    return issues
