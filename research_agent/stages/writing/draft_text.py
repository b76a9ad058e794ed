"""The writer's answer: markdown read into a :class:`ReportDraft`, and a draft written back.

The writer (draft and revise) answers in markdown with named headings: a summary, key
findings, body sections of its own, limitations. :func:`read_draft` reads the structure
with markdown-it-py: headings are matched by name, case-insensitively (``## Key
findings:`` is Key Findings); text before the first heading is the summary; the writer's
own H1 is ignored (the report's H1 is the question); a Sources or References list is
dropped (the program writes Sources from the citations). Headings below the section
level become bold lines of their section.

An answer cut short (the token limit, a stall, a broken stream) keeps what is complete:
:func:`complete_part` ends it at the last complete paragraph or list item; one cut before its
first paragraph ended keeps its complete sentences (:func:`complete_sentences`). A draft is
:func:`usable` when it holds at least one real paragraph.

A draft is bounded by its structure, not only by its bytes (:class:`DraftBound`, limits from the
mode's target length: :meth:`DraftLimits.for_target`): a model that ignores ``max_tokens`` and
writes 20,000 sections is cut at the section, paragraph, word or character limit, as it streams.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from difflib import SequenceMatcher
from functools import cache
from typing import TYPE_CHECKING

from ... import prompts
from ...review.markdown import LESSONS_TITLES, SOURCES_TITLES, heading_key
from ...text.citations import normalize_citations, sentence_spans
from ...text.controls import one_line, without_controls
from ...text.sanitize import DATA_MARKER
from .bounds import BLOCK_START, HEADING_START, DraftBound, DraftLimits

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

__all__ = ["ReportDraft", "DraftLimits", "DraftBound", "read_draft", "complete_part", "complete_sentences", "usable",
           "draft_markdown", "CUT_NOTES", "MIN_PARAGRAPH_WORDS"]  # fmt: skip

MIN_PARAGRAPH_WORDS = 5  # a usable draft has a paragraph (or finding) of at least this many words

_SUMMARY = frozenset({"summary", "executive summary", "overview", "abstract", "tl;dr", "tldr", "in brief", "answer"})
_FINDINGS = frozenset({"key findings", "findings", "main findings", "key points", "key takeaways", "highlights"})
_LIMITATIONS = frozenset({"limitations", "limitations & gaps", "limitations and gaps", "limitations & caveats",
                          "limitations and caveats", "gaps", "caveats", "gaps in the evidence"})  # fmt: skip
_DROPPED = SOURCES_TITLES | LESSONS_TITLES | {"adversarial analysis", "citations", "sources used"}

# A line that starts a new block: a blank line, a list item, a heading (or its beginning).
_FENCE_OPEN = re.compile(r"^```[ \t]*(?:markdown|md)?[ \t]*$", re.IGNORECASE)
# The prompt's own framing echoed back by a weak writer: a data delimiter (DATA_MARKER), and a
# source's numbered header line, "[n] title — /path or address" (synthesize.source_header).
_ECHOED_HEADER = re.compile(
    r"[ \t]*+(?:[-*+][ \t]++)?\[\d{1,4}\][ \t]++[^\n]*? \u2014 (?:[a-z][a-z0-9+.-]*+://|/)[^\n]*+", re.IGNORECASE
)

# Why a draft was cut short, as the report's Limitations say it (keys: finish reasons).
CUT_NOTES = {
    "length": "the model stopped at its token limit",
    "stalled": "the model stopped sending tokens",
    "unfinished": "the model's stream broke off",
    "deadline": "the run reached its deadline while the model was writing",
    "no_first_token": "the model sent no token in the time allowed to read the prompt",
    "bounded": "the model wrote past the report's length limits",
}


@dataclass(frozen=True)
class ReportDraft:
    """The writer's answer, by part; report.py renders it (its H1 is the question).

    ``cut`` is empty for a whole answer; otherwise why it was cut short (a key of
    :data:`CUT_NOTES`): the draft then ends at its last complete paragraph or list item.
    """

    executive_summary: str
    key_findings: tuple[str, ...]
    sections: tuple[tuple[str, str], ...]
    limitations: tuple[str, ...]
    cut: str = ""

    @property
    def texts(self) -> tuple[str, ...]:
        """The parts that make claims, in reading order: summary, findings, section bodies."""
        return (self.executive_summary, *self.key_findings, *(body for _, body in self.sections))

    @property
    def word_count(self) -> int:
        return sum(len(p.split()) for p in self.texts)

    def citing(self, source_count: int) -> ReportDraft:
        """This draft with its citations as the report will print them ("source 2" is "source [2]":
        :func:`~research_agent.text.citations.normalize_citations`), so that the skeptic, the claim
        check, the run's review and ``review`` of the published file all read the same citations;
        the draft itself when nothing changes."""

        def cite(text: str) -> str:
            return normalize_citations(text, source_count)

        cited = replace(
            self,
            executive_summary=cite(self.executive_summary),
            key_findings=tuple(cite(f) for f in self.key_findings),
            sections=tuple((heading, cite(body)) for heading, body in self.sections),
            limitations=tuple(cite(x) for x in self.limitations),
        )
        return self if cited == self else cited


def complete_part(text: str) -> str:
    """``text`` up to its last complete paragraph or list item (for an answer cut short).

    A block is complete once the next one has begun: after a blank line, or where a list
    item or a heading starts (even if only its first characters arrived).
    """
    lines = text.replace("\r\n", "\n").split("\n")
    for i in range(len(lines) - 1, 0, -1):
        last = i == len(lines) - 1  # the line still arriving: blank only means a line ended there
        if (not last and not lines[i].strip()) or BLOCK_START.match(lines[i]):
            return "\n".join(lines[:i]).rstrip()
    return ""


_SENTENCE_END = re.compile(r"[.!?][\"”')\]]*(?:\s*\[\d[\d,\s\-–]*\])*$")
_SENTENCES_PER_PARAGRAPH = 3
_ENDED = re.compile(r"[.!?][\"”')\]]*(?:\s*\[\d[\d,\s\-–]*\])*(?=\s)")  # a stop a space follows


def complete_sentences(text: str) -> str:
    """``text`` up to the end of its last complete sentence, its paragraphs split into short ones
    of a few sentences (for an answer cut before its first paragraph ended: a writer that never
    leaves a blank line). Headings and list items stay blocks of their own; "" when no sentence ended."""
    blocks: list[str] = []
    for block in _blocks(text):
        if BLOCK_START.match(block):
            blocks.append(block)
            continue
        sentences = [one_line(block[a:b]) for a, b in sentence_spans(block)]
        blocks += [" ".join(sentences[i : i + _SENTENCES_PER_PARAGRAPH]) for i in range(0, len(sentences), _SENTENCES_PER_PARAGRAPH)]
    while blocks and not _SENTENCE_END.search(blocks[-1]):
        last = blocks.pop()
        if HEADING_START.match(last):
            continue
        ended = max((m.end() for m in _ENDED.finditer(last)), default=0)  # before the sentence still arriving
        if ended:
            blocks.append(last[:ended])
            break
    while blocks and HEADING_START.match(blocks[-1]):
        blocks.pop()
    return "\n\n".join(blocks)


def _blocks(text: str) -> list[str]:
    """The blocks of ``text``: headings, list items and paragraphs, each on one line."""
    blocks: list[str] = []
    current: list[str] = []
    for line in text.replace("\r\n", "\n").split("\n"):
        starts = BLOCK_START.match(line) is not None
        if (starts or not line.strip()) and current:
            blocks.append(" ".join(current))
            current = []
        if line.strip():
            current.append(line.strip())
        if HEADING_START.match(line):
            blocks.append(" ".join(current))
            current = []
    if current:
        blocks.append(" ".join(current))
    return blocks


def usable(draft: ReportDraft) -> bool:
    """Whether the draft holds a real paragraph: a summary, finding or section body of
    at least :data:`MIN_PARAGRAPH_WORDS` words."""
    return any(len(block.split()) >= MIN_PARAGRAPH_WORDS for part in draft.texts for block in part.split("\n\n"))


@cache
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table").disable("inline")


@dataclass(frozen=True)
class _Heading:
    first: int  # 0-based line of the heading
    end: int  # 0-based line after it (a setext heading has two lines)
    level: int
    text: str

    @property
    def kind(self) -> str:
        key = heading_key(self.text)
        for kind, names in (("summary", _SUMMARY), ("findings", _FINDINGS), ("limitations", _LIMITATIONS),
                            ("dropped", _DROPPED)):  # fmt: skip
            if key in names:
                return kind
        return ""


def _unfenced(text: str) -> str:
    """The answer without a code fence wrapped around all of it (```markdown ... ```), and
    without the prompt's framing echoed back (data delimiters, source header lines, the
    prompt's own instructions): that is the tool's own text, never the writer's."""
    text = DATA_MARKER.sub("", text)
    lines = [line for line in text.strip("\n").split("\n")
             if not _ECHOED_HEADER.fullmatch(line) and not _echoes_instructions(line)]  # fmt: skip
    if lines and _FENCE_OPEN.match(lines[0].strip()):
        lines = lines[1:]
        if lines and lines[-1].strip() == "```":
            lines = lines[:-1]
    return "\n".join(lines)


