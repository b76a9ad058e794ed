"""What the lint's checks share: the issue they build, and the views of a parsed report they read."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from ...text.citations import CITATION, citation_numbers
from ...text.controls import one_line
from ...text.masking import blank_code, mask_code_and_urls
from ..issues import Issue, Severity
from ..markdown import Block, ParsedReport

__all__ = ["BlockCitation", "block_citations", "claim_context", "lint_issue", "prose_lines", "short"]


def short(text: str, limit: int = 120) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    text = one_line(text)
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def lint_issue(type_: str, severity: Severity, line: int | None, matched: str, reason: str, fix: str) -> Issue:
    """An issue found by the lint: certain (confidence 1.0), ``matched`` shortened."""
    return Issue(type_, severity, line, short(matched), reason, fix, "lint", 1.0)


def prose_lines(doc: ParsedReport) -> Iterator[tuple[int, str]]:
    """(line number, text with inline code blanked) for every body line outside code blocks
    and the parts the tool adds itself (its Adversarial Analysis, Limitations & Gaps, rejection note)."""
    for index in range(doc.body_start, len(doc.lines)):
        number = index + 1
        if number not in doc.code_lines and number not in doc.tool_lines:
            yield number, blank_code(doc.lines[index])


def claim_context(text: str, start: int, end: int, floor: int) -> str:
    """Up to four words before the figure at ``text[start:end]`` (none before ``floor``), and the figure."""
    words = list(re.finditer(r"\S+", text[floor:start]))
    begin = floor + words[-4].start() if len(words) >= 4 else (floor + words[0].start() if words else start)
    return text[begin:end].strip(" ,;:([")


@dataclass(frozen=True)
class BlockCitation:
    """A citation found in a prose block (as research_agent.text.citations defines them)."""

    line: int
    start: int  # offset in the block text
    end: int
    text: str
    numbers: tuple[int, ...]


def block_citations(block: Block) -> list[BlockCitation]:
    """The citations of ``block``, code and URLs masked, each with its markdown line."""
    masked = mask_code_and_urls(block.text)
    return [
        BlockCitation(
            block.line_at(m.start()), m.start(), m.end(), m.group(0), tuple(citation_numbers(m.group(1)))
        )
        for m in CITATION.finditer(masked)
    ]
