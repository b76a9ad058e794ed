"""Asking the writer: a markdown answer, streamed where the model can, kept when it is cut.

:func:`ask_writer` sends one plain-text request through the model's
:meth:`~research_agent.llm.protocol.ChatModel.stream` (token progress when the model
streams; a model that cannot answers whole, without it) and reads the
answer into a :class:`~research_agent.stages.writing.draft_text.ReportDraft`, within the limits of
its length (:class:`~research_agent.stages.writing.draft_text.DraftBound`: a stream that passes them is
closed there). An answer cut at the token limit, stalled or broken off keeps its complete
paragraphs and says why in ``ReportDraft.cut``; one cut before its first paragraph ended keeps
its complete sentences, as paragraphs, when nothing better comes.

The writer is asked again only when nothing usable arrived, each time saying why:

* an answer cut at the token limit (or past the length limits) is asked again once, for half
  the words in short paragraphs (never three full-length attempts at one limit); cut again,
  the run keeps what there is;
* a stall (or no first token in time) once more as it was (a second is the stage's timeout);
* anything else (empty, JSON, no paragraph) up to :data:`~research_agent.llm.STRUCTURED_ATTEMPTS`
  answers in all.

Every request asked again is marked ``retry`` (the run record counts it).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, replace

from ... import prompts
from ...errors import InvalidModelOutput, LLMTimeout
from ...llm import (
    STRUCTURED_ATTEMPTS,
    ChatModel,
    ChatRequest,
    ChatResponse,
    TokenCallback,
)
from ...llm.client.retry import TIMEOUT_RETRIES
from ...llm.client.streaming import CUT_REASONS, NO_FIRST_TOKEN, STALLED
from ...llm.protocol import BOUNDED, StopStream
from ...text.controls import without_controls
from .draft_text import (
    MIN_PARAGRAPH_WORDS,
    DraftBound,
    DraftLimits,
    ReportDraft,
    complete_part,
    complete_sentences,
    read_draft,
    usable,
)

__all__ = ["ask_writer", "kept_part", "DEFAULT_TARGET_WORDS"]

log = logging.getLogger(__name__)

DEFAULT_TARGET_WORDS = 1200
_SHORTENED = ("length", BOUNDED)  # cut for its length: asked again, shorter


@dataclass(frozen=True)
class _Read:
    """One answer read: the draft of its complete paragraphs (None when it has none), the draft of
    its complete sentences when that is all it has (None otherwise), and why it was cut ("")."""

    whole: ReportDraft | None
    sentences: ReportDraft | None
    cut: str

    @property
    def best(self) -> ReportDraft | None:
        return self.whole or self.sentences


async def ask_writer(
    model: ChatModel,
    request: ChatRequest,
    *,
    target_words: int = DEFAULT_TARGET_WORDS,
    on_tokens: TokenCallback | None = None,
    idle: float | None = None,
    keep_cut: bool = True,
    notify: Callable[[str], None] | None = None,
) -> ReportDraft:
    """The writer's usable draft for ``request`` (a plain-text request for about ``target_words``).

    ``keep_cut`` False (revise) asks a usable answer cut for its length again, shorter, once;
    ``notify`` hears when that retry starts and how many tokens the cut answer had (the
    progress line's token count starts again from 0).
    Raises LLMTimeout after a second stall with nothing usable (``idle``: the idle limit, for the
    message), InvalidModelOutput when no answer held a usable paragraph or sentence, and whatever
    the model raised.
    """
    limits = DraftLimits.for_target(target_words)
    kept: ReportDraft | None = None
    stalls, shortened, reason, base, asked = 0, False, "", request, request
    heard = _Heard(on_tokens)
    for attempt in range(1, STRUCTURED_ATTEMPTS + 1):
        response = await _answer(model, asked, heard, limits)
        read = _read(response.text, response.finish_reason if response.finish_reason in CUT_REASONS else "", limits)
        if read.whole is not None and (not read.cut or keep_cut or shortened or read.cut not in _SHORTENED):
            return read.whole
        kept = _better(kept, read.best)
        if read.cut in _SHORTENED:
            if shortened:
                break  # cut again, shorter: what there is
            shortened, base = True, _shorter(request, target_words)
            log.info("stage %s: answer %d was cut (%s); asking once more for a shorter one", request.stage, attempt,
                     read.cut)  # fmt: skip
            if notify is not None:
                notify(f"the {request.stage} answer was cut at its length limit after {heard.tokens} tokens; asking "
                       f"once more for a shorter one (about {_shorter_words(target_words)} words)")  # fmt: skip
            asked = base
            continue
        if read.cut in (STALLED, NO_FIRST_TOKEN):
            stalls += 1
            if stalls > TIMEOUT_RETRIES:
                if kept is not None:
                    return kept
                raise LLMTimeout(_stalled(request, response, idle, attempt))
        reason = _why_unusable(response, read.cut)
        log.info("stage %s: unusable answer %d (%s)", request.stage, attempt, reason)
        asked = replace(base, user=f"{base.user}\n\n{prompts.fragment('writer_retry', reason=reason)}", retry=True)
    if kept is not None:
        return kept
    raise InvalidModelOutput(
        f"the {request.stage} stage got invalid output from model {response.model or 'unknown'} "
        f"after {attempt} attempts: {reason or _why_unusable(response, read.cut)}",
        stage=request.stage,
        model=response.model,
    )


class _Heard:
    """The tokens of the answer in progress, as the stream counts them, passed on to ``on_tokens``."""

    def __init__(self, on_tokens: TokenCallback | None) -> None:
        self.on_tokens = on_tokens
        self.tokens = 0

    def __call__(self, tokens: int, piece: str) -> None:
        self.tokens = tokens
        if self.on_tokens is not None:
            self.on_tokens(tokens, piece)


async def _answer(
    model: ChatModel, request: ChatRequest, on_tokens: TokenCallback | None, limits: DraftLimits
) -> ChatResponse:
    """One answer, its stream closed once it passes ``limits``."""
    bound = DraftBound(limits)
    heard: list[str] = []

    def listen(tokens: int, piece: str) -> None:
        nonlocal bound
        if on_tokens is not None:
            on_tokens(tokens, piece)
        if tokens == 0:  # a request was sent (again): a new answer
            bound = DraftBound(limits)
            heard.clear()
            return
        heard.append(piece)
        if bound.feed(piece):
            raise StopStream

    try:
        return await model.stream(request, listen)
    except StopStream:  # a model that let it escape: what it had sent up to the bound
        return ChatResponse(data=None, text="".join(heard), model="", finish_reason=BOUNDED)


def kept_part(text: str, cut: str, target_words: int) -> ReportDraft | None:
    """The draft an answer cut short (``cut``: why) keeps, within the limits of a report of about
    ``target_words``: its complete paragraphs, else its complete sentences; None when it has neither."""
    return _read(text, cut, DraftLimits.for_target(target_words)).best


def _read(text: str, cut: str, limits: DraftLimits) -> _Read:
    """An answer's ``text`` (``cut``: why it was cut short, "" for a whole answer) read within
    ``limits``: its complete paragraphs, else its complete sentences."""
    text = without_controls(text)
    bound = DraftBound(limits)
    if bound.feed(text) and bound.cut_at is not None:
        text, cut = text[: bound.cut_at], BOUNDED
        body = text if bound.at_block else complete_part(text)
    else:
        body = complete_part(text) if cut else text
    if _is_json(text):
        return _Read(None, None, cut)
    whole = read_draft(body, cut=cut)
    if usable(whole):
        return _Read(whole, None, cut)
    sentences = read_draft(complete_sentences(text), cut=cut) if cut else None
    return _Read(None, sentences if sentences is not None and usable(sentences) else None, cut)


def _better(kept: ReportDraft | None, found: ReportDraft | None) -> ReportDraft | None:
    """The longer of two fallback drafts."""
    if found is None:
        return kept
    if kept is None or found.word_count > kept.word_count:
        return found
    return kept


def _shorter_words(target_words: int) -> int:
    return max(100, target_words // 2)


def _shorter(request: ChatRequest, target_words: int) -> ChatRequest:
    """``request`` asked again after a cut: half the words, in short paragraphs."""
    note = prompts.fragment("writer_shorter", words=_shorter_words(target_words))
    return replace(request, user=f"{request.user}\n\n{note}", retry=True)


def _stalled(request: ChatRequest, response: ChatResponse, idle: float | None, attempts: int) -> str:
    if response.finish_reason == NO_FIRST_TOKEN:
        return (f"model call for stage {request.stage} timed out: no first token in the time allowed to read the "
                f"prompt ({attempts} attempts; a slow server: lower --llm-prompt-rate)")  # fmt: skip
    limit = f"{idle:g}s" if idle is not None else "the idle limit"
    return f"model call for stage {request.stage} timed out: no token for {limit} before a usable paragraph ({attempts} attempts)"


def _is_json(text: str) -> bool:
    """A JSON object or array instead of the markdown report asked for (a model stuck in JSON mode)."""
    stripped = text.strip()
    if not stripped.startswith(("{", "[")):
        return False
    try:
        return isinstance(json.loads(stripped), dict | list)
    except ValueError:
        return False


def _why_unusable(response: ChatResponse, cut: str) -> str:
    if _is_json(response.text):
        return "the answer is JSON, not the markdown report asked for"
    if cut == "length":
        return "the answer was cut off at the token limit before its first complete sentence"
    if cut:
        return f"the answer broke off ({cut}) before its first complete sentence"
    if not response.text.strip():
        return "the answer was empty"
    return f"no paragraph of at least {MIN_PARAGRAPH_WORDS} words"
