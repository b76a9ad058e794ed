"""What the skeptic reads: the draft as the writer wrote it, and the passages it cites.

Each source's text reaches the model twice in a run: relevance reads its best-matching
passages, the writer reads it whole (within the mode's budget). The skeptic reads only
the passages the draft cites (:mod:`research_agent.text.cited`), cut from the same text
the writer saw.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

from ..claims.sentences import line_sentences, without_hidden_markers
from ..sources import Source
from ..text.cited import cited_passages
from ..text.passages import estimate_tokens
from ..text.sanitize import sanitize, wrap_data
from .writing.synthesize import source_header, writer_text

__all__ = ["SkepticEvidence", "cited_block", "draft_for_review", "draft_view", "LISTED", "ELIDED"]

LISTED = "(claim {n})"  # a cited sentence the skeptic reads in the claim list, with its passages
ELIDED = "(...)"  # cited sentences the claim check covers elsewhere (a call beside, or the lexical check)
_LEAD = re.compile(r"[ \t]*(?:[-*+]|\d{1,3}[.)])[ \t]+")  # a list item's marker
_WHOLE = frozenset({"executive summary", "summary", "key findings"})  # the answer itself: always read whole

_FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.S)
# Sections the renderer adds to a draft; a writer's heading with these names is renamed
# by the renderer ("... (notes)"), so these lines are always the renderer's own.
_ADDED_SECTION = re.compile(r"^## (?:Adversarial Analysis|Sources)\n.*?(?=^## |\Z)", re.S | re.M)


@dataclass(frozen=True)
class SkepticEvidence:
    """The cited passages in one data block, and a line saying how much of the draft they cover."""

    block: str
    coverage: str


def draft_for_review(markdown: str) -> str:
    """A rendered draft without what the renderer adds around the writer's text: the front
    matter, the (not yet written) Adversarial Analysis and the Sources list (the cited
    passages carry each cited source's title and location)."""
    return _ADDED_SECTION.sub("", _FRONT_MATTER.sub("", markdown, count=1)).strip() + "\n"


def cited_block(
    draft_markdown: str, sources: tuple[Source, ...], *, source_tokens: int, cited_tokens: int
) -> SkepticEvidence:
    """The passages ``draft_markdown`` cites, in one data block, under each cited source's
    numbered line (title and location, as the writer saw them).

    Passages are cut from the text the writer read (``source_tokens`` of each source),
    within ``cited_tokens`` in all, headers included; a source the draft does not cite
    is left out.
    """
    texts = [writer_text(s, token_budget=source_tokens) for s in sources]
    headers = [sanitize(source_header(n, s), single_line=True) for n, s in enumerate(sources, start=1)]
    evidence = cited_passages(
        draft_markdown, texts, token_budget=cited_tokens, header_tokens=[estimate_tokens(h) for h in headers]
    )
    if not evidence.passages:
        return SkepticEvidence("(the draft cites no source)", "the draft cites no source")
    entries = (headers[n - 1] + "\n" + "\n\n".join(passages) for n, passages in evidence.passages.items())
    block = wrap_data("cited passages", "\n\n".join(entries))
    if evidence.shown == evidence.claims:
        coverage = f"the passage behind each of the draft's {evidence.claims} citations"
    else:
        coverage = (
            f"the passages behind {evidence.shown} of the draft's {evidence.claims} citations, those least "
            "visibly supported first; the passages behind the others did not fit"
        )
    return SkepticEvidence(block, coverage)


def draft_view(review: str, listed: Collection[int], elided: Collection[int]) -> str:
    """The draft as the skeptic reads it beside the claim list: in the body sections, cited
    sentence ``n`` (numbered as :func:`research_agent.claims.sentences.text_sentences` numbers
    them) is :data:`LISTED` where it is in ``listed`` (the list shows it with its passages), and in
    the body sections a run of those in ``elided`` is one :data:`ELIDED` (paragraphs of nothing else,
    one after another, one too); the headings and every other sentence are read whole, and so are
    the summary and the key findings (the answer itself) but for the listed sentences."""
    if not listed and not elided:
        return review
    out: list[str] = []
    number, whole = 0, True
    for line in without_hidden_markers(review).splitlines():
        if line.startswith("# "):  # the report's title: the question, read above
            continue
        if line.lstrip().startswith("#"):
            whole = line.strip("# \t").lower() in _WHOLE
            out.append(line)
            continue
        lead = _LEAD.match(line)
        pieces: list[str] = []
        at = 0
        for sentence in line_sentences(line):
            number += 1
            shown = LISTED.format(n=number) if number in listed else ELIDED if number in elided and not whole else None
            if shown is None:
                continue
            if shown == ELIDED and pieces and pieces[-1] == ELIDED and not line[at : sentence.start].strip():
                at = sentence.start + len(line[sentence.start : sentence.end].rstrip())
                continue
            start = max(sentence.start, lead.end() if lead and at == 0 else 0)  # a list item keeps its marker
            pieces += [line[at:start], shown]
            at = sentence.start + len(line[sentence.start : sentence.end].rstrip())
        out.append("".join([*pieces, line[at:]]))
    return "\n".join(_merged(out))


def _merged(lines: list[str]) -> list[str]:
    """``lines`` with each paragraph that is one :data:`ELIDED` and follows another such (blank
    lines between) left out, with the blank lines before it."""
    kept: list[str] = []
    for line in lines:
        if _LEAD.sub("", line).strip() == ELIDED:
            back = len(kept)
            while back and not kept[back - 1].strip():
                back -= 1
            if back and _LEAD.sub("", kept[back - 1]).strip() == ELIDED:
                del kept[back:]
                continue
        kept.append(line)
    return kept
