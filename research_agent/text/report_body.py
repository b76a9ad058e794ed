"""The body of a rendered report as plain blocks: what its writer claimed, without the frame.

A block is a paragraph or one list item. Front matter, headings, and the sections that
are not the writer's claims (Sources, Lessons Applied, and the Adversarial Analysis,
which quotes the draft's claims back) are left out. Sentences inside a block are found
by :func:`research_agent.text.citations.sentence_spans`, so the lint and the measures
agree on where a sentence ends.
"""

from __future__ import annotations

import re

from .citations import sentence_spans
from .controls import one_line

__all__ = ["body_blocks", "body_sentences", "SKIPPED_SECTIONS"]

SKIPPED_SECTIONS = frozenset({"sources", "lessons applied", "adversarial analysis"})
_BLANK_LINE = re.compile(r"\n\s*\n")
_LIST_ITEM = re.compile(r"\n(?=[ \t]*(?:[-*+]|\d{1,3}[.)])[ \t])")
_MARKER = re.compile(r"^[ \t]*(?:[-*+]|\d{1,3}[.)])[ \t]+")


def _strip_front_matter(text: str) -> str:
    if text.startswith("---\n"):
        end = text.find("\n---", 4)
        if end != -1:
            return text[end + 4 :].lstrip("\n")
    return text


def body_blocks(report: str, *, skip: frozenset[str] = SKIPPED_SECTIONS) -> list[str]:
    """Paragraphs and list items of the report body, in order, markers and headings removed."""
    blocks: list[str] = []
    skipping = False
    for chunk in _BLANK_LINE.split(_strip_front_matter(report)):
        lines: list[str] = []
        for line in chunk.strip().splitlines():
            if line.lstrip().startswith("#"):
                skipping = line.strip().lstrip("#").strip().lower() in skip
                continue
            if not skipping and line.strip():
                lines.append(line)
        if lines:
            for item in _LIST_ITEM.split("\n".join(lines)):
                text = one_line(_MARKER.sub("", item))
                if text:
                    blocks.append(text)
    return blocks


def body_sentences(report: str) -> list[str]:
    """Every sentence of the report body, in order (the first is sentence 1)."""
    return [block[start:end].strip() for block in body_blocks(report) for start, end in sentence_spans(block)]
