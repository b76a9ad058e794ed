"""Write the report draft from the kept sources, and revise it after review.

The writer answers in markdown (:mod:`.draft_text` reads it), streamed where the model
can (:mod:`.writer`): ``on_tokens`` hears the running token count for the progress line.
"""

from __future__ import annotations

from collections.abc import Callable

from .. import prompts
from ..llm import ChatModel, ChatRequest, TokenCallback
from ..sources import Source
from ..text.passages import estimate_tokens
from ..text.sanitize import sanitize, wrap_data
from ._fallback import Notify, or_fallback
from .draft_text import CUT_NOTES, ReportDraft, draft_markdown
from .writer import ask_writer

__all__ = [
    "ReportDraft",
    "draft_report",
    "revise_report",
    "sources_block",
    "source_entry",
    "source_header",
    "writer_text",
]


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
    on_tokens: TokenCallback | None = None,
    idle: float | None = None,
) -> ReportDraft:
    """Write the first draft; sources are cited by their position (1-based). A draft cut
    short keeps its complete paragraphs (``cut`` says why); only no usable paragraph fails."""
    target = target_words // 2 if short else target_words
    prompt = prompts.render(
        "draft",
        query=query,
        target_words=target,
        shape=_shape(short, target),
        context=f"\n{context_block}\n" if context_block else "",
        sources=sources_block(sources, token_budget=source_tokens),
    )
    request = _request("draft", prompt, temperature=0.3, max_tokens=max(1500, int(target * 2.2)))
    return await ask_writer(model, request, on_tokens=on_tokens, idle=idle)


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
    on_tokens: TokenCallback | None = None,
    idle: float | None = None,
    on_cut: Callable[[ReportDraft], None] | None = None,
) -> ReportDraft:
    """Rewrite ``draft`` so that it fixes every issue in ``feedback``.

    When no usable revision comes back, or the revision was cut short (``on_cut`` hears
    it), ``draft`` itself is returned (the same object: callers can tell) and ``notify`` is told.
    """
    current = draft_markdown(draft)
    prompt = prompts.render(
        "revise",
        query=query,
        target_words=target_words,
        feedback=wrap_data("review feedback", sanitize(feedback, max_chars=12000)),
        draft=wrap_data("draft", current),
        sources=sources_block(sources, token_budget=source_tokens),
    )
    max_tokens = max(1500, int(target_words * 2.2), estimate_tokens(current) + 500)
    request = _request("revise", prompt, temperature=0.2, max_tokens=max_tokens)
    revised = await or_fallback(
        ask_writer(model, request, on_tokens=on_tokens, idle=idle),
        lambda: draft,
        outcome="the previous draft is kept",
        notify=notify,
    )
    if revised.cut:
        if on_cut is not None:
            on_cut(revised)
        message = f"the revision was cut short ({CUT_NOTES.get(revised.cut, revised.cut)}); the previous draft is kept"
        if notify is not None:
            notify(message)
        return draft
    return revised


def _request(stage: str, prompt: prompts.Prompt, *, temperature: float, max_tokens: int) -> ChatRequest:
    """A plain-text request for the writer: the answer is markdown, not JSON."""
    return ChatRequest(stage=stage, system=prompt.system, user=prompt.user, temperature=temperature,
                       max_tokens=max_tokens)  # fmt: skip
