"""A client's requests fitted to its models' context windows.

:class:`WindowFit` keeps each model's window (:class:`~.window.Windows`: the server asked once,
else the ``context_tokens`` setting), lowers an answer's ``max_tokens`` to the room its prompt
leaves, and turns a refusal for size into :class:`~research_agent.errors.ContextExceeded` that
says what happened. :meth:`WindowFit.again_smaller` decides whether a refused request can be
asked again smaller (a shorter answer beside the same prompt); a prompt that is itself too
large goes back to the stage, which cuts its sources' passages (:func:`research_agent.llm.budget.fit`).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from typing import Any

from ...errors import ContextExceeded
from ...text.controls import one_line
from ..budget import MARGIN, MIN_ANSWER_TOKENS, TEMPLATE_TOKENS, ContextBudget, prompt_estimate
from ..protocol import ChatRequest
from ..structured import build_messages
from .window import Refusal, Windows, ask_window

__all__ = ["WindowFit", "exceeded_message"]

log = logging.getLogger(__name__)

PROBE_TIMEOUT = 10.0  # seconds for asking a server its window, all places together


def exceeded_message(stage: str, estimated: int, budget: ContextBudget | None, refused: Refusal | None) -> str:
    """What a refusal for size means, in one line."""
    counted = refused.prompt_tokens if refused is not None else None
    size = f"{counted:,} tokens" if counted else f"about {estimated:,} tokens (estimated)"
    window = (refused.window if refused is not None else None) or (budget.window if budget is not None else None)
    room = f"the model's context window of {window:,} tokens" if window else "the model's context window"
    return f"the {stage} prompt ({size}) and its answer do not fit {room}"


class WindowFit:
    """The windows of one client's models, and what they mean for each request."""

    def __init__(self, base_url: str, api_key: str, setting: int | None, http_client: Any, *, ask: bool) -> None:
        """``http_client`` (an ``httpx.AsyncClient``, the model's own) asks the server, when ``ask``."""
        self._base_url = base_url
        self._headers = {"Authorization": f"Bearer {api_key}"}
        self._http = http_client
        self._windows = Windows(setting, self._ask if ask else None)

    async def _ask(self, model: str) -> ContextBudget | None:
        try:
            async with asyncio.timeout(PROBE_TIMEOUT):
                return await ask_window(self._http, self._base_url, model, self._headers, PROBE_TIMEOUT)
        except TimeoutError:
            log.info("model %s: the server did not say its context window within %gs", model, PROBE_TIMEOUT)
            return None

    async def budget(self, model: str) -> ContextBudget | None:
        """The window of ``model`` (the server is asked the first time, when asking is on)."""
        return await self._windows.budget(model)

    def answer_tokens(self, model: str, messages: list[dict[str, str]], wanted: int) -> int:
        """``wanted`` answer tokens, lowered to the room the prompt leaves in the known window (never
        below :data:`MIN_ANSWER_TOKENS`: less than that, and the server may as well say so)."""
        budget = self._windows.known(model)
        if budget is None:
            return wanted
        room = budget.answer_room(prompt_estimate([m["content"] for m in messages]))
        fitted = max(min(wanted, room), min(wanted, MIN_ANSWER_TOKENS))
        if fitted < wanted:
            log.info("model %s: the answer's max_tokens lowered from %d to %d to fit its %d-token window",
                     model, wanted, fitted, budget.window)  # fmt: skip
        return fitted

    def exceeded(self, request: ChatRequest, model: str, refused: Refusal, said: str) -> ContextExceeded:
        """The error for a refusal for size of ``request``."""
        messages = build_messages(request, None)
        estimated = prompt_estimate([m["content"] for m in messages])
        message = exceeded_message(request.stage, estimated, self._windows.known(model), refused)
        log.info("stage %s: %s (the server said: %s)", request.stage, message, one_line(said)[:200])
        sent = self.answer_tokens(model, messages, request.max_tokens) if request.max_tokens else 0
        return ContextExceeded(message, window=refused.window, prompt_tokens=refused.prompt_tokens,
                               estimated=estimated, answer_tokens=sent)  # fmt: skip

    def again_smaller(self, request: ChatRequest, model: str, exc: ContextExceeded) -> ChatRequest:
        """Learn the window from ``exc``; the request asked again with a smaller answer beside the
        same prompt when the server's numbers leave room for one, else raise ``exc`` (the stage
        must shorten the prompt)."""
        budget = self._windows.refused(model, Refusal(exc.window, exc.prompt_tokens), exc.estimated)
        if budget is None or not request.max_tokens:
            raise exc
        counted = exc.prompt_tokens or int(exc.estimated * budget.scale) + TEMPLATE_TOKENS
        room = int(budget.window * (1 - MARGIN)) - counted
        if room < MIN_ANSWER_TOKENS or room >= exc.answer_tokens:
            raise exc
        log.info("stage %s: %s; asking once more for at most %d answer tokens", request.stage, exc, room)
        return replace(request, max_tokens=room)
