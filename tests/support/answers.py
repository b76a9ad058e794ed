"""Scripted answers in the shapes the stages ask for now: relevance in batches, the writer in markdown.

Tests written for one source per relevance call and a JSON draft keep their scripts:
``scored_each(judge)`` answers a batch with ``judge(block)`` for each source's block of
the prompt, and ``as_markdown(draft)`` writes a draft dict as the writer's markdown.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from research_agent.llm import ChatRequest
from tests.support.research_responder import writer_markdown

__all__ = ["scored_each", "as_markdown", "relevance_blocks"]

_ENTRY = re.compile(r"^\[(\d+)\] [^\n]*\n<<<DATA source \d+", re.M)


def relevance_blocks(user: str) -> list[tuple[int, str]]:
    """(id, the source's part of the prompt: title line and excerpt) for each source of a relevance call."""
    starts = list(_ENTRY.finditer(user))
    ends = [m.start() for m in starts[1:]] + [len(user)]
    return [(int(m.group(1)), user[m.start() : end]) for m, end in zip(starts, ends, strict=True)]


def scored_each(judge: Callable[[str], dict[str, Any]] | dict[str, Any]) -> Callable[[ChatRequest], dict[str, Any]]:
    """A relevance answer that scores every source of the batch with ``judge(block)`` (or a fixed answer)."""

    def answer(request: ChatRequest) -> dict[str, Any]:
        scores = []
        for n, block in relevance_blocks(request.user):
            verdict = judge(block) if callable(judge) else judge
            scores.append({"id": n, **verdict})
        return {"scores": scores}

    return answer


def as_markdown(draft: dict[str, Any] | Callable[[ChatRequest], dict[str, Any]]) -> Any:
    """The writer's markdown for a draft dict (or a function of the request giving one)."""
    if callable(draft):
        return lambda request: writer_markdown(draft(request))
    return writer_markdown(draft)
