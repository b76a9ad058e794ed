"""What the skeptic reads: the draft as the writer wrote it, and the passages it cites.

Each source's text reaches the model twice in a run: relevance reads its best-matching
passages, the writer reads it whole (within the mode's budget). The skeptic reads only
the passages the draft cites (:mod:`research_agent.text.cited`), cut from the same text
the writer saw.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..sources import Source
from ..text.cited import cited_passages
from ..text.passages import estimate_tokens
from ..text.sanitize import sanitize, wrap_data
from .writing.synthesize import source_header, writer_text

__all__ = ["SkepticEvidence", "cited_block", "draft_for_review"]

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
