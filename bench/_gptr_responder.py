"""Plausible answers to GPT Researcher's prompts, for the fake OpenAI-compatible server.

GPT Researcher (0.15.1, a research_report over local documents) makes three chat calls:
it picks an agent (JSON with ``server`` and ``agent_role_prompt``), writes sub-queries (a
JSON list of strings) and writes the report (free markdown over the passages it
gathered). The answers here are derived from the prompts, as
``tests/support/research_responder.py`` does for research-agent: sub-queries from the
question's words, a report that quotes and cites the passages it was given.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["GptrResponder", "call_kind"]

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    "a an and are as at be by does for from how in is it of on or that the this to what when which why with".split()
)
_PASSAGE = re.compile(r"^Source: (.*?)\nTitle: (.*?)\nContent: (.*?)(?=\nSource: |\Z)", re.S | re.M)


def _text(body: dict[str, Any], role: str) -> str:
    parts = [m.get("content") for m in body.get("messages", []) if m.get("role") == role]
    return "\n".join(p if isinstance(p, str) else json.dumps(p) for p in parts)


def call_kind(body: dict[str, Any]) -> str:
    """Which of GPT Researcher's calls this is: agent, sub-queries, report or other."""
    system, user = _text(body, "system"), _text(body, "user")
    if "Agents are categorized" in system or user.startswith("task:"):
        return "agent"
    if re.search(r"Write \d+ search queries", user):
        return "sub-queries"
    if user.lstrip().startswith('Information: "') and "detailed report" in user:
        return "report"
    return "other"


def _words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 2]


def _quoted_task(user: str, lead: str) -> str:
    match = re.search(lead + r' "(.*?)"', user, re.S)
    return match.group(1).strip() if match else user[:200]


def _agent(user: str) -> str:
    return json.dumps({
        "server": "💻 Software Documentation Agent",
        "agent_role_prompt": "You are a meticulous software documentation analyst. You write accurate, "
        "well-structured technical reports grounded in the documentation you are given.",
    })  # fmt: skip


def _sub_queries(user: str) -> str:
    count = int(re.search(r"Write (\d+) search queries", user).group(1))
    words = _words(_quoted_task(user, "research the following task:")) or ["topic"]
    facets = ["overview", "how it works", "examples", "limitations", "best practices"]
    queries = [" ".join(dict.fromkeys([*words[:4], facets[i % len(facets)]])) for i in range(count)]
    return json.dumps(queries)


def _sentences(text: str, limit: int) -> list[str]:
    parts = re.split(r"(?<=[.!?])\s+", " ".join(text.split()))
    return [p for p in parts if 40 <= len(p) <= 300][:limit]


def _report(user: str) -> str:
    question = _quoted_task(user, "answer the following query or task:")
    passages = _PASSAGE.findall(user.split('Information: "', 1)[-1])
    lines = [f"# {question.rstrip('?')}", "", "## Introduction", "",
             f"This report answers the question \"{question}\" from the documents provided.", ""]  # fmt: skip
    sources: dict[str, str] = {}
    for source, title, content in passages:
        sentences = _sentences(content, 2)
        if not sentences:
            continue
        sources.setdefault(source, title or source)
        lines += [f"## {title or source}", "", " ".join(sentences) + f" ([{title or source}]({source}))", ""]
    lines += ["## Conclusion", "", "The documents agree on the mechanism described above.", "", "## References", ""]
    lines += [f"- {title}. {source}" for source, title in sources.items()] or ["- (no passages were given)"]
    return "\n".join(lines) + "\n"


_ANSWERS: dict[str, Callable[[str], str]] = {"agent": _agent, "sub-queries": _sub_queries, "report": _report}


class GptrResponder:
    """The FakeOpenAIServer responder for GPT Researcher; counts calls and prompt tokens by kind."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}
        self.tokens: dict[str, int] = {}
        self._lock = threading.Lock()  # the server answers calls in parallel threads

    def __call__(self, body: dict[str, Any], stage: str) -> str:
        kind = call_kind(body)
        with self._lock:
            self.calls[kind] = self.calls.get(kind, 0) + 1
            self.tokens[kind] = self.tokens.get(kind, 0) + len(json.dumps(body.get("messages", []))) // 4
        answer = _ANSWERS.get(kind)
        if answer is None:
            return "The documents provided cover this point; see the sections above."
        return answer(_text(body, "user"))
