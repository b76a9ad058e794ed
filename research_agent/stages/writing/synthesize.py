"""Write the report draft from the kept sources, and revise it after review.

The writer answers in markdown (:mod:`.draft_text` reads it), streamed where the model
can (:mod:`.writer`): ``on_tokens`` hears the running token count for the progress line.

Both prompts are fitted to the model's context window (:func:`research_agent.llm.budget.fit`):
the sources' passages are cut first, then (revise) the review feedback, then the answer's
length. A server that still refuses the prompt for its size is asked once more, smaller (by
the numbers it gave), never the same prompt twice; ``notify`` hears what happened.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from ... import prompts
from ...errors import ContextExceeded
from ...llm import ChatModel, ChatRequest, TokenCallback
from ...llm.budget import ContextBudget, Trim, fit
from ...sources import Source
from ...text.passages import estimate_tokens
from ...text.sanitize import sanitize, wrap_data
from .._fallback import Notify, or_fallback
from .draft_text import CUT_NOTES, ReportDraft, draft_markdown
from .writer import ask_writer

FEEDBACK_CHARS = 12000  # the review feedback revise is shown, at most
_MIN_PASSAGE_TOKENS = 60  # what a source keeps when the window is small: a sentence or two

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
    return "- Use 2-5 body sections with informative headings.\n"


def _draft_prompt(
    query: str, sources: tuple[Source, ...], *, target: int, short: bool, context_block: str, passages: int
) -> prompts.Prompt:
    """The writer's prompt: its rules, the question and the sources (revise adds its task after them)."""
    return prompts.render(
        "draft", query=query, target_words=target, shape=_shape(short, target),
        context=f"\n{context_block}\n" if context_block else "",
        sources=sources_block(sources, token_budget=passages),
    )  # fmt: skip


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
    notify: Notify | None = None,
) -> ReportDraft:
    """Write the first draft; sources are cited by their position (1-based), plain mentions
    ("source 2") read as citations (:meth:`ReportDraft.citing`). A draft cut short keeps its
    complete paragraphs (``cut`` says why); only no usable paragraph fails."""
    target = target_words // 2 if short else target_words

    def build(trim: Trim) -> ChatRequest:
        prompt = _draft_prompt(query, sources, target=target, short=short, context_block=context_block,
                               passages=trim.passages)  # fmt: skip
        return _request("draft", prompt, temperature=0.3, max_tokens=trim.answer)

    start = Trim(source_tokens, 0, max(1500, int(target * 2.2)))
    floor = Trim(min(source_tokens, _MIN_PASSAGE_TOKENS), 0, min(start.answer, 800))
    draft = await _within_window(model, build, start, floor, notify,
                                 lambda request: ask_writer(model, request, target_words=target, on_tokens=on_tokens,
                                                            idle=idle))  # fmt: skip
    return draft.citing(len(sources))


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
    short: bool = False,
    context_block: str = "",
) -> ReportDraft:
    """Rewrite ``draft`` so that it fixes every issue in ``feedback``: the draft's own prompt
    (``short`` and ``context_block`` as the draft had them), then the task, the draft and the feedback.

    When no usable revision comes back, or the revision was cut short (``on_cut`` hears
    it), ``draft`` itself is returned (the same object: callers can tell) and ``notify`` is told.
    A revision cut for its length is asked once more, shorter, first (``notify`` hears it start).
    """
    current = draft_markdown(draft)
    target_words = target_words // 2 if short else target_words  # as the draft was asked for

    def build(trim: Trim) -> ChatRequest:
        # The draft's prompt, word for word, then the task: a server's prompt cache reuses the sources.
        written = _draft_prompt(query, sources, target=target_words, short=short, context_block=context_block,
                                passages=trim.passages)  # fmt: skip
        task = prompts.fragment(
            "revise_task", target_words=target_words, draft=wrap_data("draft", current),
            feedback=wrap_data("review feedback", sanitize(feedback, max_chars=trim.extra)),
        )  # fmt: skip
        return _request("revise", prompts.Prompt(written.system, f"{written.user}\n{task}"), temperature=0.2,
                        max_tokens=trim.answer)  # fmt: skip

    start = Trim(source_tokens, FEEDBACK_CHARS, max(1500, int(target_words * 2.2), estimate_tokens(current) + 500))
    floor = Trim(min(source_tokens, _MIN_PASSAGE_TOKENS), 2000, min(start.answer, estimate_tokens(current) + 200))
    ask = lambda request: ask_writer(model, request, target_words=target_words, on_tokens=on_tokens,  # noqa: E731
                                     idle=idle, keep_cut=False, notify=notify)  # fmt: skip
    revised = await or_fallback(_within_window(model, build, start, floor, notify, ask), lambda: draft,
                                outcome="the previous draft is kept", notify=notify)  # fmt: skip
    if revised.cut:
        if on_cut is not None:
            on_cut(revised)
        message = f"the revision was cut short ({CUT_NOTES.get(revised.cut, revised.cut)}); the previous draft is kept"
        if notify is not None:
            notify(message)
        return draft
    return revised if revised is draft else revised.citing(len(sources))


async def _within_window(
    model: ChatModel,
    build: Callable[[Trim], ChatRequest],
    start: Trim,
    floor: Trim,
    notify: Notify | None,
    ask: Callable[[ChatRequest], Awaitable[ReportDraft]],
) -> ReportDraft:
    """``ask`` the request ``build`` makes, fitted to the model's window; after a refusal for size,
    once more with a smaller one (by the server's numbers, else half the passages and feedback)."""
    budget = await model.context_budget()
    texts = lambda trim: _texts(build(trim))  # noqa: E731
    trim = fit(texts, start, budget, floor)
    try:
        return await ask(build(trim))
    except ContextExceeded as exc:
        smaller = _smaller(exc, budget, texts, trim, floor)
        if smaller is None:
            raise
        said = f"{exc}: asked once more with the sources' passages cut to {smaller.passages} tokens each"
        if notify is not None:
            notify(said)
        try:
            return await ask(build(smaller))
        except ContextExceeded as again:
            raise ContextExceeded(f"{again}, even with the sources' passages cut to {smaller.passages} tokens each",
                                  window=again.window, prompt_tokens=again.prompt_tokens) from None  # fmt: skip


def _smaller(
    exc: ContextExceeded, budget: ContextBudget | None, texts: Callable[[Trim], tuple[str, ...]], trim: Trim, floor: Trim
) -> Trim | None:
    """A smaller trim than ``trim`` after the refusal ``exc``; None when nothing can shrink."""
    window = exc.window or (budget.window if budget is not None else None)
    if window:
        base = budget if budget is not None else ContextBudget(window, "the server's refusal")
        smaller = fit(texts, trim, base.after_refusal(exc.estimated, exc.prompt_tokens, exc.window), floor)
        if smaller != trim:
            return smaller
    halved = Trim(max(floor.passages, trim.passages // 2), max(floor.extra, trim.extra // 2), trim.answer)
    return halved if halved != trim else None


def _texts(request: ChatRequest) -> tuple[str, ...]:
    return (request.system, request.user)


def _request(stage: str, prompt: prompts.Prompt, *, temperature: float, max_tokens: int) -> ChatRequest:
    """A plain-text request for the writer: the answer is markdown, not JSON."""
    return ChatRequest(stage=stage, system=prompt.system, user=prompt.user, temperature=temperature,
                       max_tokens=max_tokens)  # fmt: skip
