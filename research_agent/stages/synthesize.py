"""Write the report draft from the kept sources, and revise it after review."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from .. import prompts
from ..llm import ChatModel, ChatRequest
from ..sources import Source
from ..text.passages import estimate_tokens
from ..text.sanitize import sanitize, wrap_data
from ._fallback import Notify, or_fallback
from ._schema import array, obj, string

# The heading's words are the rest of the line less its closing "#"s and blanks, stripped in code:
# a lazy group followed by "[ \t#]*$" rescans the line's tail at every step.
_HEADING_LINE = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]++(.*)$", re.MULTILINE)

__all__ = [
    "ReportDraft",
    "draft_report",
    "revise_report",
    "sources_block",
    "source_entry",
    "source_header",
    "writer_text",
    "SCHEMA",
]

SCHEMA = obj(
    title=string(200),
    executive_summary=string(3000),
    key_findings=array(string(1000), min_items=1, max_items=10),
    sections=array(obj(heading=string(150), body=string(12000)), min_items=1, max_items=12),
    limitations=array(string(1000), max_items=10),
)


@dataclass(frozen=True)
class ReportDraft:
    """The writer's structured answer; report.py renders it to markdown."""

    title: str
    executive_summary: str
    key_findings: tuple[str, ...]
    sections: tuple[tuple[str, str], ...]
    limitations: tuple[str, ...]

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> ReportDraft:
        def clean(text: Any) -> str:
            # A heading inside a body would split the report's own sections: make it bold text.
            return _HEADING_LINE.sub(lambda m: "**" + m.group(1).rstrip(" \t#").strip() + "**", str(text)).strip()

        return cls(
            title=" ".join(clean(data["title"]).split()) or "Research report",
            executive_summary=clean(data["executive_summary"]),
            key_findings=tuple(clean(f) for f in data["key_findings"] if clean(f)),
            sections=tuple(
                (" ".join(clean(s["heading"]).lstrip("#").split()), clean(s["body"]))
                for s in data["sections"]
                if clean(s["heading"]) or clean(s["body"])
            ),
            limitations=tuple(clean(x) for x in data["limitations"] if clean(x)),
        )

    def as_data(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "executive_summary": self.executive_summary,
            "key_findings": list(self.key_findings),
            "sections": [{"heading": h, "body": b} for h, b in self.sections],
            "limitations": list(self.limitations),
        }

    @property
    def word_count(self) -> int:
        parts = [self.executive_summary, *self.key_findings, *(b for _, b in self.sections)]
        return sum(len(p.split()) for p in parts)


def writer_text(source: Source, *, token_budget: int) -> str:
    """The text of ``source`` exactly as the writer (draft and revise) receives it."""
    return sanitize(source.text, max_chars=token_budget * 4)


def source_header(n: int, source: Source) -> str:
    """Source ``n``'s numbered line: its title, its location, whether only a snippet was read."""
    note = " (search snippet only, page not read)" if source.snippet_only else ""
    title = sanitize(source.title, max_chars=200, single_line=True)
    return f"[{n}] {title} — {source.location}{note}"


def source_entry(n: int, source: Source, text: str) -> str:
    """Source ``n``'s numbered header line and ``text`` wrapped as data."""
    return f"{source_header(n, source)}\n" + wrap_data(f"source {n}", text)


def sources_block(sources: tuple[Source, ...] | list[Source], *, token_budget: int) -> str:
    """Number the sources 1..n and wrap each one's passages as data."""
    entries = (source_entry(n, s, writer_text(s, token_budget=token_budget)) for n, s in enumerate(sources, start=1))
    return "\n\n".join(entries)


def _shape(short: bool, target_words: int) -> str:
    if short:
        return (
            "- The evidence is thin: write a SHORT report (about half the usual length) and say plainly "
            "which parts of the question the sources leave open.\n"
        )
    return f"- Use 2-5 body sections with informative headings; about {target_words} words overall.\n"


async def draft_report(
    model: ChatModel,
    query: str,
    sources: tuple[Source, ...],
    *,
    target_words: int,
    source_tokens: int,
    context_block: str = "",
    short: bool = False,
) -> ReportDraft:
    """Write the first draft; sources are cited by their position (1-based)."""
    target = target_words // 2 if short else target_words
    prompt = prompts.render(
        "draft",
        query=query,
        target_words=target,
        shape=_shape(short, target),
        context=f"\n{context_block}\n" if context_block else "",
        sources=sources_block(sources, token_budget=source_tokens),
    )
    return await _write(model, "draft", prompt, temperature=0.3, max_tokens=max(1500, int(target * 2.2)))


async def revise_report(
    model: ChatModel,
    query: str,
    draft: ReportDraft,
    feedback: str,
    sources: tuple[Source, ...],
    *,
    target_words: int,
    source_tokens: int,
    notify: Notify | None = None,
) -> ReportDraft:
    """Rewrite ``draft`` so that it fixes every issue in ``feedback``.

    When the model's answers cannot be read, ``draft`` itself is returned (the same
    object: callers can tell) and ``notify`` is told.
    """
    draft_json = json.dumps(draft.as_data(), ensure_ascii=False, indent=1)
    prompt = prompts.render(
        "revise",
        query=query,
        target_words=target_words,
        feedback=wrap_data("review feedback", sanitize(feedback, max_chars=12000)),
        draft=wrap_data("draft", draft_json),
        sources=sources_block(sources, token_budget=source_tokens),
    )
    max_tokens = max(1500, int(target_words * 2.2), estimate_tokens(draft_json) + 500)
    return await or_fallback(
        _write(model, "revise", prompt, temperature=0.2, max_tokens=max_tokens),
        lambda: draft,
        outcome="the previous draft is kept",
        notify=notify,
    )


async def _write(
    model: ChatModel, stage: str, prompt: prompts.Prompt, *, temperature: float, max_tokens: int
) -> ReportDraft:
    """Ask the writer for a report in SCHEMA's shape."""
    request = ChatRequest(
        stage=stage,
        system=prompt.system,
        user=prompt.user,
        schema=SCHEMA,
        temperature=temperature,
        max_tokens=max_tokens,
    )
    return ReportDraft.from_data((await model.complete(request)).data)