_ECHO_MIN_WORDS = 5
_ECHO_SIMILAR = 0.8  # of the words in order: "Writing no title ..." echoes "Write no title ..."
_LIST_MARKER = re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+")


def _words(text: str) -> tuple[str, ...]:
    return tuple(re.findall(r"[a-z0-9]+", text.lower()))


@cache
def _instructions() -> tuple[tuple[str, ...], ...]:
    """The writer prompts' own instruction sentences (the draft's, and revise's task) of 5 or more words, as words."""
    found = []
    for template in (prompts.load("draft")[0].template, prompts.fragment_text("revise_task")):
        for line in template.split("\n"):
            if "$" not in line and not line.lstrip().startswith("#"):
                found += [w for part in re.split(r"(?<=[.!?])\s+", line) if len(w := _words(part)) >= _ECHO_MIN_WORDS]
    return tuple(found)


def _echoes_instructions(line: str) -> bool:
    """A line (a paragraph or list item) that says one of the prompt's instructions again."""
    words = _words(_LIST_MARKER.sub("", line))
    if len(words) < _ECHO_MIN_WORDS:
        return False
    return any(
        abs(len(said) - len(words)) <= 0.3 * len(said) and SequenceMatcher(None, words, said).ratio() >= _ECHO_SIMILAR
        for said in _instructions()
    )


