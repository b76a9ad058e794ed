"""Asking the writer: a markdown answer, streamed where the model can, kept when it is cut.

:func:`ask_writer` sends one plain-text request through
:func:`~research_agent.llm.protocol.stream_or_complete` (token progress when the model
streams; a model with only ``complete()`` works the same, without it) and reads the
answer into a :class:`~research_agent.stages.draft_text.ReportDraft`. An answer cut at
the token limit, stalled or broken off keeps its complete paragraphs and says why in
``ReportDraft.cut``. The writer is asked again only when nothing usable arrived: once
after a stall (a second stall is the stage's timeout), and up to
:data:`~research_agent.llm.STRUCTURED_ATTEMPTS` answers in all.
"""

from __future__ import annotations

import json
import logging
from dataclasses import replace

from .. import prompts
from ..errors import InvalidModelOutput, LLMTimeout
from ..llm import STRUCTURED_ATTEMPTS, ChatModel, ChatRequest, ChatResponse, TokenCallback, stream_or_complete
from ..llm.client.retry import TIMEOUT_RETRIES
from ..llm.client.streaming import CUT_REASONS, STALLED
from .draft_text import MIN_PARAGRAPH_WORDS, ReportDraft, complete_part, read_draft, usable

__all__ = ["ask_writer"]

log = logging.getLogger(__name__)


async def ask_writer(
    model: ChatModel, request: ChatRequest, *, on_tokens: TokenCallback | None = None, idle: float | None = None
) -> ReportDraft:
    """The writer's usable draft for ``request`` (a plain-text request).

    Raises LLMTimeout after a second stall with nothing usable (``idle``: the idle limit,
    for the message), InvalidModelOutput when no answer held a usable paragraph, and
    whatever the model raised.
    """
    stalls, reason, asked = 0, "", request
    for attempt in range(1, STRUCTURED_ATTEMPTS + 1):
        response = await stream_or_complete(model, asked, on_tokens)
        cut = response.finish_reason if response.finish_reason in CUT_REASONS else ""
        draft = read_draft(complete_part(response.text) if cut else response.text, cut=cut)
        if usable(draft) and not _is_json(response.text):
            return draft
        if response.finish_reason == STALLED:
            stalls += 1
            if stalls > TIMEOUT_RETRIES:
                limit = f"{idle:g}s" if idle is not None else "the idle limit"
                raise LLMTimeout(f"model call for stage {request.stage} timed out: no token for {limit} "
                                 f"before a usable paragraph ({attempt} attempts)")  # fmt: skip
        reason = _why_unusable(response, cut)
        log.info("stage %s: unusable answer %d (%s)", request.stage, attempt, reason)
        asked = replace(request, user=f"{request.user}\n\n{prompts.fragment('writer_retry', reason=reason)}")
    raise InvalidModelOutput(
        f"the {request.stage} stage got invalid output from model {response.model or 'unknown'} "
        f"after {STRUCTURED_ATTEMPTS} attempts: {reason}",
        stage=request.stage,
        model=response.model,
    )


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
        return "the answer was cut off at the token limit before its first complete paragraph"
    if cut:
        return f"the answer broke off ({cut}) before its first complete paragraph"
    if not response.text.strip():
        return "the answer was empty"
    return f"no paragraph of at least {MIN_PARAGRAPH_WORDS} words"
