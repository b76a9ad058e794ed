"""What a tool's text content says: a short summary for a person (or a model) to read.

The structured content carries the whole answer; repeating it as a JSON blob in the text
doubled every answer. Each function takes a tool's answer (its TypedDict) and returns a few
lines: what happened, the ids to use next, where the full answer is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..memory.store.targets import TARGETS

__all__ = ["research_text", "review_text", "lessons_text", "list_text", "show_text", "effects_text", "proposals_text"]

_SHOWN = 10


def _cost(value: float | None) -> str:
    return "cost unknown" if value is None else f"~${value:.4f}"


def research_text(data: Mapping[str, Any]) -> str:
    """The research tool: what the run produced and where to read it."""
    critique = data["critique"]
    lines = [
        f"Report {data['short_id']} written to {data['report_path']} ({data['gate_decision']}, "
        f"{len(data['sources'])} sources cited, {data['total_tokens']:,} tokens, {_cost(data['cost_usd'])}).",
        f"Question: {data['query']}",
        f"Read it as the resource report://{data['id']}; the structured content holds it whole.",
        f"Critique: {critique['state']}" + (f" ({critique['error']})" if critique.get("error") else ""),
    ]
    lines += [f"Warning: {w}" for w in data["warnings"][:_SHOWN]]
    return "\n".join(lines)


def review_text(data: Mapping[str, Any]) -> str:
    """review_report: the verdict, the counts and the first issues."""
    lines = [f"{data['verdict']}: {data['critical']} critical issue(s), {data['warnings']} warning(s)"]
    for issue in data["issues"][:_SHOWN]:
        where = f"line {issue['line']}: " if issue.get("line") else ""
        lines.append(f"- {issue['severity']} {issue['type']}: {where}{issue['reason']}")
    if len(data["issues"]) > _SHOWN:
        lines.append(f"... and {len(data['issues']) - _SHOWN} more in the structured content")
    return "\n".join(lines)


def lessons_text(data: Mapping[str, Any]) -> str:
    """memory_lessons: the domain, why, and each lesson."""
    lines = [f"domain {data['domain']}: {data['reason']}"]
    lines += [f"{n}. ({lesson['stage']}) {lesson['text']}" for n, lesson in enumerate(data["applied"], 1)]
    if data["excluded"]:
        lines.append(f"{len(data['excluded'])} critique file(s) or lesson(s) left out (see structured content)")
    return "\n".join(lines)


def list_text(data: Mapping[str, Any]) -> str:
    """memory_list: one line per critique and per failed critique."""
    critiques, failed = data["critiques"], data["failed"]
    lines = [f"{len(critiques)} critique(s), newest first" + (":" if critiques else ".")]
    for c in critiques[:_SHOWN]:
        verdict = "pass" if c["overall_pass"] else "fail"
        lines.append(f"- {c['short_id']} {c['timestamp'][:10]} {c['domain']} mean {c['mean_score']:.2f} "
                     f"({verdict}): {c['query'][:80]}")  # fmt: skip
    if len(critiques) > _SHOWN:
        lines.append(f"... and {len(critiques) - _SHOWN} more in the structured content")
    for f in failed[:_SHOWN]:
        lines.append(f"- failed critique {f['short_id']} ({f['failed_at'][:16]}): {f['reason'][:160]}")
    if data["invalid"]:
        lines.append(f"{len(data['invalid'])} invalid critique file(s) skipped")
    return "\n".join(lines)


def show_text(data: Mapping[str, Any]) -> str:
    """memory_show: the critique's verdict and scores."""
    c = data["critique"]
    scores = ", ".join(f"{name.replace('_', ' ')} {'n/a' if v is None else v}" for name, v in c["scores"].items())
    lines = [
        f"critique of {data['short_id']} ({c['query'][:80]}): mean {c['mean_score']:.2f}/5 "
        f"({'pass' if c['overall_pass'] else 'fail'})",
        f"scores: {scores}",
    ]
    lines += [f"weakness: {w}" for w in c.get("weaknesses", [])[:3]]
    return "\n".join(lines)


def _measure(name: str) -> str:
    """A measure's name in words (``scores.coverage`` -> coverage)."""
    return TARGETS[name].label if name in TARGETS else name


def effects_text(data: Mapping[str, Any]) -> str:
    """memory_effects: one line per lesson key."""
    effects = data["effects"]
    if not effects:
        return "no lesson has been measured yet"
    lines = [f"{len(effects)} lesson key(s):"]
    for e in effects[:_SHOWN]:
        delta = "n/a" if e["delta"] is None else f"{e['delta']:+.2f}"
        decided = ""
        if e.get("decided_on"):
            run = "" if e.get("decided_after") is None else f" on run {e['decided_after']} of the domain"
            decided = f" (decided{run}, on {_measure(e['decided_on'])})"
        lines.append(f"- {e['key']} ({e['domain']}): {e['status']}{decided}, difference {delta} "
                     f"over {e['applied_runs']} run(s) with it and {e['baseline_runs']} without")  # fmt: skip
    return "\n".join(lines)


def proposals_text(data: Mapping[str, Any]) -> str:
    """memory_proposals: how many proposals wait for the person, the first few, and who decides."""
    proposals = data["proposals"]
    lines = [f"{len(proposals)} proposed lesson(s) wait for the person running research-agent."]
    lines += [f"{p['key']} ({p['stage']}): {p['text']}" for p in proposals[:_SHOWN]]
    return "\n".join([*lines, data["note"]])