def _headings(tokens: Sequence[Token]) -> list[_Heading]:
    found = []
    for index, token in enumerate(tokens):
        if token.type == "heading_open" and token.level == 0 and token.map is not None:
            text = " ".join(part.strip() for part in tokens[index + 1].content.split("\n"))
            found.append(_Heading(token.map[0], token.map[1], int(token.tag[1:]), text))
    return found


def _section_level(headings: Sequence[_Heading]) -> int:
    """The level of the headings that start sections: the highest below H1, else H1 (when
    the writer used several), else 2."""
    below = [h.level for h in headings if h.level > 1]
    if below:
        return min(below)
    return 1 if sum(1 for h in headings if h.level == 1) > 1 else 2


def read_draft(text: str, *, cut: str = "") -> ReportDraft:
    """The writer's markdown answer read into its parts (see the module docstring); control
    characters are left out first (model text is text)."""
    lines = _unfenced(without_controls(text)).split("\n")  # line ends made "\n" there too
    headings = _headings(_parser().parse("\n".join(lines)))
    level = _section_level(headings)
    parts: list[tuple[str, str, list[str]]] = [("summary", "", [])]  # (kind, heading, lines)
    row = 0
    for number, heading in enumerate(headings):
        parts[-1][2].extend(lines[row : heading.first])
        row = heading.end
        kind = heading.kind
        if heading.level == 1 and not kind and (level > 1 or number == 0):
            continue  # the writer's title: the report's H1 is the question
        if not kind and heading.level > level:
            parts[-1][2].append(f"**{heading.text}**")  # a sub-heading stays in its section
            continue
        parts.append((kind or "section", heading.text, []))
    parts[-1][2].extend(lines[row:])
    return _assemble(parts, cut)


def _assemble(parts: Sequence[tuple[str, str, list[str]]], cut: str) -> ReportDraft:
    summary: list[str] = []
    findings: list[str] = []
    limitations: list[str] = []
    sections: list[tuple[str, str]] = []
    for kind, heading, body_lines in parts:
        body = "\n".join(body_lines).strip()
        if kind == "summary" and body:
            summary.append(body)
        elif kind == "findings":
            findings += _items(body)
        elif kind == "limitations":
            limitations += _items(body)
        elif kind == "section" and body:
            sections.append((one_line(heading.lstrip("#")), body))
    return ReportDraft("\n\n".join(summary), tuple(findings), tuple(sections), tuple(limitations), cut)


def _items(body: str) -> list[str]:
    """The entries of a findings or limitations section: its list items, else its paragraphs."""
    if not body:
        return []
    items: list[str] = []
    depth = 0  # list nesting; an item's nested lists belong to the item
    for token in _parser().parse(body):
        if token.type == "list_item_open":
            depth += 1
            if depth == 1:
                items.append("")
        elif token.type == "list_item_close":
            depth -= 1
        elif token.type == "inline":
            text = one_line(token.content)
            if depth and items:
                items[-1] = f"{items[-1]} {text}".strip()
            elif text:
                items.append(text)
    return [item for item in items if item]


def draft_markdown(draft: ReportDraft) -> str:
    """The draft in the writer's own format (what revise is shown and answers in)."""
    parts = ["## Summary", draft.executive_summary.strip(), "## Key Findings"]
    parts.append("\n".join(f"- {f}" for f in draft.key_findings))
    for heading, body in draft.sections:
        parts += [f"## {heading}", body.strip()]
    parts += ["## Limitations", "\n".join(f"- {x}" for x in draft.limitations)]
    return "\n\n".join(p for p in parts if p) + "\n"
